#include "trn/isa/instrs/vector_engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <span>
#include <vector>

#include "vector_common.h"
#include "trn/isa/alu.h"
#include "trn/isa/verifier.h"

namespace trn::isa {

using vector_detail::applyStage;
using vector_detail::elementPattern;
using vector_detail::perPartitionValues;
using vector_detail::requireArithmetic;
using vector_detail::requireInteger;
using vector_detail::requireNotBothPsum;

namespace {

/// The little-endian bytes of `bits` truncated to `bytes` bytes.
void storeLowBytes(std::uint32_t bits, int bytes, std::byte* out) {
  for (int b = 0; b < bytes; ++b) {
    out[b] = static_cast<std::byte>((bits >> (8 * b)) & 0xffU);
  }
}

}  // namespace

Status TensorTensor::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(requireSameShape("data0", data0, "data1", data1));
  TRN_RETURN_IF_ERROR(requireSameShape("dst", dst, "data0", data0));
  if (data0.memory == Memory::kPsum && data1.memory == Memory::kPsum) {
    return failedPrecondition("operands 'data0' and 'data1' are both in PSUM; at most one input "
                              "of tensor_tensor may be");
  }
  for (const auto& [name, ap] : {std::pair{"dst", &dst}, {"data0", &data0}, {"data1", &data1}}) {
    TRN_RETURN_IF_ERROR(requireComputeTileSize(name, *ap, ctx.limits));
    if (isBitwise(op)) {
      TRN_RETURN_IF_ERROR(requireInteger(name, *ap));
    }
  }
  return {};
}

Status TensorTensor::execute(ExecContext& ctx) const {
  const auto count = static_cast<std::size_t>(dst.elementCount());
  const std::span<float> a = ctx.scratchFloats(0, count);
  const std::span<float> b = ctx.scratchFloats(1, count);
  ctx.readFloats(data0, a);
  ctx.readFloats(data1, b);
  applyAluElementwise(op, a, b);
  ctx.writeFloats(dst, a);
  return {};
}

Status TensorCopy::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(requireSameShape("dst", dst, "src", src));
  TRN_RETURN_IF_ERROR(requireComputeTileSize("dst", dst, ctx.limits));
  return requireComputeTileSize("src", src, ctx.limits);
}

Status TensorCopy::execute(ExecContext& ctx) const {
  copyElements(ctx, dst, src);
  return {};
}

Status Memset::verify(const VerifyContext& ctx) const {
  return requireComputeTileSize("dst", dst, ctx.limits);
}

Status Memset::execute(ExecContext& ctx) const {
  const std::vector<float> values(static_cast<std::size_t>(dst.elementCount()), value);
  ctx.writeFloats(dst, values);
  return {};
}

Status TensorScalar::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(requireSameShape("dst", dst, "data", data));
  TRN_RETURN_IF_ERROR(requirePerPartitionScalar("operand0", operand0, data));
  TRN_RETURN_IF_ERROR(requirePerPartitionScalar("operand1", operand1, data));
  TRN_RETURN_IF_ERROR(requireComputeTileSize("dst", dst, ctx.limits));
  TRN_RETURN_IF_ERROR(requireComputeTileSize("data", data, ctx.limits));
  const bool bitwise0 = isBitwise(op0);
  const bool bitwise1 = isBitwise(op1);
  if (op0 != AluOp::kBypass && op1 != AluOp::kBypass && bitwise0 != bitwise1) {
    return failedPrecondition(fmt::format("operands 'op0' ({}) and 'op1' ({}) mix a bitwise and "
                                          "an arithmetic operator; both must be of one kind",
                                          enumName(op0), enumName(op1)));
  }
  if (bitwise0 || bitwise1) {
    if (ctx.engine != Engine::kDve) {
      return failedPrecondition(fmt::format("operand '{}': bitwise operator {} runs only on the "
                                            "vector engine (dve), not {}",
                                            bitwise0 ? "op0" : "op1",
                                            enumName(bitwise0 ? op0 : op1),
                                            engineName(ctx.engine)));
    }
    TRN_RETURN_IF_ERROR(requireInteger("data", data));
    return requireInteger("dst", dst);
  }
  for (const auto& [name, operand] :
       {std::pair{"operand0", &operand0}, std::pair{"operand1", &operand1}}) {
    if (const auto* ap = std::get_if<AccessPattern>(operand)) {
      TRN_RETURN_IF_ERROR(requireDType(name, *ap, {DType::kFp32}));
    }
  }
  if (ctx.engine == Engine::kAct) {
    const bool supported = (op0 == AluOp::kMultiply && op1 == AluOp::kAdd) ||
                           (op0 == AluOp::kMultiply && op1 == AluOp::kBypass) ||
                           (op0 == AluOp::kAdd && op1 == AluOp::kBypass);
    if (!supported) {
      return failedPrecondition(fmt::format("operands 'op0' ({}) and 'op1' ({}): the scalar "
                                            "engine (act) supports only multiply then add, "
                                            "multiply, or add",
                                            enumName(op0), enumName(op1)));
    }
  }
  return {};
}

