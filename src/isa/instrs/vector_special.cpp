#include "trn/isa/instrs/vector_special.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "special_common.h"
#include "trn/isa/verifier.h"

namespace trn::isa {

using special_detail::operandError;
using special_detail::partitionSlice;
using special_detail::readRaw;
using special_detail::requireFreeSize;
using special_detail::requireFreeSizeIn;
using special_detail::requireSamePartitions;
using special_detail::writeUnsigned;
using special_detail::writeWithPassThrough;

namespace {

/// Values per partition of the top-8 search instructions (max8, nc_find_index8, ...).
constexpr std::int64_t kEight = 8;
/// Largest data free size of max8 / nc_find_index8 / nc_match_replace8 (nki.isa docs).
constexpr std::int64_t kMaxSearchFree = 16384;
/// An index slot with no match: all ones in the slot's width.
constexpr std::uint64_t kNoMatch = ~std::uint64_t{0};

/// Every operand's free size is within the Vector engine's limit for its memory.
Status requireTileSizes(
    const CoreLimits& limits,
    std::initializer_list<std::pair<std::string_view, const AccessPattern*>> operands) {
  for (const auto& [name, ap] : operands) {
    TRN_RETURN_IF_ERROR(requireComputeTileSize(name, *ap, limits));
  }
  return {};
}

/// Reads an operand as fp32.
std::vector<float> readValues(ExecContext& ctx, const AccessPattern& ap) {
  std::vector<float> values(static_cast<std::size_t>(ap.elementCount()));
  ctx.readFloats(ap, values);
  return values;
}

/// max8 ordering: larger first, NaN above everything, ties by position (first occurrence first).
bool ranksAbove(float a, std::size_t ia, float b, std::size_t ib) {
  const bool nanA = std::isnan(a);
  const bool nanB = std::isnan(b);
  if (nanA != nanB) {
    return nanA;
  }
  if (!nanA && a != b) {
    return a > b;
  }
  return ia < ib;
}

/// The first position j >= 0 of `row` with row[j] == value (fp32 equality) not yet claimed; marks
/// it claimed. Returns kNoMatch when there is none.
std::uint64_t claimFirst(std::span<const float> row, float value, std::vector<bool>& claimed) {
  for (std::size_t j = 0; j < row.size(); ++j) {
    if (!claimed[j] && row[j] == value) {
      claimed[j] = true;
      return j;
    }
  }
  return kNoMatch;
}

}  // namespace

// ---- bn_stats ----

Status BnStats::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(requireSamePartitions("data", data, "dst", dst));
  TRN_RETURN_IF_ERROR(requireFreeSize("dst", dst, 6, "one bn_stats record of 6 values"));
  TRN_RETURN_IF_ERROR(
      requireFreeSizeAtMost("data", data, ctx.limits.bnStatsMaxFree, "bn_stats_fmax"));
  return requireTileSizes(ctx.limits, {{"dst", &dst}, {"data", &data}});
}

Status BnStats::execute(ExecContext& ctx) const {
  const auto p = static_cast<std::size_t>(data.partitionCount);
  const auto f = static_cast<std::size_t>(data.freeSize());
  const std::vector<float> x = readValues(ctx, data);
  std::vector<float> out(p * 6);
  for (std::size_t row = 0; row < p; ++row) {
    const float* values = x.data() + row * f;
    for (std::size_t parity = 0; parity < 2; ++parity) {
      const std::size_t count = f / 2 + (parity == 0 ? f % 2 : 0);
      float mean = 0.0f;
      float m2 = 0.0f;
      if (count > 0) {
        float sum = 0.0f;
        for (std::size_t j = parity; j < f; j += 2) {
          sum += values[j];
        }
        mean = sum / static_cast<float>(count);
        for (std::size_t j = parity; j < f; j += 2) {
          const float d = values[j] - mean;
          m2 += d * d;
        }
      }
      float* record = out.data() + row * 6 + parity * 3;
      record[0] = static_cast<float>(count);
      record[1] = mean;
      record[2] = m2;
    }
  }
  ctx.writeFloats(dst, out);
  return {};
}

// ---- bn_aggr ----

Status BnAggr::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(requireSamePartitions("data", data, "dst", dst));
  TRN_RETURN_IF_ERROR(requireFreeSize("dst", dst, 2, "mean and variance"));
  if (data.freeSize() % 3 != 0) {
    return operandError("data", fmt::format("has {} elements per partition; bn_aggr reads "
                                            "(count, mean, variance*count) triples, so it must be "
                                            "a multiple of 3",
                                            data.freeSize()));
  }
  return requireTileSizes(ctx.limits, {{"dst", &dst}, {"data", &data}});
}

