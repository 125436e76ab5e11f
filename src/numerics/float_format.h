// Encoding constants of a floating-point DType, derived from its traits, shared by the scalar
// reference conversions and the SIMD kernels. Private to the numerics module.
#pragma once

#include <cstdint>

#include "trn/numerics/convert.h"
#include "trn/numerics/dtype.h"

namespace trn::numerics {

/// Bit-level description of a float format: code = sign | exponent | mantissa in the low
/// 1 + exponentBits + mantissaBits bits, stored shifted left by `storageShift` (13 for tf32).
/// A structural type, so kernels can take it as a template parameter.
struct FloatFormat {
  int exponentBits;
  int mantissaBits;
  int bias;
  bool hasInf;
  bool nanAllOnes;  ///< NaN is only S.1..1.1..1 (OCP "fn"); otherwise IEEE NaN
  int storageShift;

  [[nodiscard]] constexpr int codeBits() const { return 1 + exponentBits + mantissaBits; }
  [[nodiscard]] constexpr std::uint32_t signBit() const {
    return std::uint32_t{1} << (exponentBits + mantissaBits);
  }
  [[nodiscard]] constexpr std::uint32_t magnitudeMask() const { return signBit() - 1; }
  [[nodiscard]] constexpr std::uint32_t mantissaMask() const {
    return (std::uint32_t{1} << mantissaBits) - 1;
  }
  [[nodiscard]] constexpr std::uint32_t maxExponentField() const {
    return (std::uint32_t{1} << exponentBits) - 1;
  }
  /// Smallest normal exponent, unbiased.
  [[nodiscard]] constexpr int minExponent() const { return 1 - bias; }
  /// Code of +Inf (IEEE formats): exponent all ones, mantissa 0.
  [[nodiscard]] constexpr std::uint32_t infCode() const {
    return maxExponentField() << mantissaBits;
  }
  /// Code of +maxFinite.
  [[nodiscard]] constexpr std::uint32_t maxCode() const {
    return nanAllOnes ? magnitudeMask() - 1 : infCode() - 1;
  }
  /// Code of the canonical NaN: positive, quiet (top mantissa bit set) for IEEE formats,
  /// 0.1..1.1..1 for "fn" formats.
  [[nodiscard]] constexpr std::uint32_t nanCode() const {
    return nanAllOnes ? magnitudeMask()
                      : infCode() | (std::uint32_t{1} << (mantissaBits - 1));
  }
};

/// The format of a float DType.
constexpr FloatFormat floatFormat(DType type) {
  const DTypeTraits& t = dtypeTraits(type);
  return FloatFormat{t.exponentBits,
                     t.mantissaBits,
                     t.exponentBias,
                     t.hasInf,
                     t.nan == NanEncoding::kAllOnes,
                     type == DType::kTf32 ? 13 : 0};
}

inline constexpr FloatFormat kFp32Format = floatFormat(DType::kFp32);
inline constexpr FloatFormat kTf32Format = floatFormat(DType::kTf32);
inline constexpr FloatFormat kBf16Format = floatFormat(DType::kBf16);
inline constexpr FloatFormat kFp16Format = floatFormat(DType::kFp16);
inline constexpr FloatFormat kFp8E4m3Format = floatFormat(DType::kFp8E4m3);
inline constexpr FloatFormat kFp8E5m2Format = floatFormat(DType::kFp8E5m2);
inline constexpr FloatFormat kFp8E3m4Format = floatFormat(DType::kFp8E3m4);
inline constexpr FloatFormat kFp8E4m3FnFormat = floatFormat(DType::kFp8E4m3Fn);

static_assert(kFp8E4m3Format.maxCode() == 0x77 && kFp8E4m3Format.nanCode() == 0x7C);
static_assert(kFp8E4m3FnFormat.maxCode() == 0x7E && kFp8E4m3FnFormat.nanCode() == 0x7F);
static_assert(kFp8E5m2Format.maxCode() == 0x7B && kFp8E5m2Format.nanCode() == 0x7E);
static_assert(kFp16Format.maxCode() == 0x7BFF && kFp16Format.nanCode() == 0x7E00);
static_assert(kBf16Format.nanCode() == 0x7FC0 && kFp32Format.nanCode() == 0x7FC00000);

/// Scalar reference: the code (not shifted by storageShift) of fp32 `bits` in format `f`.
/// `mode` and `saturate` as in ConvertOptions; `randomWord` is used only by kStochastic.
std::uint32_t encodeToFormat(std::uint32_t bits, const FloatFormat& f, RoundingMode mode,
                             bool saturate, std::uint32_t randomWord);

/// Scalar reference: the fp32 bits of code `code` (not shifted by storageShift) of format `f`.
std::uint32_t decodeFromFormat(std::uint32_t code, const FloatFormat& f);

}  // namespace trn::numerics
