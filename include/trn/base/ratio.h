// Ratio: an exact rational number, used for the dimensionless values of the hardware description
// (efficiencies such as 90%, throttle fractions, documented TFLOPS figures such as 78.6) and for
// evaluating cost formulas without rounding. Numerator and denominator are 64-bit; arithmetic
// reports overflow as an error instead of wrapping. Decimal text is read with base/decimal.h.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "trn/base/status.h"

namespace trn {

/// An exact fraction numerator/denominator in lowest terms with a positive denominator.
class Ratio {
 public:
  /// Zero.
  constexpr Ratio() = default;
  /// The whole number `whole`.
  constexpr explicit Ratio(std::int64_t whole) : numerator_(whole) {}

  /// numerator/denominator in lowest terms; an error if the denominator is zero.
  static Result<Ratio> make(std::int64_t numerator, std::int64_t denominator);

  /// Parses "3", "-2", "0.9", "1.5e3", "90%" or "13/3" exactly.
  static Result<Ratio> parse(std::string_view text);

  [[nodiscard]] std::int64_t numerator() const { return numerator_; }
  [[nodiscard]] std::int64_t denominator() const { return denominator_; }
  [[nodiscard]] bool isInteger() const { return denominator_ == 1; }

  /// Smallest integer >= the value, and largest integer <= the value.
  [[nodiscard]] std::int64_t ceil() const;
  [[nodiscard]] std::int64_t floor() const;

  /// Nearest double; for display and tolerance checks only.
  [[nodiscard]] double toDouble() const;

  /// Exact decimal when the expansion terminates ("0.9", "78.6"), otherwise "13/3".
  [[nodiscard]] std::string toString() const;

  friend bool operator==(const Ratio&, const Ratio&) = default;
  friend std::strong_ordering operator<=>(const Ratio& a, const Ratio& b);

 private:
  std::int64_t numerator_ = 0;
  std::int64_t denominator_ = 1;
};

/// Exact arithmetic; each fails with an out-of-range error on 64-bit overflow, and division
/// fails with an invalid-argument error when dividing by zero.
Result<Ratio> add(const Ratio& a, const Ratio& b);
Result<Ratio> subtract(const Ratio& a, const Ratio& b);
Result<Ratio> multiply(const Ratio& a, const Ratio& b);
Result<Ratio> divide(const Ratio& a, const Ratio& b);

}  // namespace trn
