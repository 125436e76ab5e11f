// Helpers shared by the special-purpose Vector and GpSimd instructions (vector_special.cpp,
// gpsimd_engine.cpp): shape rules with operand-naming errors, single-partition sub-patterns,
// integer index outputs, and writes that pass selected input elements through bit for bit.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/isa/exec_context.h"

namespace trn::isa::special_detail {

inline Status operandError(std::string_view operand, std::string_view what) {
  return failedPrecondition(fmt::format("operand '{}': {}", operand, what));
}

/// `b` covers as many partitions as `a`.
inline Status requireSamePartitions(std::string_view nameA, const AccessPattern& a,
                                    std::string_view nameB, const AccessPattern& b) {
  if (a.partitionCount == b.partitionCount) {
    return {};
  }
  return operandError(nameB, fmt::format("covers {} partitions but '{}' covers {}; they must match",
                                         b.partitionCount, nameA, a.partitionCount));
}

/// `ap` holds exactly `size` elements per partition.
inline Status requireFreeSize(std::string_view name, const AccessPattern& ap, std::int64_t size,
                              std::string_view what) {
  if (ap.freeSize() == size) {
    return {};
  }
  return operandError(name, fmt::format("has {} elements per partition; it must have {} ({})",
                                        ap.freeSize(), size, what));
}

/// `ap` holds between `low` and `high` elements per partition.
inline Status requireFreeSizeIn(std::string_view name, const AccessPattern& ap, std::int64_t low,
                                std::int64_t high) {
  if (ap.freeSize() >= low && ap.freeSize() <= high) {
    return {};
  }
  return operandError(name, fmt::format("has {} elements per partition; this instruction takes {} "
                                        "to {}",
                                        ap.freeSize(), low, high));
}

/// Partition `index` (relative to the first) of an on-chip pattern, as a pattern of its own.
inline AccessPattern partitionSlice(const AccessPattern& ap, std::int64_t index) {
  AccessPattern one = ap;
  one.partitionStart = ap.partitionStart + index;
  one.partitionCount = 1;
  return one;
}

/// Writes unsigned integers to a uint16/uint32 (or other integer) operand exactly, truncating each
/// value to the element width (so ~0 gives the all-ones sentinel of any width).
inline void writeUnsigned(ExecContext& ctx, const AccessPattern& ap,
                          std::span<const std::uint64_t> values) {
  const auto width = static_cast<std::size_t>(byteSize(ap.dtype));
  std::vector<std::byte> bytes(values.size() * width);
  for (std::size_t i = 0; i < values.size(); ++i) {
    for (std::size_t b = 0; b < width; ++b) {
      bytes[i * width + b] = static_cast<std::byte>((values[i] >> (8 * b)) & 0xff);
    }
  }
  ctx.writeBytes(ap, bytes);
}

/// The raw bytes of `ap` (read before any write, so in-place operations see the old data).
inline std::vector<std::byte> readRaw(ExecContext& ctx, const AccessPattern& ap) {
  std::vector<std::byte> bytes(static_cast<std::size_t>(ap.elementCount() * byteSize(ap.dtype)));
  ctx.readBytes(ap, bytes);
  return bytes;
}

/// Writes `values` to dst with the engine's fp32 -> dst cast, then, when `sourceType` equals
/// dst's dtype, restores element i from `sourceBytes` bit for bit wherever `passThrough[i]`
/// (an element the instruction copies rather than computes keeps NaN payloads and all).
inline void writeWithPassThrough(ExecContext& ctx, const AccessPattern& dst,
                                 std::span<const float> values, DType sourceType,
                                 std::span<const std::byte> sourceBytes,
                                 const std::vector<bool>& passThrough) {
  ctx.writeFloats(dst, values);
  if (sourceType != dst.dtype ||
      std::find(passThrough.begin(), passThrough.end(), true) == passThrough.end()) {
    return;
  }
  std::vector<std::byte> out = readRaw(ctx, dst);
  const auto width = static_cast<std::size_t>(byteSize(dst.dtype));
  for (std::size_t i = 0; i < passThrough.size(); ++i) {
    if (passThrough[i]) {
      std::memcpy(&out[i * width], &sourceBytes[i * width], width);
    }
  }
  ctx.writeBytes(dst, out);
}

}  // namespace trn::isa::special_detail
