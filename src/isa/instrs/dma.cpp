#include "trn/isa/instrs/dma.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <span>
#include <vector>

#include "trn/isa/verifier.h"

namespace trn::isa {
namespace {

Status operandError(std::string_view operand, std::string_view what) {
  return failedPrecondition(fmt::format("operand '{}': {}", operand, what));
}

Status checkQueue(std::int64_t queue, const CoreLimits& limits) {
  if (queue < 0 || queue >= limits.dmaQueues) {
    return operandError("queue", fmt::format("DMA queue {} does not exist (0..{})", queue,
                                             limits.dmaQueues - 1));
  }
  return {};
}

Status checkSameCount(std::string_view nameA, const AccessPattern& a, std::string_view nameB,
                      const AccessPattern& b) {
  if (a.elementCount() == b.elementCount()) {
    return {};
  }
  return failedPrecondition(fmt::format("operands '{}' ({} elements) and '{}' ({} elements) "
                                        "differ in element count; a DMA moves equal counts",
                                        nameA, a.elementCount(), nameB, b.elementCount()));
}

/// Rows [first, first + count) of `ap` as a pattern of their own: partitions on chip, rows
/// (partitionStride elements apart) in HBM.
AccessPattern rowsOf(const AccessPattern& ap, std::int64_t first, std::int64_t count) {
  AccessPattern rows = ap;
  rows.partitionCount = count;
  if (ap.memory == Memory::kHbm) {
    rows.offset += first * ap.partitionStride * byteSize(ap.dtype);
  } else {
    rows.partitionStart += first;
  }
  return rows;
}

/// The parts of an indirect copy: the indexed HBM table, the index and the other operand.
struct Indirect {
  bool gather;
  const AccessPattern& index;
  const AccessPattern& table;
  const AccessPattern& other;
  std::string_view indexName;
  std::string_view tableName;
  std::string_view otherName;
};

Indirect indirectParts(const DmaCopy& copy) {
  if (copy.srcIndex) {
    return {true, *copy.srcIndex, copy.src, copy.dst, "src_index", "src", "dst"};
  }
  return {false, *copy.dstIndex, copy.dst, copy.src, "dst_index", "dst", "src"};
}

/// The row indices held by a [P, 1] int32 or uint32 tensor, exactly.
std::vector<std::int64_t> readIndices(ExecContext& ctx, const AccessPattern& index) {
  const auto count = static_cast<std::size_t>(index.partitionCount);
  std::vector<std::byte> raw(count * 4);
  ctx.readBytes(index, raw);
  std::vector<std::int64_t> values(count);
  for (std::size_t i = 0; i < count; ++i) {
    std::uint32_t word = 0;
    std::memcpy(&word, raw.data() + i * 4, 4);
    values[i] = index.dtype == DType::kInt32
                    ? std::int64_t{static_cast<std::int32_t>(word)}
                    : std::int64_t{word};
  }
  return values;
}

Status executeIndirect(const DmaCopy& copy, ExecContext& ctx) {
  const Indirect parts = indirectParts(copy);
  const std::vector<std::int64_t> indices = readIndices(ctx, parts.index);
  const std::int64_t tableRows = parts.table.partitionCount;
  const auto rows = indices.size();
  std::vector<bool> valid(rows, true);
  for (std::size_t r = 0; r < rows; ++r) {
    if (indices[r] >= 0 && indices[r] < tableRows) {
      continue;
    }
    if (copy.oobMode == DmaOobMode::kError) {
      return outOfRange(fmt::format("operand '{}': row index {} (entry {}) is outside the {} "
                                    "rows of '{}' (valid 0..{}); oob_mode=error",
                                    parts.indexName, indices[r], r, tableRows, parts.tableName,
                                    tableRows - 1));
    }
    valid[r] = false;
  }
  // Row r of the other operand pairs with table row indices[r].
  auto srcRow = [&](std::size_t r) {
    return parts.gather ? rowsOf(copy.src, indices[r], 1)
                        : rowsOf(copy.src, static_cast<std::int64_t>(r), 1);
  };
  auto dstRow = [&](std::size_t r) {
    return parts.gather ? rowsOf(copy.dst, static_cast<std::int64_t>(r), 1)
                        : rowsOf(copy.dst, indices[r], 1);
  };
  const auto free = static_cast<std::size_t>(parts.table.freeSize());
  if (copy.src.dtype == copy.dst.dtype) {
    std::vector<std::byte> raw(free * static_cast<std::size_t>(byteSize(copy.src.dtype)));
    for (std::size_t r = 0; r < rows; ++r) {
      if (valid[r]) {
        ctx.readBytes(srcRow(r), raw);
        ctx.writeBytes(dstRow(r), raw);
      }
    }
    return {};
  }
  std::vector<float> values(rows * free);
  const std::span<float> all(values);
  for (std::size_t r = 0; r < rows; ++r) {
    if (valid[r]) {
      ctx.readFloats(srcRow(r), all.subspan(r * free, free));
    }
  }
  if (!parts.gather) {
    for (std::size_t r = 0; r < rows; ++r) {
      if (valid[r]) {
        ctx.writeFloats(dstRow(r), all.subspan(r * free, free));
      }
    }
    return {};
  }
  // A gather writes each run of transferred rows with one cast, so a gather without skipped rows
  // rounds exactly like the equivalent plain copy.
  std::size_t r = 0;
  while (r < rows) {
    if (!valid[r]) {
      ++r;
      continue;
    }
    std::size_t end = r;
    while (end < rows && valid[end]) {
      ++end;
    }
    ctx.writeFloats(rowsOf(copy.dst, static_cast<std::int64_t>(r),
                           static_cast<std::int64_t>(end - r)),
                    all.subspan(r * free, (end - r) * free));
    r = end;
  }
  return {};
}

}  // namespace

Status DmaCopy::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(checkQueue(queue, ctx.limits));
  if (dstIndex && srcIndex) {
    return operandError("dst_index", "a DMA copy indexes one side only, but src_index is given "
                                     "too");
  }
  if (!dstIndex && !srcIndex) {
    return checkSameCount("dst", dst, "src", src);
  }
  const Indirect parts = indirectParts(*this);
  TRN_RETURN_IF_ERROR(requireMemory(parts.indexName, parts.index, {Memory::kSbuf}));
  TRN_RETURN_IF_ERROR(requireDType(parts.indexName, parts.index, {DType::kInt32, DType::kUint32}));
  if (parts.index.freeSize() != 1) {
    return operandError(parts.indexName,
                        fmt::format("a row-index operand is [P, 1], not [{}, {}]",
                                    parts.index.partitionCount, parts.index.freeSize()));
  }
  if (parts.table.memory != Memory::kHbm) {
    return operandError(parts.tableName, fmt::format("is in {}; only an HBM operand can be "
                                                     "indexed by {}",
                                                     memoryName(parts.table.memory),
                                                     parts.indexName));
  }
  if (parts.other.partitionCount != parts.index.partitionCount) {
    return operandError(parts.otherName,
                        fmt::format("has {} partitions (or rows) but '{}' holds {} row indices",
                                    parts.other.partitionCount, parts.indexName,
                                    parts.index.partitionCount));
  }
  if (parts.other.freeSize() != parts.table.freeSize()) {
    return operandError(parts.otherName,
                        fmt::format("has {} elements per partition (or row) but a row of '{}' "
                                    "has {}",
                                    parts.other.freeSize(), parts.tableName,
                                    parts.table.freeSize()));
  }
  return {};
}

