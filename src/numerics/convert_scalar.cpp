// The scalar definition of every conversion. The bulk (SIMD) paths in convert_simd.cpp are
// tested to be bit-identical to these functions.
#include "trn/numerics/convert.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>

#include "src/numerics/float_format.h"
#include "trn/base/check.h"
#include "trn/base/rng.h"

namespace trn {
namespace numerics {

std::uint32_t encodeToFormat(std::uint32_t bits, const FloatFormat& f, RoundingMode mode,
                             bool saturate, std::uint32_t randomWord) {
  const std::uint32_t sign = (bits >> 31) != 0 ? f.signBit() : 0;
  const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) {
    return f.nanCode();
  }
  const bool clampToMax = saturate || !f.hasInf;
  if (magnitude == 0x7F800000u) {
    return sign | (clampToMax ? f.maxCode() : f.infCode());
  }
  // magnitude = significand * 2^(exponent - 23), with fp32 subnormals at exponent -126.
  const int exponentField = static_cast<int>(magnitude >> 23);
  const std::uint64_t significand =
      (magnitude & 0x7FFFFFu) | (exponentField != 0 ? 0x800000u : 0u);
  const int exponent = std::max(exponentField, 1) - 127;
  // The target's spacing at this magnitude is 2^quantumExponent; `discard` low bits of the
  // significand fall below it.
  const int quantumExponent = std::max(exponent, f.minExponent()) - f.mantissaBits;
  const int discard = quantumExponent - (exponent - 23);
  TRN_DCHECK(discard >= 0);
  std::uint64_t kept = 0;
  std::uint64_t rest = significand;  // the discarded fraction is rest / 2^discard
  if (discard < 64) {
    kept = significand >> discard;
    rest = significand - (kept << discard);
  }
  bool roundUp = false;
  switch (mode) {
    case RoundingMode::kNearestEven:
      if (discard > 0 && discard < 64) {
        const std::uint64_t half = std::uint64_t{1} << (discard - 1);
        roundUp = rest > half || (rest == half && (kept & 1) != 0);
      }
      break;
    case RoundingMode::kStochastic: {
      // Top 32 bits of the discarded fraction, plus the random word: a carry rounds up.
      std::uint64_t top32 = 0;
      if (discard <= 32) {
        top32 = rest << (32 - discard);
      } else if (discard - 32 < 64) {
        top32 = rest >> (discard - 32);
      }
      roundUp = top32 + randomWord >= (std::uint64_t{1} << 32);
      break;
    }
    case RoundingMode::kTowardZero:
      break;
  }
  kept += roundUp ? 1 : 0;
  // A carry out of the mantissa (kept == 2^(M+1)) moves to the next binade by itself.
  const std::uint64_t code =
      exponent >= f.minExponent()
          ? (static_cast<std::uint64_t>(exponent + f.bias) << f.mantissaBits) + kept -
                (std::uint64_t{1} << f.mantissaBits)
          : kept;
  if (code > f.maxCode()) {
    const bool toMax = clampToMax || mode == RoundingMode::kTowardZero;
    return sign | (toMax ? f.maxCode() : f.infCode());
  }
  return sign | static_cast<std::uint32_t>(code);
}

std::uint32_t decodeFromFormat(std::uint32_t code, const FloatFormat& f) {
  const std::uint32_t sign = (code & f.signBit()) != 0 ? 0x80000000u : 0u;
  const std::uint32_t magnitude = code & f.magnitudeMask();
  const std::uint32_t exponentField = magnitude >> f.mantissaBits;
  const std::uint32_t mantissa = magnitude & f.mantissaMask();
  const int payloadShift = 23 - f.mantissaBits;
  const bool special = f.nanAllOnes ? magnitude == f.magnitudeMask()
                                    : exponentField == f.maxExponentField();
  if (special) {
    if (!f.nanAllOnes && mantissa == 0) {
      return sign | 0x7F800000u;
    }
    return sign | 0x7FC00000u | (mantissa << payloadShift);
  }
  if (exponentField == 0) {
    const float value = std::ldexp(static_cast<float>(mantissa), f.minExponent() - f.mantissaBits);
    return sign | std::bit_cast<std::uint32_t>(value);
  }
  const auto fp32Exponent =
      static_cast<std::uint32_t>(static_cast<int>(exponentField) - f.bias + 127);
  return sign | (fp32Exponent << 23) | (mantissa << payloadShift);
}

}  // namespace numerics

