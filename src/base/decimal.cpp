#include "trn/base/decimal.h"

#include <cctype>
#include <cstddef>

#include <fmt/format.h>

#include "trn/base/check.h"

namespace trn {
namespace {

bool isDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

/// Reads the optional "(e|E)[+-]digits" at text[i]; adds it to `exponent` and advances `i`.
/// False when an exponent is started but has no digits or is too large.
bool readExponent(std::string_view text, std::size_t& i, int& exponent) {
  if (i >= text.size() || (text[i] != 'e' && text[i] != 'E')) {
    return true;
  }
  std::size_t j = i + 1;
  bool negative = false;
  if (j < text.size() && (text[j] == '-' || text[j] == '+')) {
    negative = text[j] == '-';
    ++j;
  }
  const std::size_t start = j;
  int value = 0;
  while (j < text.size() && isDigit(text[j]) && value <= kMaxDecimalExponent) {
    value = value * 10 + (text[j] - '0');
    ++j;
  }
  if (j == start || value > kMaxDecimalExponent) {
    return false;
  }
  exponent += negative ? -value : value;
  i = j;
  return true;
}

}  // namespace

std::optional<DecimalPrefix> parseDecimalPrefix(std::string_view text) {
  Decimal d;
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) {
    d.negative = text[i] == '-';
    ++i;
  }
  int significantDigits = 0;
  bool sawDigit = false;
  bool sawPoint = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.' && !sawPoint) {
      sawPoint = true;
      continue;
    }
    if (!isDigit(c)) {
      break;
    }
    sawDigit = true;
    if ((d.mantissa != 0 || c != '0') && ++significantDigits > kMaxDecimalDigits) {
      return std::nullopt;
    }
    d.mantissa = d.mantissa * 10 + (c - '0');
    d.exponent -= sawPoint ? 1 : 0;
  }
  if (!sawDigit || !readExponent(text, i, d.exponent)) {
    return std::nullopt;
  }
  return DecimalPrefix{d, text.substr(i)};
}

bool multiplyChecked(Int128& value, Int128 factor) {
  return !__builtin_mul_overflow(value, factor, &value);
}

bool scaleByPowerOfTen(Int128& value, int exponent) {
  for (int k = 0; k < exponent; ++k) {
    if (!multiplyChecked(value, 10)) {
      return false;
    }
  }
  return true;
}

std::string formatTerminatingDecimal(std::int64_t numerator, std::int64_t denominator) {
  TRN_CHECK(denominator > 0) << "denominator " << denominator << " is not positive";
  const Int128 magnitude = numerator < 0 ? -Int128{numerator} : Int128{numerator};
  std::string out = fmt::format("{}{}", numerator < 0 ? "-" : "",
                                static_cast<std::uint64_t>(magnitude / denominator));
  Int128 remainder = magnitude % denominator;
  if (remainder != 0) {
    out += '.';
  }
  // A denominator 2^a * 5^b < 2^63 needs at most 63 fraction digits.
  for (int digits = 0; remainder != 0; ++digits) {
    TRN_CHECK(digits < 64) << numerator << "/" << denominator << " does not terminate";
    remainder *= 10;
    out += static_cast<char>('0' + static_cast<int>(remainder / denominator));
    remainder %= denominator;
  }
  return out;
}

std::string_view trimWhitespace(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

}  // namespace trn
