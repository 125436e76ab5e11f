#include "trn/spec/ratio.h"

#include <cctype>
#include <optional>

#include <fmt/format.h>

namespace trn::spec {
namespace {

__extension__ using Int128 = __int128;  // exact intermediate arithmetic

constexpr int kMaxDigits = 30;

Int128 absolute(Int128 v) { return v < 0 ? -v : v; }

Int128 gcd(Int128 a, Int128 b) {
  a = absolute(a);
  b = absolute(b);
  while (b != 0) {
    const Int128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/// Reduces numerator/denominator (denominator != 0) and checks that both fit in 64 bits.
Result<Ratio> reduce(Int128 numerator, Int128 denominator) {
  if (denominator == 0) {
    return invalidArgument("division by zero");
  }
  if (denominator < 0) {
    numerator = -numerator;
    denominator = -denominator;
  }
  const Int128 g = gcd(numerator, denominator);
  if (g > 1) {
    numerator /= g;
    denominator /= g;
  }
  if (numerator > Int128{INT64_MAX} || numerator < -Int128{INT64_MAX} ||
      denominator > Int128{INT64_MAX}) {
    return outOfRange("value does not fit in a 64-bit fraction");
  }
  return Ratio::make(static_cast<std::int64_t>(numerator), static_cast<std::int64_t>(denominator));
}

bool scaleBy10(Int128& value, int times) {
  for (int i = 0; i < times; ++i) {
    if (__builtin_mul_overflow(value, Int128{10}, &value)) {
      return false;
    }
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
    s.remove_prefix(1);
  }
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
    s.remove_suffix(1);
  }
  return s;
}

/// Reads [+-]digits[.digits][e[+-]digits] from the front of `s`; returns mantissa and exponent.
std::optional<std::pair<Int128, int>> readDecimal(std::string_view& s) {
  std::size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
    negative = s[i] == '-';
    ++i;
  }
  Int128 mantissa = 0;
  int exponent = 0;
  int digits = 0;
  bool sawDigit = false;
  bool sawPoint = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.' && !sawPoint) {
      sawPoint = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) {
      break;
    }
    sawDigit = true;
    if ((mantissa != 0 || c != '0') && ++digits > kMaxDigits) {
      return std::nullopt;
    }
    mantissa = mantissa * 10 + (c - '0');
    exponent -= sawPoint ? 1 : 0;
  }
  if (!sawDigit) {
    return std::nullopt;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    std::size_t j = i + 1;
    bool negativeExponent = false;
    if (j < s.size() && (s[j] == '-' || s[j] == '+')) {
      negativeExponent = s[j] == '-';
      ++j;
    }
    const std::size_t start = j;
    int value = 0;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j])) && value < 100) {
      value = value * 10 + (s[j] - '0');
      ++j;
    }
    if (j == start || value >= 100) {
      return std::nullopt;
    }
    exponent += negativeExponent ? -value : value;
    i = j;
  }
  s.remove_prefix(i);
  return std::pair{negative ? -mantissa : mantissa, exponent};
}

}  // namespace

Result<Ratio> Ratio::make(std::int64_t numerator, std::int64_t denominator) {
  if (denominator == 0) {
    return invalidArgument("division by zero");
  }
  if (numerator == INT64_MIN || denominator == INT64_MIN) {
    return outOfRange("value does not fit in a 64-bit fraction");
  }
  Ratio r;
  const Int128 g = gcd(numerator, denominator);
  const std::int64_t sign = denominator < 0 ? -1 : 1;
  r.numerator_ = static_cast<std::int64_t>(numerator / g) * sign;
  r.denominator_ = static_cast<std::int64_t>(denominator / g) * sign;
  return r;
}

Result<Ratio> Ratio::parse(std::string_view text) {
  const std::string_view trimmed = trim(text);
  std::string_view rest = trimmed;
  const auto bad = [&] {
    return invalidArgument(
        fmt::format("'{}' is not a number; expected e.g. 3, 0.9, 1.5e3, 90% or 13/3", text));
  };
  const auto decimal = readDecimal(rest);
  if (!decimal) {
    return bad();
  }
  Int128 numerator = decimal->first;
  Int128 denominator = 1;
  int exponent = decimal->second;
  rest = trim(rest);
  if (rest == "%") {
    exponent -= 2;
  } else if (!rest.empty() && rest.front() == '/') {
    rest.remove_prefix(1);
    const auto divisor = readDecimal(rest);
    if (!divisor || !trim(rest).empty() || divisor->second != 0) {
      return bad();
    }
    denominator = divisor->first;
    if (denominator == 0) {
      return invalidArgument(fmt::format("'{}' divides by zero", text));
    }
  } else if (!rest.empty()) {
    return bad();
  }
  const bool fits = exponent >= 0 ? scaleBy10(numerator, exponent)
                                  : scaleBy10(denominator, -exponent);
  if (!fits) {
    return outOfRange(fmt::format("'{}' is too large", text));
  }
  Result<Ratio> r = reduce(numerator, denominator);
  if (!r.ok()) {
    return outOfRange(fmt::format("'{}' is too large", text));
  }
  return r;
}

std::int64_t Ratio::floor() const {
  const std::int64_t q = numerator_ / denominator_;
  return (numerator_ % denominator_ != 0 && numerator_ < 0) ? q - 1 : q;
}

std::int64_t Ratio::ceil() const {
  const std::int64_t q = numerator_ / denominator_;
  return (numerator_ % denominator_ != 0 && numerator_ > 0) ? q + 1 : q;
}

double Ratio::toDouble() const {
  return static_cast<double>(numerator_) / static_cast<double>(denominator_);
}

std::string Ratio::toString() const {
  std::int64_t rest = denominator_;
  while (rest % 2 == 0) {
    rest /= 2;
  }
  while (rest % 5 == 0) {
    rest /= 5;
  }
  if (rest != 1) {
    return fmt::format("{}/{}", numerator_, denominator_);
  }
  const Int128 magnitude = absolute(numerator_);
  std::string out = fmt::format("{}{}", numerator_ < 0 ? "-" : "",
                                static_cast<std::int64_t>(magnitude / denominator_));
  Int128 remainder = magnitude % denominator_;
  if (remainder != 0) {
    out += '.';
    while (remainder != 0) {
      remainder *= 10;
      out += static_cast<char>('0' + static_cast<int>(remainder / denominator_));
      remainder %= denominator_;
    }
  }
  return out;
}

std::strong_ordering operator<=>(const Ratio& a, const Ratio& b) {
  return Int128{a.numerator_} * b.denominator_ <=> Int128{b.numerator_} * a.denominator_;
}

Result<Ratio> add(const Ratio& a, const Ratio& b) {
  return reduce(Int128{a.numerator()} * b.denominator() + Int128{b.numerator()} * a.denominator(),
                Int128{a.denominator()} * b.denominator());
}

Result<Ratio> subtract(const Ratio& a, const Ratio& b) {
  return reduce(Int128{a.numerator()} * b.denominator() - Int128{b.numerator()} * a.denominator(),
                Int128{a.denominator()} * b.denominator());
}

Result<Ratio> multiply(const Ratio& a, const Ratio& b) {
  return reduce(Int128{a.numerator()} * b.numerator(), Int128{a.denominator()} * b.denominator());
}

Result<Ratio> divide(const Ratio& a, const Ratio& b) {
  if (b.numerator() == 0) {
    return invalidArgument("division by zero");
  }
  return reduce(Int128{a.numerator()} * b.denominator(), Int128{a.denominator()} * b.numerator());
}

}  // namespace trn::spec