Status BnAggr::execute(ExecContext& ctx) const {
  const auto p = static_cast<std::size_t>(data.partitionCount);
  const auto f = static_cast<std::size_t>(data.freeSize());
  const std::vector<float> x = readValues(ctx, data);
  std::vector<float> out(p * 2);
  for (std::size_t row = 0; row < p; ++row) {
    float n = 0.0f;
    float mean = 0.0f;
    float m2 = 0.0f;
    for (std::size_t t = 0; t + 2 < f; t += 3) {
      const float nb = x[row * f + t];
      const float meanB = x[row * f + t + 1];
      const float m2B = x[row * f + t + 2];
      if (nb == 0.0f) {
        continue;
      }
      if (n == 0.0f) {
        n = nb;
        mean = meanB;
        m2 = m2B;
        continue;
      }
      const float total = n + nb;
      const float delta = meanB - mean;
      mean = mean + delta * (nb / total);
      m2 = m2 + m2B + delta * delta * (n * nb / total);
      n = total;
    }
    const float nan = std::numeric_limits<float>::quiet_NaN();
    out[row * 2] = n == 0.0f ? nan : mean;
    out[row * 2 + 1] = n == 0.0f ? nan : m2 / n;
  }
  ctx.writeFloats(dst, out);
  return {};
}

// ---- max8 ----

Status Max8::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(requireSamePartitions("src", src, "dst", dst));
  TRN_RETURN_IF_ERROR(requireFreeSize("dst", dst, kEight, "the 8 largest values"));
  TRN_RETURN_IF_ERROR(requireFreeSizeIn("src", src, kEight, kMaxSearchFree));
  return requireTileSizes(ctx.limits, {{"dst", &dst}, {"src", &src}});
}

Status Max8::execute(ExecContext& ctx) const {
  const auto p = static_cast<std::size_t>(src.partitionCount);
  const auto f = static_cast<std::size_t>(src.freeSize());
  const std::vector<float> x = readValues(ctx, src);
  std::vector<float> out(p * kEight);
  std::vector<std::size_t> order(f);
  for (std::size_t row = 0; row < p; ++row) {
    const float* values = x.data() + row * f;
    for (std::size_t j = 0; j < f; ++j) {
      order[j] = j;
    }
    std::partial_sort(
        order.begin(), order.begin() + kEight, order.end(),
        [&](std::size_t a, std::size_t b) { return ranksAbove(values[a], a, values[b], b); });
    for (std::size_t i = 0; i < static_cast<std::size_t>(kEight); ++i) {
      out[row * kEight + i] = values[order[i]];
    }
  }
  ctx.writeFloats(dst, out);
  return {};
}

// ---- nc_find_index8 ----

Status NcFindIndex8::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(requireSamePartitions("data", data, "vals", vals));
  TRN_RETURN_IF_ERROR(requireSamePartitions("data", data, "dst", dst));
  TRN_RETURN_IF_ERROR(requireFreeSize("vals", vals, kEight, "the 8 values to find"));
  TRN_RETURN_IF_ERROR(requireFreeSize("dst", dst, kEight, "one index per value"));
  TRN_RETURN_IF_ERROR(requireFreeSizeIn("data", data, kEight, kMaxSearchFree));
  TRN_RETURN_IF_ERROR(requireDType("dst", dst, {DType::kUint16, DType::kUint32}));
  return requireTileSizes(ctx.limits, {{"dst", &dst}, {"data", &data}, {"vals", &vals}});
}

Status NcFindIndex8::execute(ExecContext& ctx) const {
  const auto p = static_cast<std::size_t>(data.partitionCount);
  const auto f = static_cast<std::size_t>(data.freeSize());
  const std::vector<float> x = readValues(ctx, data);
  const std::vector<float> v = readValues(ctx, vals);
  std::vector<std::uint64_t> index(p * kEight);
  std::vector<bool> claimed(f);
  for (std::size_t row = 0; row < p; ++row) {
    std::fill(claimed.begin(), claimed.end(), false);
    const std::span<const float> values(x.data() + row * f, f);
    for (std::size_t i = 0; i < static_cast<std::size_t>(kEight); ++i) {
      index[row * kEight + i] = claimFirst(values, v[row * kEight + i], claimed);
    }
  }
  writeUnsigned(ctx, dst, index);
  return {};
}

// ---- nc_match_replace8 ----

Status NcMatchReplace8::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(requireSameShape("dst", dst, "data", data));
  TRN_RETURN_IF_ERROR(requireSamePartitions("data", data, "vals", vals));
  TRN_RETURN_IF_ERROR(requireFreeSize("vals", vals, kEight, "the 8 values to replace"));
  TRN_RETURN_IF_ERROR(requireFreeSizeIn("data", data, 1, kMaxSearchFree));
  TRN_RETURN_IF_ERROR(
      requireTileSizes(ctx.limits, {{"dst", &dst}, {"data", &data}, {"vals", &vals}}));
  if (dstIdx) {
    TRN_RETURN_IF_ERROR(requireSamePartitions("data", data, "dst_idx", *dstIdx));
    TRN_RETURN_IF_ERROR(requireFreeSize("dst_idx", *dstIdx, kEight, "one index per value"));
    TRN_RETURN_IF_ERROR(requireDType("dst_idx", *dstIdx, {DType::kUint16, DType::kUint32}));
  }
  return {};
}

