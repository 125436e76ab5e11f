// Conversions between fp32 (the compute format of the Vector, Scalar and GpSimd engines) and every
// DType: the cast an engine applies when it writes an output tile, and the widening it applies
// when it reads an input tile. The rules (rounding, overflow, NaN, denormals) are specified in
// docs/numerics.md; in short:
//   - rounding: nearest-even (default), stochastic (seeded, reproducible) or toward zero;
//   - overflow of a finite value: nearest-even/stochastic give +-Inf, toward-zero gives +-max;
//     with `saturate`, or for a format without Inf (fp8_e4m3fn), +-Inf and overflow give +-max;
//   - NaN becomes the format's canonical NaN (integers: 0); denormals are kept (no flushing);
//   - to integers: rounded as selected (nearest-even by default), then saturated to the range.
// The scalar functions define the semantics; the bulk functions give bit-identical results and
// are vectorised (Google Highway, dispatched at run time) for the hot conversions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "trn/base/status.h"
#include "trn/numerics/dtype.h"

namespace trn {

/// How a value that is not representable in the target type is rounded.
enum class RoundingMode : std::uint8_t {
  kNearestEven,  ///< round to nearest, ties to even (IEEE default; Trainium default)
  kStochastic,   ///< round up with probability equal to the discarded fraction (see below)
  kTowardZero,   ///< truncate the magnitude
};

/// "rne", "stochastic" or "rtz".
std::string_view roundingModeName(RoundingMode mode);

/// Parses "rne" / "nearest_even", "stochastic" / "sr", "rtz" / "toward_zero" / "truncate".
Result<RoundingMode> parseRoundingMode(std::string_view text);

/// Options of a conversion from fp32.
///
/// Stochastic rounding of element i uses the 32-bit random word
/// CounterRng(seed, stream).at(i) (base/rng.h), so a result depends only on (seed, stream, i,
/// value), never on the host, the vector width or the order of evaluation. Let the magnitude
/// be (n + f) * q, where q is the spacing of the target format at that magnitude, n an integer
/// and 0 <= f < 1. With F = floor(f * 2^32) (the top 32 bits of the discarded fraction) and r the
/// random word, the magnitude rounds to (n + 1) * q when F + r >= 2^32 and to n * q otherwise:
/// the random word is added just below the kept precision and the sum is truncated. Exactly
/// representable values are never changed; P(round up) = F / 2^32, which equals f to 2^-32.
struct ConvertOptions {
  RoundingMode rounding = RoundingMode::kNearestEven;
  /// Clamp overflow and +-Inf to +-maxFinite instead of producing +-Inf (float targets with Inf).
  bool saturate = false;
  std::uint64_t seed = 0;    ///< stochastic rounding: Philox key
  std::uint64_t stream = 0;  ///< stochastic rounding: stream, e.g. an instruction id
};

/// The random word that stochastic rounding uses for element `index` under `options`.
std::uint32_t stochasticWord(const ConvertOptions& options, std::uint64_t index);

/// Class of a floating-point encoding.
enum class FloatClass : std::uint8_t { kZero, kSubnormal, kNormal, kInfinite, kNan };

/// Classifies the encoding `bits` (in the low byteSize bytes) of the float type `type`.
FloatClass classify(std::uint32_t bits, DType type);

/// Converts `value` to `type` and returns its encoding in the low byteSize(type) bytes (integers:
/// two's complement truncated to the width; tf32: the 32-bit storage pattern). `randomWord` is the
/// stochastic-rounding word for this element (see ConvertOptions); other modes ignore it.
std::uint32_t encodeFloat(float value, DType type, const ConvertOptions& options = {},
                          std::uint32_t randomWord = 0);

/// The fp32 value of the encoding `bits` of `type`. Exact for every type except int32/uint32
/// magnitudes above 2^24, which round to nearest even. NaN keeps its sign and left-aligned
/// payload and becomes quiet; tf32 ignores the low 13 storage bits.
float decodeFloat(std::uint32_t bits, DType type);

/// decodeFloat(encodeFloat(value, ...)): the fp32 value an engine reads back after a cast.
float quantize(float value, DType type, const ConvertOptions& options = {},
               std::uint32_t randomWord = 0);

/// Converts src[j] to `dstType`, writing element j at dst[j * byteSize(dstType)]. Element j is
/// element number firstIndex + j for stochastic rounding, so converting an array in pieces gives
/// the same bytes as converting it at once. dst.size() must equal src.size() * byteSize(dstType).
/// Vectorised for every float type in every mode (stochastic rounding draws its Philox words per
/// chunk with the scalar generator); integer targets run a scalar loop. Bit-identical to
/// encodeFloat with stochasticWord(options, firstIndex + j).
void convertFromFloat(std::span<const float> src, DType dstType, std::span<std::byte> dst,
                      const ConvertOptions& options = {}, std::uint64_t firstIndex = 0);

/// Widens src (elements of `srcType`) to fp32; dst.size() * byteSize(srcType) must equal
/// src.size(). Vectorised for bf16, fp16 and the fp8 types. Bit-identical to decodeFloat.
void convertToFloat(std::span<const std::byte> src, DType srcType, std::span<float> dst);

/// Name of the SIMD instruction set the bulk conversions dispatch to on this host, e.g. "AVX3".
std::string_view simdTargetName();

}  // namespace trn