namespace {

using numerics::FloatFormat;
using numerics::floatFormat;

/// fp32 -> integer: round the magnitude as selected, restore the sign, saturate; NaN gives 0.
std::uint32_t encodeInteger(float value, DType type, RoundingMode mode, std::uint32_t randomWord) {
  const DTypeTraits& traits = dtypeTraits(type);
  if (std::isnan(value)) {
    return 0;
  }
  double result = 0;
  if (std::isinf(value)) {
    result = value > 0 ? traits.maxFinite : traits.lowest;
  } else {
    const double magnitude = std::fabs(static_cast<double>(value));
    double whole = std::floor(magnitude);
    const double fraction = magnitude - whole;  // exact: value has at most 24 significant bits
    bool roundUp = false;
    switch (mode) {
      case RoundingMode::kNearestEven:
        roundUp = fraction > 0.5 || (fraction == 0.5 && std::fmod(whole, 2.0) != 0.0);
        break;
      case RoundingMode::kStochastic: {
        const auto top32 = static_cast<std::uint64_t>(std::ldexp(fraction, 32));
        roundUp = top32 + randomWord >= (std::uint64_t{1} << 32);
        break;
      }
      case RoundingMode::kTowardZero:
        break;
    }
    whole += roundUp ? 1.0 : 0.0;
    result = std::clamp(value < 0 ? -whole : whole, traits.lowest, traits.maxFinite);
  }
  const auto integer = static_cast<std::int64_t>(result);
  const std::uint64_t mask = (std::uint64_t{1} << (8 * traits.byteSize)) - 1;
  return static_cast<std::uint32_t>(static_cast<std::uint64_t>(integer) & mask);
}

float decodeInteger(std::uint32_t bits, DType type) {
  switch (type) {
    case DType::kInt8: return static_cast<float>(static_cast<std::int8_t>(bits & 0xFFu));
    case DType::kInt16: return static_cast<float>(static_cast<std::int16_t>(bits & 0xFFFFu));
    case DType::kInt32: return static_cast<float>(static_cast<std::int32_t>(bits));
    case DType::kUint8: return static_cast<float>(bits & 0xFFu);
    case DType::kUint16: return static_cast<float>(bits & 0xFFFFu);
    case DType::kUint32: return static_cast<float>(bits);
    default: break;
  }
  TRN_UNREACHABLE() << "not an integer dtype: " << dtypeName(type);
  return 0;
}

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

}  // namespace

std::string_view roundingModeName(RoundingMode mode) {
  switch (mode) {
    case RoundingMode::kNearestEven: return "rne";
    case RoundingMode::kStochastic: return "stochastic";
    case RoundingMode::kTowardZero: return "rtz";
  }
  TRN_UNREACHABLE() << "bad RoundingMode " << static_cast<int>(mode);
  return {};
}

Result<RoundingMode> parseRoundingMode(std::string_view text) {
  struct Name {
    std::string_view text;
    RoundingMode mode;
  };
  constexpr Name kNames[] = {
      {"rne", RoundingMode::kNearestEven},       {"nearest_even", RoundingMode::kNearestEven},
      {"stochastic", RoundingMode::kStochastic}, {"sr", RoundingMode::kStochastic},
      {"rtz", RoundingMode::kTowardZero},        {"toward_zero", RoundingMode::kTowardZero},
      {"truncate", RoundingMode::kTowardZero},
  };
  for (const Name& name : kNames) {
    if (equalsIgnoringCase(text, name.text)) {
      return name.mode;
    }
  }
  return invalidArgument(fmt::format(
      "unknown rounding mode '{}'; valid names are rne (nearest_even), stochastic (sr) and rtz "
      "(toward_zero, truncate)",
      text));
}

std::uint32_t stochasticWord(const ConvertOptions& options, std::uint64_t index) {
  return CounterRng(options.seed, options.stream).at(index);
}

FloatClass classify(std::uint32_t bits, DType type) {
  TRN_CHECK(isFloat(type)) << "classify() needs a float dtype, got " << dtypeName(type);
  const FloatFormat f = floatFormat(type);
  const std::uint32_t magnitude = (bits >> f.storageShift) & f.magnitudeMask();
  const std::uint32_t exponentField = magnitude >> f.mantissaBits;
  const std::uint32_t mantissa = magnitude & f.mantissaMask();
  if (f.nanAllOnes ? magnitude == f.magnitudeMask() : exponentField == f.maxExponentField()) {
    return (!f.nanAllOnes && mantissa == 0) ? FloatClass::kInfinite : FloatClass::kNan;
  }
  if (exponentField == 0) {
    return mantissa == 0 ? FloatClass::kZero : FloatClass::kSubnormal;
  }
  return FloatClass::kNormal;
}

std::uint32_t encodeFloat(float value, DType type, const ConvertOptions& options,
                          std::uint32_t randomWord) {
  if (isInteger(type)) {
    return encodeInteger(value, type, options.rounding, randomWord);
  }
  const FloatFormat f = floatFormat(type);
  return numerics::encodeToFormat(std::bit_cast<std::uint32_t>(value), f, options.rounding,
                                  options.saturate, randomWord)
         << f.storageShift;
}

float decodeFloat(std::uint32_t bits, DType type) {
  if (isInteger(type)) {
    return decodeInteger(bits, type);
  }
  const FloatFormat f = floatFormat(type);
  const std::uint32_t code = (bits >> f.storageShift) & ((f.signBit() << 1) - 1);
  return std::bit_cast<float>(numerics::decodeFromFormat(code, f));
}

float quantize(float value, DType type, const ConvertOptions& options, std::uint32_t randomWord) {
  return decodeFloat(encodeFloat(value, type, options, randomWord), type);
}

}  // namespace trn
