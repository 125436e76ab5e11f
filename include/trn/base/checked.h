// Checked integer arithmetic: the one way trnsim computes sizes, counts, strides, offsets and
// times that come from user input (programs, configs, .npy headers, shapes). A Checked<T> carries
// its value and a sticky overflow flag through +, - and *, so a whole expression such as
// `Checked(count) * stride * elementBytes + offset` is evaluated once and tested once; a result
// that does not fit in T is an overflow, never a wrapped value.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "trn/base/check.h"

namespace trn {

template <std::integral T>
class Checked {
 public:
  constexpr Checked() = default;
  constexpr Checked(T value) : value_(value) {}  // NOLINT(google-explicit-constructor)

  /// True when no operation so far has overflowed.
  [[nodiscard]] constexpr bool valid() const { return !overflow_; }

  /// The value; calling it after an overflow is a bug (TRN_CHECK).
  [[nodiscard]] constexpr T value() const {
    TRN_CHECK(valid()) << "value() of an overflowed Checked";
    return value_;
  }

  /// The value, or nullopt after an overflow.
  [[nodiscard]] constexpr std::optional<T> get() const {
    return valid() ? std::optional<T>(value_) : std::nullopt;
  }

  constexpr Checked& operator+=(Checked other) {
    overflow_ = overflow_ || other.overflow_ || __builtin_add_overflow(value_, other.value_, &value_);
    return *this;
  }
  constexpr Checked& operator-=(Checked other) {
    overflow_ = overflow_ || other.overflow_ || __builtin_sub_overflow(value_, other.value_, &value_);
    return *this;
  }
  constexpr Checked& operator*=(Checked other) {
    overflow_ = overflow_ || other.overflow_ || __builtin_mul_overflow(value_, other.value_, &value_);
    return *this;
  }
  friend constexpr Checked operator+(Checked a, Checked b) { return a += b; }
  friend constexpr Checked operator-(Checked a, Checked b) { return a -= b; }
  friend constexpr Checked operator*(Checked a, Checked b) { return a *= b; }

 private:
  T value_ = 0;
  bool overflow_ = false;
};

Checked(std::int64_t) -> Checked<std::int64_t>;

/// `value` converted to To, or nullopt when it does not fit.
template <std::integral To, std::integral From>
constexpr std::optional<To> checkedCast(From value) {
  if (!std::in_range<To>(value)) {
    return std::nullopt;
  }
  return static_cast<To>(value);
}

}  // namespace trn