Status TensorScalar::execute(ExecContext& ctx) const {
  const auto partitions = static_cast<std::size_t>(data.partitionCount);
  const auto free = static_cast<std::size_t>(data.freeSize());
  const std::span<float> values = ctx.scratchFloats(0, partitions * free);
  ctx.readFloats(data, values);
  const std::vector<float> s0 = perPartitionValues(ctx, operand0, data.partitionCount);
  const std::vector<float> s1 = perPartitionValues(ctx, operand1, data.partitionCount);
  // Stage by stage over each partition's row: element-wise, so the same results as one element
  // at a time, and each stage dispatches once per row (bypass leaves the row as it is).
  for (std::size_t p = 0; p < partitions; ++p) {
    const std::span<float> row(values.data() + p * free, free);
    if (op0 != AluOp::kBypass) {
      applyAluWithScalar(op0, row, s0[p], reverse0);
    }
    if (op1 != AluOp::kBypass) {
      applyAluWithScalar(op1, row, s1[p], reverse1);
    }
  }
  ctx.writeFloats(dst, values);
  return {};
}

Status ScalarTensorTensor::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(requireSameShape("dst", dst, "data", data));
  TRN_RETURN_IF_ERROR(requireSameShape("operand1", operand1, "data", data));
  TRN_RETURN_IF_ERROR(requirePerPartitionScalar("operand0", operand0, data));
  TRN_RETURN_IF_ERROR(requireArithmetic("op0", op0));
  TRN_RETURN_IF_ERROR(requireArithmetic("op1", op1));
  TRN_RETURN_IF_ERROR(requireNotBothPsum("data", data, "operand1", operand1));
  for (const auto& [name, ap] :
       {std::pair{"dst", &dst}, {"data", &data}, {"operand1", &operand1}}) {
    TRN_RETURN_IF_ERROR(requireComputeTileSize(name, *ap, ctx.limits));
  }
  return {};
}

Status ScalarTensorTensor::execute(ExecContext& ctx) const {
  const auto partitions = static_cast<std::size_t>(data.partitionCount);
  const auto free = static_cast<std::size_t>(data.freeSize());
  std::vector<float> values(partitions * free);
  std::vector<float> others(partitions * free);
  ctx.readFloats(data, values);
  ctx.readFloats(operand1, others);
  const std::vector<float> s0 = perPartitionValues(ctx, operand0, data.partitionCount);
  for (std::size_t p = 0; p < partitions; ++p) {
    for (std::size_t f = 0; f < free; ++f) {
      float& x = values[p * free + f];
      x = applyStage(op1, applyStage(op0, x, s0[p], reverse0), others[p * free + f], reverse1);
    }
  }
  ctx.writeFloats(dst, values);
  return {};
}

Status TensorCopyPredicated::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(requireSameShape("predicate", predicate, "dst", dst));
  TRN_RETURN_IF_ERROR(
      requireDType("predicate", predicate, {DType::kUint8, DType::kUint16, DType::kUint32}));
  TRN_RETURN_IF_ERROR(requireComputeTileSize("dst", dst, ctx.limits));
  TRN_RETURN_IF_ERROR(requireComputeTileSize("predicate", predicate, ctx.limits));
  if (const auto* source = std::get_if<AccessPattern>(&src)) {
    TRN_RETURN_IF_ERROR(requireSameShape("src", *source, "dst", dst));
    if (source->dtype != dst.dtype) {
      return failedPrecondition(fmt::format("operands 'src' ({}) and 'dst' ({}) must have the "
                                            "same dtype",
                                            dtypeName(source->dtype), dtypeName(dst.dtype)));
    }
    TRN_RETURN_IF_ERROR(requireNotBothPsum("src", *source, "predicate", predicate));
    TRN_RETURN_IF_ERROR(requireComputeTileSize("src", *source, ctx.limits));
  }
  return {};
}

Status TensorCopyPredicated::execute(ExecContext& ctx) const {
  const auto count = static_cast<std::size_t>(dst.elementCount());
  const auto elementBytes = static_cast<std::size_t>(byteSize(dst.dtype));
  std::vector<float> mask(count);
  ctx.readFloats(predicate, mask);
  std::vector<std::byte> bytes(count * elementBytes);
  if (const auto* source = std::get_if<AccessPattern>(&src)) {
    ctx.readBytes(*source, bytes);
  } else {
    // An immediate source is a constant of the instruction: cast once, nearest-even.
    const std::uint32_t bits = encodeFloat(std::get<float>(src), dst.dtype);
    for (std::size_t i = 0; i < count; ++i) {
      storeLowBytes(bits, static_cast<int>(elementBytes), bytes.data() + i * elementBytes);
    }
  }
  const auto selected = [&](std::size_t i) { return (mask[i] != 0.0f) != reversePred; };
  std::size_t chosen = 0;
  for (std::size_t i = 0; i < count; ++i) {
    chosen += selected(i) ? 1 : 0;
  }
  if (chosen == count) {
    ctx.writeBytes(dst, bytes);
    return {};
  }
  // Only the selected elements are written: the others keep their bytes (and, in poison mode,
  // their never-written state).
  for (std::size_t i = 0; i < count; ++i) {
    if (selected(i)) {
      ctx.writeBytes(elementPattern(dst, static_cast<std::int64_t>(i)),
                     std::span(bytes).subspan(i * elementBytes, elementBytes));
    }
  }
  return {};
}