Status NcMatchReplace8::execute(ExecContext& ctx) const {
  const auto p = static_cast<std::size_t>(data.partitionCount);
  const auto f = static_cast<std::size_t>(data.freeSize());
  std::vector<float> x = readValues(ctx, data);
  const std::vector<float> v = readValues(ctx, vals);
  const std::vector<std::byte> raw = readRaw(ctx, data);
  std::vector<std::uint64_t> index(p * kEight);
  std::vector<bool> claimed(f);
  std::vector<bool> passThrough(p * f);
  for (std::size_t row = 0; row < p; ++row) {
    std::fill(claimed.begin(), claimed.end(), false);
    const std::span<const float> values(x.data() + row * f, f);
    for (std::size_t i = kEight; i-- > 0;) {
      index[row * kEight + i] = claimFirst(values, v[row * kEight + i], claimed);
    }
    for (std::size_t j = 0; j < f; ++j) {
      passThrough[row * f + j] = !claimed[j];
      if (claimed[j]) {
        x[row * f + j] = imm;
      }
    }
  }
  writeWithPassThrough(ctx, dst, x, data.dtype, raw, passThrough);
  if (dstIdx) {
    writeUnsigned(ctx, *dstIdx, index);
  }
  return {};
}

// ---- nc_stream_shuffle ----

Status NcStreamShuffle::verify(const VerifyContext& ctx) const {
  if (dst.dtype != src.dtype) {
    return operandError("dst", fmt::format("dtype {} differs from src's {}; a shuffle copies bits "
                                           "without casting",
                                           dtypeName(dst.dtype), dtypeName(src.dtype)));
  }
  if (dst.freeSize() != src.freeSize()) {
    return operandError("dst", fmt::format("has {} elements per partition but src has {}",
                                           dst.freeSize(), src.freeSize()));
  }
  for (std::size_t i = 0; i < shuffleMask.size(); ++i) {
    const std::int64_t m = shuffleMask[i];
    if ((m < 0 || m >= kShuffleQuadrant) && m != kShuffleKeep) {
      return operandError("shuffle_mask", fmt::format("entry {} is {}; entries are source "
                                                      "partitions 0..31 of the quadrant, or 255 "
                                                      "to keep the destination",
                                                      i, m));
    }
  }
  const std::int64_t widest = std::max(src.partitionCount, dst.partitionCount);
  const std::int64_t active = (widest + kShuffleQuadrant - 1) / kShuffleQuadrant * kShuffleQuadrant;
  for (const auto& [name, ap] : {std::pair{"src", &src}, {"dst", &dst}}) {
    const std::int64_t start = ap->partitionStart;
    const bool ok = active > 64   ? start == 0
                    : active > 32 ? start % 64 == 0
                                  : start % kShuffleQuadrant == 0;
    if (!ok) {
      return operandError(name, fmt::format("starts at partition {}, but a shuffle with {} active "
                                            "partitions (max of src and dst, rounded up to 32) "
                                            "must start at {}",
                                            start, active,
                                            active > 64   ? "0"
                                            : active > 32 ? "0 or 64"
                                                          : "0, 32, 64 or 96"));
    }
  }
  for (std::int64_t d = 0; d < dst.partitionCount; ++d) {
    const std::int64_t m = shuffleMask[static_cast<std::size_t>(d % kShuffleQuadrant)];
    const std::int64_t s = d / kShuffleQuadrant * kShuffleQuadrant + m;
    if (m != kShuffleKeep && s >= src.partitionCount) {
      return operandError("shuffle_mask",
                          fmt::format("entry {} sends src partition {} to dst partition {}, but "
                                      "src covers only {} partitions",
                                      d % kShuffleQuadrant, s, d, src.partitionCount));
    }
  }
  return requireTileSizes(ctx.limits, {{"dst", &dst}, {"src", &src}});
}

Status NcStreamShuffle::execute(ExecContext& ctx) const {
  const std::vector<std::byte> in = readRaw(ctx, src);
  const auto rowBytes = static_cast<std::size_t>(src.freeSize() * byteSize(src.dtype));
  for (std::int64_t d = 0; d < dst.partitionCount; ++d) {
    const std::int64_t m = shuffleMask[static_cast<std::size_t>(d % kShuffleQuadrant)];
    if (m == kShuffleKeep) {
      continue;
    }
    const auto s = static_cast<std::size_t>(d / kShuffleQuadrant * kShuffleQuadrant + m);
    ctx.writeBytes(partitionSlice(dst, d), std::span(in).subspan(s * rowBytes, rowBytes));
  }
  return {};
}

}  // namespace trn::isa