Status DmaCopy::execute(ExecContext& ctx) const {
  if (srcIndex || dstIndex) {
    return executeIndirect(*this, ctx);
  }
  copyElements(ctx, dst, src);
  return {};
}

Status DmaTranspose::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(checkQueue(queue, ctx.limits));
  TRN_RETURN_IF_ERROR(requireMemory("dst", dst, {Memory::kSbuf}));
  TRN_RETURN_IF_ERROR(requireMemory("src", src, {Memory::kHbm, Memory::kSbuf}));
  const std::uint8_t sizes = ctx.limits.dmaTransposeElementBytes;
  if (sizes == 0) {
    return failedPrecondition("this chip has no DMA transpose (spec core.dma.transpose.supported "
                              "is false); transpose on the tensor engine with nc_transpose");
  }
  const std::int64_t elementBytes = byteSize(src.dtype);
  if (elementBytes >= 8 || (sizes & (1u << elementBytes)) == 0) {
    std::vector<int> allowed;
    for (int b = 1; b < 8; ++b) {
      if ((sizes & (1u << b)) != 0) {
        allowed.push_back(b);
      }
    }
    return operandError("src", fmt::format("dtype {} has {}-byte elements; this chip's DMA "
                                           "transposes {}-byte elements",
                                           dtypeName(src.dtype), elementBytes,
                                           fmt::join(allowed, "- or ")));
  }
  if (dst.dtype != src.dtype) {
    return operandError("dst", fmt::format("dtype {} differs from src's {}; a DMA transpose does "
                                           "not cast",
                                           dtypeName(dst.dtype), dtypeName(src.dtype)));
  }
  if (dst.partitionCount != src.freeSize() || dst.freeSize() != src.partitionCount) {
    return operandError("dst", fmt::format("is [{} x {}] but the transpose of src [{} x {}] is "
                                           "[{} x {}]",
                                           dst.partitionCount, dst.freeSize(), src.partitionCount,
                                           src.freeSize(), src.freeSize(), src.partitionCount));
  }
  return {};
}