Status Reciprocal::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(requireSameShape("dst", dst, "data", data));
  TRN_RETURN_IF_ERROR(requireComputeTileSize("dst", dst, ctx.limits));
  return requireComputeTileSize("data", data, ctx.limits);
}

Status Reciprocal::execute(ExecContext& ctx) const {
  std::vector<float> values(static_cast<std::size_t>(data.elementCount()));
  ctx.readFloats(data, values);
  for (float& x : values) {
    x = 1.0f / x;
  }
  ctx.writeFloats(dst, values);
  return {};
}

Status Dropout::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(requireSameShape("dst", dst, "data", data));
  if (dst.dtype != data.dtype) {
    return failedPrecondition(fmt::format("operands 'dst' ({}) and 'data' ({}) must have the same "
                                          "dtype",
                                          dtypeName(dst.dtype), dtypeName(data.dtype)));
  }
  TRN_RETURN_IF_ERROR(requirePerPartitionScalar("prob", prob, data));
  if (const auto* ap = std::get_if<AccessPattern>(&prob)) {
    if (isInteger(data.dtype)) {
      TRN_RETURN_IF_ERROR(requireDType("prob", *ap, {DType::kFp32}));
    } else {
      TRN_RETURN_IF_ERROR(requireFloat("prob", *ap));
    }
  }
  TRN_RETURN_IF_ERROR(requireComputeTileSize("dst", dst, ctx.limits));
  return requireComputeTileSize("data", data, ctx.limits);
}

Status Dropout::execute(ExecContext& ctx) const {
  const auto partitions = static_cast<std::size_t>(data.partitionCount);
  const auto free = static_cast<std::size_t>(data.freeSize());
  const auto elementBytes = static_cast<std::size_t>(byteSize(data.dtype));
  std::vector<std::byte> bytes(partitions * free * elementBytes);
  ctx.readBytes(data, bytes);
  const std::vector<float> probs = perPartitionValues(ctx, prob, data.partitionCount);
  constexpr double kTwoTo32 = 4294967296.0;
  for (std::size_t p = 0; p < partitions; ++p) {
    const double threshold = static_cast<double>(probs[p]) * kTwoTo32;
    for (std::size_t f = 0; f < free; ++f) {
      if (static_cast<double>(ctx.randomWord()) < threshold) {
        std::fill_n(bytes.begin() + static_cast<std::ptrdiff_t>((p * free + f) * elementBytes),
                    elementBytes, std::byte{0});
      }
    }
  }
  ctx.writeBytes(dst, bytes);
  return {};
}

Status Rng::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(requireDType("dst", dst,
                                   {DType::kInt8, DType::kInt16, DType::kInt32, DType::kUint8,
                                    DType::kUint16, DType::kUint32}));
  return requireComputeTileSize("dst", dst, ctx.limits);
}

Status Rng::execute(ExecContext& ctx) const {
  const auto count = static_cast<std::size_t>(dst.elementCount());
  const int elementBytes = byteSize(dst.dtype);
  std::vector<std::byte> bytes(count * static_cast<std::size_t>(elementBytes));
  for (std::size_t i = 0; i < count; ++i) {
    storeLowBytes(ctx.randomWord(), elementBytes,
                  bytes.data() + i * static_cast<std::size_t>(elementBytes));
  }
  ctx.writeBytes(dst, bytes);
  return {};
}

Status SetRngSeed::verify(const VerifyContext& /*ctx*/) const {
  if (srcSeeds.partitionCount != 1 || srcSeeds.freeSize() != 1) {
    return failedPrecondition(fmt::format("operand 'src_seeds': must be a [1, 1] tensor, not "
                                          "[{}, {}]",
                                          srcSeeds.partitionCount, srcSeeds.freeSize()));
  }
  return requireDType("src_seeds", srcSeeds, {DType::kInt32, DType::kUint32, DType::kFp32});
}

Status SetRngSeed::execute(ExecContext& ctx) const {
  std::array<std::byte, 4> raw{};
  ctx.readBytes(srcSeeds, raw);
  std::uint32_t seed = 0;
  std::memcpy(&seed, raw.data(), raw.size());
  ctx.seedRandom(seed);
  return {};
}

}  // namespace trn::isa
