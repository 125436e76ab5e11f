// Exact decimal literals: the number at the front of a string such as "1.3us", "0.9", "90%" or
// "1.5e3", split into an integer mantissa and a power of ten so that unit quantities
// (base/units.h) and exact fractions (base/ratio.h) are converted without any floating-point
// rounding; the checked 128-bit helpers those conversions scale the mantissa with; and the
// reverse, the exact decimal text of a fraction whose expansion terminates ("78.6432").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trn {

/// A signed 128-bit integer for exact intermediate arithmetic (a GCC/Clang extension).
__extension__ using Int128 = __int128;

/// At most this many significant digits (leading zeros do not count) are accepted, so the
/// mantissa always fits in an Int128.
inline constexpr int kMaxDecimalDigits = 30;

/// The written exponent ("e999") is at most this large in magnitude.
inline constexpr int kMaxDecimalExponent = 999;

/// An exact decimal number: (negative ? -1 : 1) * mantissa * 10^exponent.
struct Decimal {
  Int128 mantissa = 0;    ///< every digit written, the point removed; never negative
  int exponent = 0;       ///< the written exponent minus the number of fraction digits
  bool negative = false;  ///< a leading '-' was written (also for "-0")

  /// The mantissa with the sign applied.
  [[nodiscard]] Int128 signedMantissa() const { return negative ? -mantissa : mantissa; }
};

/// A decimal read from the front of a string, and the text that follows it.
struct DecimalPrefix {
  Decimal value;
  std::string_view rest;  ///< unread remainder of the input, e.g. "GHz" after "2.4"
};

/// Reads `[+-]digits[.digits][(e|E)[+-]digits]` from the front of `text`; the integer or the
/// fraction part may be empty but not both ("5.", ".5"). No whitespace is skipped. An 'e' or 'E'
/// after the digits always starts an exponent, so it must be followed by digits. Returns nullopt
/// when there is no digit, an exponent has no digits or exceeds kMaxDecimalExponent, or there
/// are more than kMaxDecimalDigits significant digits.
std::optional<DecimalPrefix> parseDecimalPrefix(std::string_view text);

/// value *= factor; false (value unspecified) on Int128 overflow.
bool multiplyChecked(Int128& value, Int128 factor);

/// value *= 10^exponent for exponent >= 0; false (value unspecified) on Int128 overflow.
bool scaleByPowerOfTen(Int128& value, int exponent);

/// The exact decimal expansion of numerator/denominator, e.g. (-7, 4) -> "-1.75", (3, 1) -> "3".
/// Requires denominator > 0 with no prime factor other than 2 and 5, so the expansion
/// terminates; anything else is a bug (TRN_CHECK).
std::string formatTerminatingDecimal(std::int64_t numerator, std::int64_t denominator);

/// `text` without leading and trailing whitespace (std::isspace), the form in which numbers
/// and their units are compared.
std::string_view trimWhitespace(std::string_view text);

}  // namespace trn
