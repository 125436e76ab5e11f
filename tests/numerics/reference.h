// An independent reference for the numerics tests. Formats are described here by hand (not read
// from the implementation's traits), values are derived from the bit-level formula
// (-1)^s * 2^(e - bias) * (1 + m / 2^M) in double precision, and rounding is done by searching
// the sorted table of every finite value of the format.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "trn/numerics/dtype.h"

namespace trn::reference {

/// Debug and sanitizer builds run the same checks over fewer random inputs and a sparser sweep,
/// so that they finish in seconds too; optimised builds run the full sets.
#ifdef NDEBUG
inline constexpr std::uint64_t kRandomInputs = std::uint64_t{1} << 20;
inline constexpr std::uint32_t kSweepStride = 1;
#else
inline constexpr std::uint64_t kRandomInputs = std::uint64_t{1} << 14;
inline constexpr std::uint32_t kSweepStride = 29;
#endif

/// A float format as the tests understand it.
struct Format {
  DType type;
  int exponentBits;
  int mantissaBits;
  int bias;
  bool hasInf;
  bool fnNan;             ///< NaN only at S.1..1.1..1 (OCP "fn"); otherwise IEEE NaN
  int storageShift;       ///< tf32 codes sit in the top 19 bits of a 32-bit word
  std::uint32_t nanCode;  ///< the canonical NaN the implementation must produce
};

inline constexpr Format kTf32{DType::kTf32, 8, 10, 127, true, false, 13, 0x3FE00};
inline constexpr Format kBf16{DType::kBf16, 8, 7, 127, true, false, 0, 0x7FC0};
inline constexpr Format kFp16{DType::kFp16, 5, 10, 15, true, false, 0, 0x7E00};
inline constexpr Format kE4m3{DType::kFp8E4m3, 4, 3, 7, true, false, 0, 0x7C};
inline constexpr Format kE5m2{DType::kFp8E5m2, 5, 2, 15, true, false, 0, 0x7E};
inline constexpr Format kE3m4{DType::kFp8E3m4, 3, 4, 3, true, false, 0, 0x78};
inline constexpr Format kE4m3Fn{DType::kFp8E4m3Fn, 4, 3, 7, false, true, 0, 0x7F};

/// The formats with at most 16 bits, which are tested exhaustively.
inline constexpr Format kSmallFormats[] = {kBf16, kFp16, kE4m3, kE5m2, kE3m4, kE4m3Fn};
/// Every float format other than fp32.
inline constexpr Format kNarrowFormats[] = {kTf32, kBf16, kFp16, kE4m3, kE5m2, kE3m4, kE4m3Fn};

enum class Class { kZero, kSubnormal, kNormal, kInf, kNan };

struct Decoded {
  Class cls;
  double value;  ///< signed; +-infinity for kInf, NaN for kNan
};

inline std::uint32_t codeCount(const Format& f) {
  return std::uint32_t{1} << (1 + f.exponentBits + f.mantissaBits);
}
inline std::uint32_t signBit(const Format& f) {
  return std::uint32_t{1} << (f.exponentBits + f.mantissaBits);
}

/// Value of `code` (unshifted) by the textbook formula.
inline Decoded decode(const Format& f, std::uint32_t code) {
  const bool negative = (code & signBit(f)) != 0;
  const std::uint32_t exponent = (code >> f.mantissaBits) & ((1u << f.exponentBits) - 1);
  const std::uint32_t mantissa = code & ((1u << f.mantissaBits) - 1);
  const std::uint32_t maxExponent = (1u << f.exponentBits) - 1;
  const double sign = negative ? -1.0 : 1.0;
  if (exponent == maxExponent) {
    if (f.fnNan) {
      if (mantissa == (1u << f.mantissaBits) - 1) {
        return {Class::kNan, std::nan("")};
      }
    } else {
      return mantissa == 0 ? Decoded{Class::kInf, sign * HUGE_VAL}
                           : Decoded{Class::kNan, std::nan("")};
    }
  }
  if (exponent == 0) {
    const double value =
        sign * std::ldexp(1.0, 1 - f.bias) * (mantissa / std::ldexp(1.0, f.mantissaBits));
    return {mantissa == 0 ? Class::kZero : Class::kSubnormal, value};
  }
  const double value = sign * std::ldexp(1.0, static_cast<int>(exponent) - f.bias) *
                       (1.0 + mantissa / std::ldexp(1.0, f.mantissaBits));
  return {Class::kNormal, value};
}

/// Every non-negative finite value of a format with its code, ascending.
struct Entry {
  double value;
  std::uint32_t code;
};

inline std::vector<Entry> finiteTable(const Format& f) {
  std::vector<Entry> table;
  for (std::uint32_t code = 0; code < signBit(f); ++code) {
    const Decoded d = decode(f, code);
    if (d.cls != Class::kInf && d.cls != Class::kNan) {
      table.push_back({d.value, code});
    }
  }
  std::sort(table.begin(), table.end(),
            [](const Entry& a, const Entry& b) { return a.value < b.value; });
  return table;
}

enum class Mode { kNearestEven, kTowardZero };

/// The expected code (unshifted) of fp32 value x in format f: nearest (ties to the even code) or
/// truncated, found by searching `table`. Beyond the largest value the next candidate is the
/// virtual value max + spacing (code maxCode + 1); choosing it means overflow, which gives Inf
/// unless the format has none, `saturate` is set, or the mode truncates.
inline std::uint32_t round(const Format& f, const std::vector<Entry>& table, float x, Mode mode,
                           bool saturate) {
  const Entry& maxEntry = table.back();
  const std::uint32_t infCode = ((1u << f.exponentBits) - 1) << f.mantissaBits;
  const bool clamp = saturate || !f.hasInf;
  if (std::isnan(x)) {
    return f.nanCode;
  }
  const std::uint32_t sign = std::signbit(x) ? signBit(f) : 0;
  if (std::isinf(x)) {
    return sign | (clamp ? maxEntry.code : infCode);
  }
  const double a = std::fabs(static_cast<double>(x));
  // Largest entry <= a.
  auto it = std::upper_bound(table.begin(), table.end(), a,
                             [](double v, const Entry& e) { return v < e.value; });
  const Entry lo = *(it - 1);
  Entry hi{};
  if (it == table.end()) {
    hi = {maxEntry.value + (maxEntry.value - (table.end() - 2)->value), maxEntry.code + 1};
  } else {
    hi = *it;
  }
  Entry chosen = lo;
  if (mode == Mode::kNearestEven && a != lo.value) {
    const double below = a - lo.value;
    const double above = hi.value - a;
    if (above < below || (above == below && (hi.code & 1) == 0)) {
      chosen = hi;
    }
  }
  if (chosen.code > maxEntry.code) {
    return sign | (clamp ? maxEntry.code : infCode);
  }
  return sign | chosen.code;
}

}  // namespace trn::reference
