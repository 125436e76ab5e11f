#include "trn/isa/instrs/gpsimd_engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "trn/base/checked.h"

#include "special_common.h"
#include "trn/isa/alu.h"
#include "trn/isa/verifier.h"

namespace trn::isa {

using special_detail::operandError;
using special_detail::readRaw;
using special_detail::requireSamePartitions;
using special_detail::writeUnsigned;
using special_detail::writeWithPassThrough;

namespace {

constexpr std::int64_t kInt32Min = std::numeric_limits<std::int32_t>::min();
constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();
/// local_gather limits (nki.isa docs).
constexpr std::int64_t kMaxIndicesPerCore = 4096;

Status requireInt32(std::string_view field, std::int64_t value) {
  if (value >= kInt32Min && value <= kInt32Max) {
    return {};
  }
  return operandError(field, fmt::format("{} does not fit the engine's 32-bit integer", value));
}

/// The pattern is well formed, its numbers are int32 and it generates `freeSize` values.
Status verifyAffine(const IndexPattern& pattern, std::int64_t offset, std::int64_t multiplier,
                    const AccessPattern& dst) {
  if (pattern.numDims < 1 || pattern.numDims > kMaxFreeDims) {
    return operandError("pattern", fmt::format("{} dimensions; a pattern has 1 to {}",
                                               pattern.numDims, kMaxFreeDims));
  }
  for (int d = 0; d < pattern.numDims; ++d) {
    const Dim& dim = pattern.dims[static_cast<std::size_t>(d)];
    if (dim.count < 1 || dim.count > kInt32Max) {
      return operandError(
          "pattern", fmt::format("dimension {} has count {}; counts are positive", d, dim.count));
    }
    TRN_RETURN_IF_ERROR(requireInt32("pattern", dim.stride));
  }
  TRN_RETURN_IF_ERROR(requireInt32("offset", offset));
  TRN_RETURN_IF_ERROR(requireInt32("channel_multiplier", multiplier));
  Checked<std::int64_t> size = 1;
  for (int d = 0; d < pattern.numDims; ++d) {
    size *= pattern.dims[static_cast<std::size_t>(d)].count;
  }
  if (!size.valid() || size.value() != dst.freeSize()) {
    return operandError("pattern",
                        fmt::format("generates {} values per partition but dst holds {}",
                                    size.valid() ? fmt::to_string(size.value()) : "more than 2^63",
                                    dst.freeSize()));
  }
  return {};
}

/// The affine values of every element of a [P, pattern.size()] tile in 32-bit two's-complement
/// arithmetic, partition-major.
std::vector<std::int32_t> affineValues(const IndexPattern& pattern, std::int64_t offset,
                                       std::int64_t multiplier, std::int64_t partitions) {
  const std::int64_t free = pattern.size();
  std::vector<std::int32_t> values(static_cast<std::size_t>(partitions * free));
  for (std::int64_t i = 0; i < free; ++i) {
    const std::int64_t base = offset + pattern.valueAt(i);
    for (std::int64_t c = 0; c < partitions; ++c) {
      const auto wrapped = static_cast<std::uint32_t>(base + c * multiplier);
      values[static_cast<std::size_t>(c * free + i)] = static_cast<std::int32_t>(wrapped);
    }
  }
  return values;
}

bool compareWithZero(AluOp op, std::int32_t a) {
  switch (op) {
    case AluOp::kEqual:
      return a == 0;
    case AluOp::kNotEqual:
      return a != 0;
    case AluOp::kGreater:
      return a > 0;
    case AluOp::kGreaterEqual:
      return a >= 0;
    case AluOp::kLess:
      return a < 0;
    case AluOp::kLessEqual:
      return a <= 0;
    default:
      return false;
  }
}

/// Raw bits of element i of `bytes` (elements of `width` bytes), zero-extended.
std::uint32_t rawBits(std::span<const std::byte> bytes, std::size_t i, std::size_t width) {
  std::uint32_t v = 0;
  for (std::size_t b = 0; b < width && b < 4; ++b) {
    v |= static_cast<std::uint32_t>(bytes[i * width + b]) << (8 * b);
  }
  return v;
}

}  // namespace

// ---- iota ----

Status Iota::verify(const VerifyContext& /*ctx*/) const {
  return verifyAffine(pattern, offset, channelMultiplier, dst);
}

Status Iota::execute(ExecContext& ctx) const {
  const std::vector<std::int32_t> values =
      affineValues(pattern, offset, channelMultiplier, dst.partitionCount);
  if (isInteger(dst.dtype)) {
    const DTypeTraits& traits = dtypeTraits(dst.dtype);
    const auto low = static_cast<std::int64_t>(traits.lowest);
    const auto high = static_cast<std::int64_t>(traits.maxFinite);
    std::vector<std::uint64_t> bits(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      bits[i] = static_cast<std::uint64_t>(std::clamp<std::int64_t>(values[i], low, high));
    }
    writeUnsigned(ctx, dst, bits);
    return {};
  }
  std::vector<float> floats(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    floats[i] = static_cast<float>(values[i]);
  }
  ctx.writeFloats(dst, floats);
  return {};
}

// ---- affine_select ----

Status AffineSelect::verify(const VerifyContext& /*ctx*/) const {
  TRN_RETURN_IF_ERROR(verifyAffine(pattern, offset, channelMultiplier, dst));
  TRN_RETURN_IF_ERROR(requireSameShape("dst", dst, "on_true_tile", onTrueTile));
  switch (cmpOp) {
    case AluOp::kEqual:
    case AluOp::kNotEqual:
    case AluOp::kGreater:
    case AluOp::kGreaterEqual:
    case AluOp::kLess:
    case AluOp::kLessEqual:
      return {};
    default:
      return operandError("cmp_op", fmt::format("{} is not a comparison; use equal, not_equal, "
                                                "greater, greater_equal, less or less_equal",
                                                enumName(cmpOp)));
  }
}

Status AffineSelect::execute(ExecContext& ctx) const {
  const std::vector<std::int32_t> affine =
      affineValues(pattern, offset, channelMultiplier, dst.partitionCount);
  std::vector<float> values(affine.size());
  ctx.readFloats(onTrueTile, values);
  const std::vector<std::byte> raw = readRaw(ctx, onTrueTile);
  std::vector<bool> selected(affine.size());
  for (std::size_t i = 0; i < affine.size(); ++i) {
    selected[i] = compareWithZero(cmpOp, affine[i]);
    if (!selected[i]) {
      values[i] = onFalseValue;
    }
  }
  writeWithPassThrough(ctx, dst, values, onTrueTile.dtype, raw, selected);
  return {};
}

// ---- tensor_partition_reduce ----

Status TensorPartitionReduce::verify(const VerifyContext& /*ctx*/) const {
  if (dst.partitionCount != 1) {
    return operandError("dst", fmt::format("covers {} partitions; the reduction across partitions "
                                           "writes one",
                                           dst.partitionCount));
  }
  if (dst.freeSize() != data.freeSize()) {
    return operandError("dst", fmt::format("has {} elements per partition but data has {}",
                                           dst.freeSize(), data.freeSize()));
  }
  const bool bitwise = op == PartitionReduceOp::kBitwiseOr ||
                       op == PartitionReduceOp::kBitwiseAnd || op == PartitionReduceOp::kBitwiseXor;
  if (bitwise) {
    for (const auto& [name, ap] : {std::pair{"data", &data}, {"dst", &dst}}) {
      if (!isInteger(ap->dtype)) {
        return operandError(name, fmt::format("dtype {} is not an integer type; {} acts on integer "
                                              "bit patterns",
                                              dtypeName(ap->dtype), enumName(op)));
      }
    }
  }
  return {};
}

Status TensorPartitionReduce::execute(ExecContext& ctx) const {
  const auto p = static_cast<std::size_t>(data.partitionCount);
  const auto f = static_cast<std::size_t>(data.freeSize());
  if (op == PartitionReduceOp::kBitwiseOr || op == PartitionReduceOp::kBitwiseAnd ||
      op == PartitionReduceOp::kBitwiseXor) {
    const std::vector<std::byte> raw = readRaw(ctx, data);
    const auto width = static_cast<std::size_t>(byteSize(data.dtype));
    std::vector<std::uint64_t> out(f);
    for (std::size_t j = 0; j < f; ++j) {
      std::uint32_t acc = rawBits(raw, j, width);
      for (std::size_t row = 1; row < p; ++row) {
        const std::uint32_t v = rawBits(raw, row * f + j, width);
        acc = op == PartitionReduceOp::kBitwiseOr    ? acc | v
              : op == PartitionReduceOp::kBitwiseAnd ? acc & v
                                                     : acc ^ v;
      }
      out[j] = acc;
    }
    writeUnsigned(ctx, dst, out);
    return {};
  }
  std::vector<float> x(p * f);
  ctx.readFloats(data, x);
  std::vector<float> out(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(f));
  for (std::size_t row = 1; row < p; ++row) {
    for (std::size_t j = 0; j < f; ++j) {
      const float v = x[row * f + j];
      out[j] = op == PartitionReduceOp::kMax ? applyAlu(AluOp::kMax, out[j], v) : out[j] + v;
    }
  }
  if (op == PartitionReduceOp::kMean) {
    for (float& v : out) {
      v /= static_cast<float>(p);
    }
  }
  ctx.writeFloats(dst, out);
  return {};
}

// ---- local_gather ----

Status LocalGather::verify(const VerifyContext& /*ctx*/) const {
  TRN_RETURN_IF_ERROR(requireDType("index", index, {DType::kUint16}));
  if (dst.dtype != srcBuffer.dtype) {
    return operandError("dst", fmt::format("dtype {} differs from src_buffer's {}; local_gather "
                                           "does not cast",
                                           dtypeName(dst.dtype), dtypeName(srcBuffer.dtype)));
  }
  if (srcBuffer.partitionCount % kGpSimdCorePartitions != 0 ||
      srcBuffer.partitionStart % kGpSimdCorePartitions != 0) {
    return operandError(
        "src_buffer",
        fmt::format("covers partitions [{}:{}]; local_gather works on whole "
                    "16-partition GpSimd core groups",
                    srcBuffer.partitionStart, srcBuffer.partitionStart + srcBuffer.partitionCount));
  }
  for (const auto& [name, ap] : {std::pair{"index", &index}, {"dst", &dst}}) {
    if (ap->partitionStart != srcBuffer.partitionStart ||
        ap->partitionCount != srcBuffer.partitionCount) {
      return operandError(name,
                          fmt::format("covers partitions [{}:{}] but src_buffer covers "
                                      "[{}:{}]; each core reads and writes its own 16 "
                                      "partitions",
                                      ap->partitionStart, ap->partitionStart + ap->partitionCount,
                                      srcBuffer.partitionStart,
                                      srcBuffer.partitionStart + srcBuffer.partitionCount));
    }
  }
  const std::int64_t e = numElemPerIdx;
  if (e != 1 && e != 2 && e != 4 && e != 8 && e != 16 && e != 32) {
    return operandError("num_elem_per_idx", fmt::format("{} is not one of 1, 2, 4, 8, 16, 32", e));
  }
  const std::int64_t available = kGpSimdCorePartitions * index.freeSize();
  const std::int64_t valid = numValidIndices == 0 ? available : numValidIndices;
  if (valid < 1 || valid > available || valid > kMaxIndicesPerCore) {
    return operandError("num_valid_indices",
                        fmt::format("{} indices per core; index provides {} (16 partitions x {}) "
                                    "and a core gathers at most {}",
                                    valid, available, index.freeSize(), kMaxIndicesPerCore));
  }
  if (dst.freeSize() != valid * e) {
    return operandError("dst", fmt::format("has {} elements per partition; {} indices x {} "
                                           "elements gather {}",
                                           dst.freeSize(), valid, e, valid * e));
  }
  return {};
}

Status LocalGather::execute(ExecContext& ctx) const {
  const auto partitions = static_cast<std::size_t>(srcBuffer.partitionCount);
  const auto srcFree = static_cast<std::size_t>(srcBuffer.freeSize());
  const auto k = static_cast<std::size_t>(index.freeSize());
  const auto e = static_cast<std::size_t>(numElemPerIdx);
  const auto group = static_cast<std::size_t>(kGpSimdCorePartitions);
  const std::size_t valid =
      numValidIndices == 0 ? group * k : static_cast<std::size_t>(numValidIndices);
  const auto width = static_cast<std::size_t>(byteSize(srcBuffer.dtype));
  const std::vector<std::byte> src = readRaw(ctx, srcBuffer);
  const std::vector<std::byte> idx = readRaw(ctx, index);
  std::vector<std::byte> out(partitions * valid * e * width);
  std::vector<std::size_t> offsets(valid);
  for (std::size_t g = 0; g < partitions / group; ++g) {
    for (std::size_t j = 0; j < valid; ++j) {
      const std::size_t row = g * group + j % group;
      offsets[j] = rawBits(idx, row * k + j / group, 2);
      if (offsets[j] + e > srcFree) {
        return outOfRange(fmt::format(
            "operand 'index': offset {} (index {} of the core at partitions [{}:{}]) plus {} "
            "elements runs past src_buffer's {} elements per partition",
            offsets[j], j, srcBuffer.partitionStart + static_cast<std::int64_t>(g * group),
            srcBuffer.partitionStart + static_cast<std::int64_t>((g + 1) * group), e, srcFree));
      }
    }
    for (std::size_t q = 0; q < group; ++q) {
      const std::size_t p = g * group + q;
      for (std::size_t j = 0; j < valid; ++j) {
        std::memcpy(&out[(p * valid * e + j * e) * width], &src[(p * srcFree + offsets[j]) * width],
                    e * width);
      }
    }
  }
  ctx.writeBytes(dst, out);
  return {};
}

// ---- nc_n_gather ----

Status NcNGather::verify(const VerifyContext& /*ctx*/) const {
  TRN_RETURN_IF_ERROR(requireDType("indices", indices, {DType::kUint32}));
  if (dst.dtype != data.dtype) {
    return operandError("dst", fmt::format("dtype {} differs from data's {}; nc_n_gather does "
                                           "not cast",
                                           dtypeName(dst.dtype), dtypeName(data.dtype)));
  }
  TRN_RETURN_IF_ERROR(requireSamePartitions("data", data, "indices", indices));
  TRN_RETURN_IF_ERROR(requireSameShape("dst", dst, "indices", indices));
  return {};
}

Status NcNGather::execute(ExecContext& ctx) const {
  const auto p = static_cast<std::size_t>(data.partitionCount);
  const auto f = static_cast<std::size_t>(data.freeSize());
  const auto n = static_cast<std::size_t>(indices.freeSize());
  const auto width = static_cast<std::size_t>(byteSize(data.dtype));
  const std::vector<std::byte> src = readRaw(ctx, data);
  const std::vector<std::byte> idx = readRaw(ctx, indices);
  std::vector<std::byte> out(p * n * width);
  for (std::size_t row = 0; row < p; ++row) {
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t at = rawBits(idx, row * n + i, 4);
      if (at >= f) {
        return outOfRange(
            fmt::format("operand 'indices': index {} (partition {}, entry {}) is "
                        "outside data's {} elements per partition",
                        at, indices.partitionStart + static_cast<std::int64_t>(row), i, f));
      }
      std::memcpy(&out[(row * n + i) * width], &src[(row * f + at) * width], width);
    }
  }
  ctx.writeBytes(dst, out);
  return {};
}

}  // namespace trn::isa
