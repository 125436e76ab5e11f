// Test-only float64 references for the DMA and Scalar-engine golden tests: decoding of the narrow
// float formats and their round-to-nearest-even quantisation, written from the IEEE-754 rules
// independently of src/numerics (which the code under test uses).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace trn::isa::testref {

/// An IEEE-like binary format with Inf and NaN (exponent all ones).
struct Format {
  int exponentBits;
  int mantissaBits;
  [[nodiscard]] int bias() const { return (1 << (exponentBits - 1)) - 1; }
  [[nodiscard]] int minExponent() const { return 1 - bias(); }
  [[nodiscard]] double maxFinite() const {
    return std::ldexp(2.0 - std::ldexp(1.0, -mantissaBits), bias());
  }
};

inline constexpr Format kBf16{8, 7};
inline constexpr Format kFp16{5, 10};
inline constexpr Format kFp8E4m3{4, 3};  // Trainium2 fp8_e4m3: IEEE-like, max 240
inline constexpr Format kFp8E5m2{5, 2};
inline constexpr Format kFp32{8, 23};

/// The value of encoding `bits` of `f`.
inline double decode(std::uint32_t bits, Format f) {
  const int m = f.mantissaBits;
  const std::uint32_t mantissa = bits & ((1u << m) - 1);
  const std::uint32_t exponent = (bits >> m) & ((1u << f.exponentBits) - 1);
  const bool negative = ((bits >> (m + f.exponentBits)) & 1u) != 0;
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

/// The representable neighbours of finite `v` in `f`: {toward zero, away from zero}.
inline std::pair<double, double> neighbours(double v, Format f) {
  const double q = spacing(std::fabs(v), f);
  const double low = std::floor(std::fabs(v) / q) * q;
  const double high = low == std::fabs(v) ? low : low + q;
  return {std::copysign(low, v), std::copysign(high, v)};
}

/// Element i of little-endian storage of `bytesPerElement`-byte elements as an integer.
inline std::uint32_t rawElement(const std::vector<std::byte>& bytes, std::size_t i,
                                int bytesPerElement) {
  std::uint32_t v = 0;
  std::memcpy(&v, bytes.data() + i * static_cast<std::size_t>(bytesPerElement),
              static_cast<std::size_t>(bytesPerElement));
  return v;
}

/// Decodes every element of `bytes` in format `f` (element width from the format).
inline std::vector<double> decodeAll(const std::vector<std::byte>& bytes, Format f) {
  const int width = (1 + f.exponentBits + f.mantissaBits) / 8;
  std::vector<double> out(bytes.size() / static_cast<std::size_t>(width));
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = decode(rawElement(bytes, i, width), f);
  }
  return out;
}

/// Expects `got` to equal `want` exactly, treating any NaN as equal to any NaN and telling
/// +0 from -0.
inline void expectSameValue(double got, double want, const std::string& where) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << where << ": got " << got << ", want NaN";
    return;
  }
  EXPECT_EQ(got, want) << where;
  EXPECT_EQ(std::signbit(got), std::signbit(want)) << where << ": sign of " << got;
}

}  // namespace trn::isa::testref
