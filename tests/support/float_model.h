// Test support: an independent float64 model of the IEEE-like narrow float formats (fp32, tf32,
// bf16, fp16, fp8 e4m3/e5m2): decoding, round-to-nearest-even encoding, spacing and neighbours,
// written from the IEEE-754 rules rather than from src/numerics, so golden tests compare the
// simulator against something it does not share code with.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

namespace trn::testing {

/// An IEEE-like binary format (exponent all ones = Inf/NaN).
struct Format {
  int exponentBits;
  int mantissaBits;
  int storageShift = 0;  ///< tf32 codes sit in the top 19 bits of a 32-bit word
  [[nodiscard]] int bias() const { return (1 << (exponentBits - 1)) - 1; }
  [[nodiscard]] int minExponent() const { return 1 - bias(); }
  [[nodiscard]] int bits() const { return 1 + exponentBits + mantissaBits; }
  [[nodiscard]] double maxFinite() const {
    return std::ldexp(2.0 - std::ldexp(1.0, -mantissaBits), bias());
  }
};

inline constexpr Format kFp32{8, 23};
inline constexpr Format kTf32{8, 10, 13};
inline constexpr Format kBf16{8, 7};
inline constexpr Format kFp16{5, 10};
inline constexpr Format kFp8E4m3{4, 3};  // Trainium2 fp8_e4m3: IEEE-like, max 240
inline constexpr Format kFp8E5m2{5, 2};

/// The value of code `code` of `f` (already shifted down for tf32).
inline double decode(std::uint32_t code, Format f) {
  const int m = f.mantissaBits;
  const std::uint32_t mantissa = code & ((1u << m) - 1);
  const std::uint32_t exponent = (code >> m) & ((1u << f.exponentBits) - 1);
  const bool negative = ((code >> (m + f.exponentBits)) & 1u) != 0;
  double magnitude = 0;
  if (exponent == (1u << f.exponentBits) - 1) {
    magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), f.minExponent() - m);
  } else {
    magnitude = std::ldexp(1.0 + std::ldexp(static_cast<double>(mantissa), -m),
                           static_cast<int>(exponent) - f.bias());
  }
  return negative ? -magnitude : magnitude;
}

/// Spacing of `f` at magnitude `a` (> 0).
inline double spacing(double a, Format f) {
  const int e = std::max(std::ilogb(a), f.minExponent());
  return std::ldexp(1.0, e - f.mantissaBits);
}

/// `v` rounded to `f`, nearest-even; overflow gives +-Inf; NaN stays NaN; zero keeps its sign.
inline double roundNearestEven(double v, Format f) {
  if (std::isnan(v) || std::isinf(v) || v == 0) {
    return v;
  }
  const double q = spacing(std::fabs(v), f);
  const double r = std::nearbyint(std::fabs(v) / q) * q;  // default mode: ties to even
  const double magnitude = r > f.maxFinite() ? std::numeric_limits<double>::infinity() : r;
  return std::copysign(magnitude, v);
}

/// The code of `v` rounded to nearest even (overflow to Inf; NaN to the quiet NaN).
inline std::uint32_t encodeRne(double v, Format f) {
  const std::uint32_t sign = std::signbit(v) ? 1u << (f.bits() - 1) : 0u;
  const std::uint32_t infCode = ((1u << f.exponentBits) - 1) << f.mantissaBits;
  if (std::isnan(v)) {
    return infCode | (1u << (f.mantissaBits - 1));
  }
  const double r = std::fabs(roundNearestEven(v, f));
  if (std::isinf(r)) {
    return sign | infCode;
  }
  if (r < std::ldexp(1.0, f.minExponent())) {
    return sign | static_cast<std::uint32_t>(std::ldexp(r, f.bias() - 1 + f.mantissaBits));
  }
  const int re = std::ilogb(r);
  const auto mant =
      static_cast<std::uint32_t>(std::ldexp(r, f.mantissaBits - re)) - (1u << f.mantissaBits);
  return sign | (static_cast<std::uint32_t>(re + f.bias()) << f.mantissaBits) | mant;
}

/// The representable neighbours of finite `v` in `f`: {toward zero, away from zero}.
inline std::pair<double, double> neighbours(double v, Format f) {
  const double q = spacing(std::fabs(v), f);
  const double low = std::floor(std::fabs(v) / q) * q;
  const double high = low == std::fabs(v) ? low : low + q;
  return {std::copysign(low, v), std::copysign(high, v)};
}

}  // namespace trn::testing
