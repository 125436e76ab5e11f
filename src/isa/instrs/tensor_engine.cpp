#include "trn/isa/instrs/tensor_engine.h"

#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "trn/isa/matmul_kernel.h"
#include "trn/isa/verifier.h"

namespace trn::isa {
namespace {

/// The largest tile the vector engine's reshape banks transpose (hardware-trn2.md §7).
constexpr std::int64_t kDveTransposeBlock = 32;

Status operandError(std::string_view operand, std::string_view what) {
  return failedPrecondition(fmt::format("operand '{}': {}", operand, what));
}

/// Rows of the contraction: K partitions, or 2K for double-row fp8 (operands [K, 2, F]).
std::int64_t contractionRows(const NcMatmul& mm) {
  return mm.perfMode == MatmulPerfMode::kDoubleRow ? 2 * mm.stationary.partitionCount
                                                   : mm.stationary.partitionCount;
}

/// Reads an operand as a (contraction x free) fp32 matrix. A double-row operand [K, 2, F] is
/// read partition-major, so element (p, h, f) lands in row 2p + h of a (2K x F) matrix: the two
/// multiplies of PE row p accumulate in the order h = 0, 1 (docs/isa.md).
std::vector<float> readOperand(ExecContext& ctx, const AccessPattern& ap) {
  std::vector<float> values(static_cast<std::size_t>(ap.elementCount()));
  ctx.readFloats(ap, values);
  return values;
}

/// A PE result lies in one PSUM bank per partition, unless the chip lets it span banks (NC-v4).
Status requireOneBank(const AccessPattern& dst, const CoreLimits& limits) {
  if (limits.peOutputSpansBanks) {
    return {};
  }
  const AccessPattern::ByteRange range = dst.byteRange();
  if (range.begin / limits.psumBankBytes != (range.end - 1) / limits.psumBankBytes) {
    return operandError("dst", fmt::format("bytes [{}, {}) cross a {}-byte PSUM bank boundary; the "
                                           "tensor engine writes within one bank",
                                           range.begin, range.end, limits.psumBankBytes));
  }
  return {};
}

/// The PE transpose writes 2- and 4-byte elements as they are and a 1-byte element as a 16-bit
/// PSUM word with the upper byte zero (hardware-trn2.md §6), so dst is then uint16.
Status requirePeTransposeDType(const AccessPattern& dst, const AccessPattern& data,
                               std::string_view dataName) {
  if (byteSize(data.dtype) == 1) {
    if (dst.dtype != DType::kUint16) {
      return operandError("dst", fmt::format("dtype {} is not allowed: the tensor engine writes "
                                             "1-byte {} data as 16-bit PSUM words (upper byte "
                                             "zero), so dst must be uint16",
                                             dtypeName(dst.dtype), dtypeName(data.dtype)));
    }
    return {};
  }
  if (dst.dtype != data.dtype) {
    return operandError("dst", fmt::format("dtype {} differs from {}'s {}; a transpose moves the "
                                           "bits unchanged",
                                           dtypeName(dst.dtype), dataName, dtypeName(data.dtype)));
  }
  return {};
}

/// dst is data^T: [F, P] for data [P, F].
Status requireTransposedShape(const AccessPattern& dst, const AccessPattern& data,
                              std::string_view dataName) {
  if (dst.partitionCount != data.freeSize() || dst.freeSize() != data.partitionCount) {
    return operandError(
        "dst", fmt::format("is [{}, {}] but the transpose of {} [{}, {}] is [{}, "
                           "{}]",
                           dst.partitionCount, dst.freeSize(), dataName, data.partitionCount,
                           data.freeSize(), data.freeSize(), data.partitionCount));
  }
  return {};
}

/// Moves data[P, F] to dst[F, P] bit for bit; narrower input elements are zero-extended to the
/// dst element width (little-endian: the input bits become the low bytes).
void transposeBits(ExecContext& ctx, const AccessPattern& data, const AccessPattern& dst) {
  const auto p = static_cast<std::size_t>(data.partitionCount);
  const auto f = static_cast<std::size_t>(data.freeSize());
  const auto inBytes = static_cast<std::size_t>(byteSize(data.dtype));
  const auto outBytes = static_cast<std::size_t>(byteSize(dst.dtype));
  std::vector<std::byte> in(p * f * inBytes);
  ctx.readBytes(data, in);
  std::vector<std::byte> out(p * f * outBytes, std::byte{0});
  for (std::size_t i = 0; i < p; ++i) {
    for (std::size_t j = 0; j < f; ++j) {
      std::memcpy(&out[(j * p + i) * outBytes], &in[(i * f + j) * inBytes], inBytes);
    }
  }
  ctx.writeBytes(dst, out);
}

/// tile_position / tile_size (nki.isa nc_matmul tiling mode).
Status verifyTiling(const NcMatmul& mm, const CoreLimits& limits) {
  static constexpr std::array<std::string_view, 2> kAxis = {"row", "column"};
  for (std::size_t a = 0; a < 2; ++a) {
    const std::int64_t size = mm.tileSize[a];
    const std::int64_t start = mm.tilePosition[a];
    const bool legalSize =
        (size == kPeArraySize || size == kPeArraySize / 2 || size == kPeArraySize / 4) &&
        size >= limits.matmulMinTile;
    if (!legalSize) {
      return operandError("tile_size", fmt::format("{}_size {} is not a legal PE tile; tiles are "
                                                   "128, 64 or 32 and at least {} on this chip",
                                                   kAxis[a], size, limits.matmulMinTile));
    }
    if (start < 0 || start % size != 0 || start + size > kPeArraySize) {
      return operandError("tile_position",
                          fmt::format("start_{} {} must be a multiple of {}_size {} with the tile "
                                      "inside the {}-wide array",
                                      kAxis[a], start, kAxis[a], size, kPeArraySize));
    }
  }
  if (mm.perfMode == MatmulPerfMode::kDoubleRow && mm.tileSize[1] != kPeArraySize) {
    return operandError("tile_size", fmt::format("column_size {} enables column tiling, which "
                                                 "perf_mode=double_row cannot be combined with",
                                                 mm.tileSize[1]));
  }
  // With the full array (the default) the general K and M limits apply instead.
  if (mm.tileSize[0] < kPeArraySize && mm.stationary.partitionCount > mm.tileSize[0]) {
    return operandError("stationary", fmt::format("contraction K = {} partitions exceeds the row "
                                                  "tile of {} rows (tile_size [{},{}])",
                                                  mm.stationary.partitionCount, mm.tileSize[0],
                                                  mm.tileSize[0], mm.tileSize[1]));
  }
  std::int64_t m = mm.stationary.freeSize();
  if (mm.perfMode == MatmulPerfMode::kDoubleRow) {
    m /= 2;
  }
  if (mm.tileSize[1] < kPeArraySize && m > mm.tileSize[1]) {
    return operandError("stationary",
                        fmt::format("free size M = {} exceeds the column tile of {} "
                                    "columns (tile_size [{},{}])",
                                    m, mm.tileSize[1], mm.tileSize[0], mm.tileSize[1]));
  }
  return {};
}

/// Transpose mode: stationary is the data, moving the [K, K] identity, dst = stationary^T.
Status verifyTransposeMode(const NcMatmul& mm, const CoreLimits& limits) {
  if (mm.perfMode == MatmulPerfMode::kDoubleRow) {
    return operandError("perf_mode", "double_row cannot be combined with is_transpose");
  }
  if (mm.accumulate) {
    return operandError("accumulate",
                        "is_transpose writes the transposed bits and cannot "
                        "accumulate into PSUM");
  }
  TRN_RETURN_IF_ERROR(requireFloat("moving", mm.moving));
  const std::int64_t k = mm.stationary.partitionCount;
  if (k > limits.matmulMaxContraction) {
    return operandError(
        "stationary", fmt::format("K = {} partitions exceeds {}", k, limits.matmulMaxContraction));
  }
  if (mm.stationary.freeSize() > limits.matmulMaxStationaryFree) {
    return operandError("stationary",
                        fmt::format("free size M = {} exceeds {}", mm.stationary.freeSize(),
                                    limits.matmulMaxStationaryFree));
  }
  if (mm.moving.partitionCount != k || mm.moving.freeSize() != k) {
    return operandError("moving",
                        fmt::format("is [{}, {}]; in transpose mode it is the [{}, {}] "
                                    "identity matrix",
                                    mm.moving.partitionCount, mm.moving.freeSize(), k, k));
  }
  TRN_RETURN_IF_ERROR(requireTransposedShape(mm.dst, mm.stationary, "stationary"));
  TRN_RETURN_IF_ERROR(requirePeTransposeDType(mm.dst, mm.stationary, "stationary"));
  return requireOneBank(mm.dst, limits);
}

}  // namespace

Status NcMatmul::verify(const VerifyContext& ctx) const {
  const CoreLimits& limits = ctx.limits;
  TRN_RETURN_IF_ERROR(verifyTiling(*this, limits));
  if (isTranspose) {
    return verifyTransposeMode(*this, limits);
  }
  const bool doubleRow = perfMode == MatmulPerfMode::kDoubleRow;
  TRN_RETURN_IF_ERROR(requireDType("dst", dst, {DType::kFp32}));
  for (const auto& [name, ap] : {std::pair{"stationary", &stationary}, {"moving", &moving}}) {
    TRN_RETURN_IF_ERROR(requireFloat(name, *ap));
    if (ap->dtype == DType::kFp8E4m3Fn) {
      return failedPrecondition(fmt::format(
          "operand '{}': fp8_e4m3fn matmul operands need NC-v4 (Trainium3) MX support", name));
    }
  }
  const auto isFp32Class = [](DType t) { return t == DType::kFp32 || t == DType::kTf32; };
  if (isFp32Class(stationary.dtype) != isFp32Class(moving.dtype)) {
    return failedPrecondition(
        fmt::format("an fp32/tf32 matmul operand needs an fp32/tf32 partner "
                    "(stationary is {}, moving is {})",
                    dtypeName(stationary.dtype), dtypeName(moving.dtype)));
  }
  if (stationary.partitionCount != moving.partitionCount) {
    return failedPrecondition(
        fmt::format("contraction mismatch: stationary has {} partitions, "
                    "moving {}",
                    stationary.partitionCount, moving.partitionCount));
  }
  if (stationary.partitionCount > limits.matmulMaxContraction) {
    return failedPrecondition(fmt::format("contraction K = {} exceeds {} (K <= {} partitions)",
                                          stationary.partitionCount, limits.matmulMaxContraction,
                                          limits.matmulMaxContraction));
  }
  std::int64_t m = stationary.freeSize();
  std::int64_t n = moving.freeSize();
  if (doubleRow) {
    if (!limits.fp8DoubleRow) {
      return failedPrecondition("perf_mode=double_row is not available on this chip");
    }
    for (const auto& [name, ap] : {std::pair{"stationary", &stationary}, {"moving", &moving}}) {
      if (ap->dtype != DType::kFp8E4m3 && ap->dtype != DType::kFp8E5m2) {
        return failedPrecondition(
            fmt::format("operand '{}': double_row needs fp8_e4m3 or "
                        "fp8_e5m2, not {}",
                        name, dtypeName(ap->dtype)));
      }
      if (ap->numDims < 2 || ap->dims[0].count != 2) {
        return failedPrecondition(
            fmt::format("operand '{}': double_row operands are laid out "
                        "[K, 2, F]; the outermost free dimension must have "
                        "count 2",
                        name));
      }
    }
    m /= 2;
    n /= 2;
  }
  if (m > limits.matmulMaxStationaryFree) {
    return failedPrecondition(
        fmt::format("stationary free size M = {} exceeds {}", m, limits.matmulMaxStationaryFree));
  }
  if (n > limits.matmulMaxMovingFree) {
    return failedPrecondition(
        fmt::format("moving free size N = {} exceeds {} (one PSUM bank of "
                    "fp32)",
                    n, limits.matmulMaxMovingFree));
  }
  if (dst.partitionCount != m || dst.freeSize() != n) {
    return failedPrecondition(fmt::format("dst is [{}, {}] but stationary^T @ moving is [{}, {}]",
                                          dst.partitionCount, dst.freeSize(), m, n));
  }
  return requireOneBank(dst, limits);
}

Status NcMatmul::execute(ExecContext& ctx) const {
  if (isTranspose) {
    const auto k = static_cast<std::size_t>(moving.partitionCount);
    std::vector<float> identity(k * k);
    ctx.readFloats(moving, identity);
    for (std::size_t r = 0; r < k; ++r) {
      for (std::size_t c = 0; c < k; ++c) {
        const float expected = r == c ? 1.0f : 0.0f;
        if (identity[r * k + c] != expected) {
          return failedPrecondition(fmt::format(
              "operand 'moving': is_transpose needs the identity matrix, but element [{}, {}] is "
              "{} (expected {})",
              r, c, identity[r * k + c], expected));
        }
      }
    }
    transposeBits(ctx, stationary, dst);
    return {};
  }
  const auto k = static_cast<std::size_t>(contractionRows(*this));
  const auto m = static_cast<std::size_t>(dst.partitionCount);
  const auto n = static_cast<std::size_t>(dst.freeSize());
  const std::vector<float> s = readOperand(ctx, stationary);
  const std::vector<float> v = readOperand(ctx, moving);
  std::vector<float> out(m * n);
  if (accumulate) {
    ctx.readFloats(dst, out);
  }
  matmulTile({s.data(), k, m, m}, {v.data(), k, n, n}, {out.data(), m, n, n},
             accumulate ? PsumWrite::kAccumulate : PsumWrite::kOverwrite);
  ctx.writeFloats(dst, out);
  return {};
}

Status NcTranspose::verify(const VerifyContext& ctx) const {
  const bool pe = ctx.engine == Engine::kPe;
  const std::int64_t maxP = pe ? ctx.limits.matmulMaxContraction : kDveTransposeBlock;
  const std::int64_t maxF = pe ? ctx.limits.matmulMaxStationaryFree : kDveTransposeBlock;
  if (data.partitionCount > maxP || data.freeSize() > maxF) {
    return operandError("data", fmt::format("is [{}, {}]; the {} engine transposes at most [{}, "
                                            "{}]",
                                            data.partitionCount, data.freeSize(),
                                            engineName(ctx.engine), maxP, maxF));
  }
  TRN_RETURN_IF_ERROR(requireTransposedShape(dst, data, "data"));
  if (pe) {
    TRN_RETURN_IF_ERROR(requirePeTransposeDType(dst, data, "data"));
    return requireOneBank(dst, ctx.limits);
  }
  if (dst.dtype != data.dtype) {
    return operandError("dst", fmt::format("dtype {} differs from data's {}; a transpose moves the "
                                           "bits unchanged",
                                           dtypeName(dst.dtype), dtypeName(data.dtype)));
  }
  return {};
}

Status NcTranspose::execute(ExecContext& ctx) const {
  transposeBits(ctx, data, dst);
  return {};
}

}  // namespace trn::isa
