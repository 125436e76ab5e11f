// The exact decimal parser shared by unit quantities and ratios: mantissa, exponent, sign, the
// unread rest, and the inputs it refuses.
#include "trn/base/decimal.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trn {
namespace {

/// Parses `text`, expecting success; returns the mantissa, exponent, sign and rest.
struct Parsed {
  std::int64_t mantissa = 0;
  int exponent = 0;
  bool negative = false;
  std::string rest;
};

Parsed parsed(std::string_view text) {
  const std::optional<DecimalPrefix> p = parseDecimalPrefix(text);
  EXPECT_TRUE(p.has_value()) << text;
  if (!p) {
    return {};
  }
  return {static_cast<std::int64_t>(p->value.mantissa), p->value.exponent, p->value.negative,
          std::string(p->rest)};
}

TEST(Decimal, Integers) {
  const Parsed p = parsed("128");
  EXPECT_EQ(p.mantissa, 128);
  EXPECT_EQ(p.exponent, 0);
  EXPECT_FALSE(p.negative);
  EXPECT_EQ(p.rest, "");
}

TEST(Decimal, LeadingZerosAreKeptOutOfTheDigitCount) {
  EXPECT_EQ(parsed("007").mantissa, 7);
  EXPECT_EQ(parsed("0").mantissa, 0);
  const std::string zeros(100, '0');
  EXPECT_EQ(parsed(zeros + "42").mantissa, 42);
  const Parsed small = parsed("0." + zeros + "5");
  EXPECT_EQ(small.mantissa, 5);
  EXPECT_EQ(small.exponent, -101);
}

TEST(Decimal, FractionsShiftTheExponent) {
  const Parsed p = parsed("2.4GHz");
  EXPECT_EQ(p.mantissa, 24);
  EXPECT_EQ(p.exponent, -1);
  EXPECT_EQ(p.rest, "GHz");
  EXPECT_EQ(parsed("78.6432").exponent, -4);
  EXPECT_EQ(parsed("1.50").mantissa, 150);
  EXPECT_EQ(parsed("1.50").exponent, -2);
  EXPECT_EQ(parsed(".5").mantissa, 5);
  EXPECT_EQ(parsed(".5").exponent, -1);
  EXPECT_EQ(parsed("5.").mantissa, 5);
  EXPECT_EQ(parsed("5.").exponent, 0);
  EXPECT_EQ(parsed("1.2.3").rest, ".3");
}

TEST(Decimal, Exponents) {
  EXPECT_EQ(parsed("1.5e3").mantissa, 15);
  EXPECT_EQ(parsed("1.5e3").exponent, 2);
  EXPECT_EQ(parsed("1E+3").exponent, 3);
  EXPECT_EQ(parsed("25e-3ns").exponent, -3);
  EXPECT_EQ(parsed("25e-3ns").rest, "ns");
  EXPECT_EQ(parsed("1e999").exponent, 999);
  EXPECT_EQ(parsed("1e-999").exponent, -999);
  EXPECT_EQ(parsed("1e0999").exponent, 999);
}

TEST(Decimal, Signs) {
  const Parsed minus = parsed("-2");
  EXPECT_TRUE(minus.negative);
  EXPECT_EQ(minus.mantissa, 2);
  EXPECT_FALSE(parsed("+2").negative);
  EXPECT_TRUE(parsed("-0").negative);
  EXPECT_EQ(parseDecimalPrefix("-2.5")->value.signedMantissa(), -25);
  EXPECT_EQ(parseDecimalPrefix("2.5")->value.signedMantissa(), 25);
}

TEST(Decimal, RestIsWhatFollowsTheNumber) {
  EXPECT_EQ(parsed("90%").rest, "%");
  EXPECT_EQ(parsed("13/3").rest, "/3");
  EXPECT_EQ(parsed("4 KiB").rest, " KiB");
  EXPECT_EQ(parsed("3x").rest, "x");
}

TEST(Decimal, TooManyDigits) {
  EXPECT_EQ(parsed(std::string(kMaxDecimalDigits, '9')).exponent, 0);
  EXPECT_FALSE(parseDecimalPrefix(std::string(kMaxDecimalDigits + 1, '9')).has_value());
  EXPECT_FALSE(parseDecimalPrefix("0." + std::string(kMaxDecimalDigits + 1, '1')).has_value());
}

TEST(Decimal, NoDigits) {
  for (const char* text : {"", "-", "+", ".", "-.", "abc", " 1", "e5", "1e", "1e+", "1ex",
                           "1e1000", "1e-1000"}) {
    EXPECT_FALSE(parseDecimalPrefix(text).has_value()) << text;
  }
}

TEST(Decimal, CheckedScaling) {
  Int128 value = 3;
  EXPECT_TRUE(scaleByPowerOfTen(value, 4));
  EXPECT_EQ(static_cast<std::int64_t>(value), 30000);
  EXPECT_TRUE(scaleByPowerOfTen(value, 0));
  EXPECT_EQ(static_cast<std::int64_t>(value), 30000);
  Int128 large = 1;
  EXPECT_TRUE(scaleByPowerOfTen(large, 38));
  EXPECT_FALSE(scaleByPowerOfTen(large, 1));
  Int128 zero = 0;
  EXPECT_TRUE(scaleByPowerOfTen(zero, kMaxDecimalExponent));
  Int128 product = Int128{1} << 100;
  EXPECT_FALSE(multiplyChecked(product, Int128{1} << 30));
  Int128 negative = -7;
  EXPECT_TRUE(multiplyChecked(negative, 6));
  EXPECT_EQ(static_cast<std::int64_t>(negative), -42);
}

TEST(Decimal, FormatsTerminatingFractionsExactly) {
  EXPECT_EQ(formatTerminatingDecimal(3, 1), "3");
  EXPECT_EQ(formatTerminatingDecimal(0, 4), "0");
  EXPECT_EQ(formatTerminatingDecimal(-7, 4), "-1.75");
  EXPECT_EQ(formatTerminatingDecimal(-1, 2), "-0.5");
  EXPECT_EQ(formatTerminatingDecimal(786432, 10000), "78.6432");
  EXPECT_EQ(formatTerminatingDecimal(1, std::int64_t{1} << 40),
            "0.0000000000009094947017729282379150390625");
  EXPECT_EQ(formatTerminatingDecimal(INT64_MIN, 1), "-9223372036854775808");
}

TEST(Decimal, TrimsWhitespace) {
  EXPECT_EQ(trimWhitespace("  4 KiB\t\n"), "4 KiB");
  EXPECT_EQ(trimWhitespace(" \t "), "");
  EXPECT_EQ(trimWhitespace("x"), "x");
}

}  // namespace
}  // namespace trn
