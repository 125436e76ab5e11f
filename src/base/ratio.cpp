#include "trn/base/ratio.h"

#include <optional>

#include <fmt/format.h>

#include "trn/base/decimal.h"

namespace trn {
namespace {

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
  const auto bad = [&] {
    return invalidArgument(
        fmt::format("'{}' is not a number; expected e.g. 3, 0.9, 1.5e3, 90% or 13/3", text));
  };
  const std::optional<DecimalPrefix> number = parseDecimalPrefix(trimWhitespace(text));
  if (!number) {
    return bad();
  }
  Int128 numerator = number->value.signedMantissa();
  Int128 denominator = 1;
  int exponent = number->value.exponent;
  const std::string_view rest = trimWhitespace(number->rest);
  if (rest == "%") {
    exponent -= 2;
  } else if (!rest.empty() && rest.front() == '/') {
    const std::optional<DecimalPrefix> divisor = parseDecimalPrefix(rest.substr(1));
    if (!divisor || !trimWhitespace(divisor->rest).empty() || divisor->value.exponent != 0) {
      return bad();
    }
    denominator = divisor->value.signedMantissa();
    if (denominator == 0) {
      return invalidArgument(fmt::format("'{}' divides by zero", text));
    }
  } else if (!rest.empty()) {
    return bad();
  }
  const bool fits = exponent >= 0 ? scaleByPowerOfTen(numerator, exponent)
                                  : scaleByPowerOfTen(denominator, -exponent);
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
  return formatTerminatingDecimal(numerator_, denominator_);
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

}  // namespace trn