Status DmaTranspose::execute(ExecContext& ctx) const {
  const auto rows = static_cast<std::size_t>(src.partitionCount);
  const auto cols = static_cast<std::size_t>(src.freeSize());
  const auto elementBytes = static_cast<std::size_t>(byteSize(src.dtype));
  std::vector<std::byte> in(rows * cols * elementBytes);
  std::vector<std::byte> out(in.size());
  ctx.readBytes(src, in);
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < cols; ++j) {
      std::memcpy(out.data() + (j * rows + i) * elementBytes,
                  in.data() + (i * cols + j) * elementBytes, elementBytes);
    }
  }
  ctx.writeBytes(dst, out);
  return {};
}

Status DmaCompute::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(checkQueue(queue, ctx.limits));
  if (reduceOp != AluOp::kAdd) {
    return operandError("reduce_op", fmt::format("{} is not supported; the DMA engines reduce "
                                                 "with add only",
                                                 enumName(reduceOp)));
  }
  if (!src0) {
    return operandError("src0", "dma_compute needs at least one source");
  }
  const auto list = sources();
  for (std::size_t k = 0; k < list.size(); ++k) {
    const std::optional<AccessPattern>& s = *list[k].first;
    const std::string name = fmt::format("src{}", k);
    if (!s) {
      if (k + 1 < list.size() && *list[k + 1].first) {
        return operandError(fmt::format("src{}", k + 1),
                            fmt::format("is given but {} is not; sources are consecutive from "
                                        "src0",
                                        name));
      }
      continue;
    }
    TRN_RETURN_IF_ERROR(checkSameCount("dst", dst, name, *s));
  }
  return {};
}

Status DmaCompute::execute(ExecContext& ctx) const {
  const auto count = static_cast<std::size_t>(dst.elementCount());
  std::vector<float> sum(count);
  std::vector<float> term(count);
  bool first = true;
  for (const auto& [source, scale] : sources()) {
    if (!*source) {
      continue;
    }
    ctx.readFloats(**source, term);
    for (std::size_t i = 0; i < count; ++i) {
      const float scaled = term[i] * scale;
      sum[i] = first ? scaled : sum[i] + scaled;
    }
    first = false;
  }
  ctx.writeFloats(dst, sum);
  return {};
}

}  // namespace trn::isa
