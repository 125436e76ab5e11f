// Exact fractions: parsing decimal, percent and fraction text, printing, rounding, ordering and
// overflow-checked arithmetic.
#include "trn/base/ratio.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace trn {
namespace {

Ratio ratio(std::int64_t n, std::int64_t d = 1) { return *Ratio::make(n, d); }

TEST(Ratio, ParsesAndPrintsExactly) {
  EXPECT_EQ(*Ratio::parse("0.9"), ratio(9, 10));
  EXPECT_EQ(*Ratio::parse("90%"), ratio(9, 10));
  EXPECT_EQ(*Ratio::parse("13/3"), ratio(13, 3));
  EXPECT_EQ(*Ratio::parse("1.5e3"), ratio(1500));
  EXPECT_EQ(*Ratio::parse("-2"), ratio(-2));
  EXPECT_EQ(Ratio::parse("78.6432")->toString(), "78.6432");
  EXPECT_EQ(ratio(13, 3).toString(), "13/3");
  EXPECT_EQ(ratio(-7, 2).floor(), -4);
  EXPECT_EQ(ratio(-7, 2).ceil(), -3);
  EXPECT_EQ(ratio(7, 2).ceil(), 4);
  EXPECT_FALSE(Ratio::parse("abc").ok());
  EXPECT_FALSE(Ratio::parse("1/0").ok());
  EXPECT_FALSE(Ratio::parse("1e400").ok());
  EXPECT_FALSE(Ratio::parse("").ok());
  EXPECT_FALSE(multiply(Ratio(INT64_MAX), Ratio(2)).ok());
  EXPECT_FALSE(divide(Ratio(1), Ratio(0)).ok());
  EXPECT_LT(ratio(1, 3), ratio(1, 2));
}

TEST(Ratio, ParsesSignsExponentsAndDivisors) {
  EXPECT_EQ(*Ratio::parse(" -0.25 "), ratio(-1, 4));
  EXPECT_EQ(*Ratio::parse("2.5e-3"), ratio(1, 400));
  EXPECT_EQ(*Ratio::parse("12.5 %"), ratio(1, 8));
  EXPECT_EQ(*Ratio::parse("-6/4"), ratio(-3, 2));
  EXPECT_EQ(*Ratio::parse("6/-4"), ratio(-3, 2));
  EXPECT_EQ(*Ratio::parse("-0"), ratio(0));
  for (const char* bad : {"1/2.5", "1/ 2", "1/2x", "1/", "90%%", "1e", "0.5.5", "--1"}) {
    EXPECT_EQ(Ratio::parse(bad).status().code(), ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(Ratio::parse("1e30").status().code(), ErrorCode::kOutOfRange);
  EXPECT_EQ(Ratio::parse("1/0").status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace trn
