#include "trn/base/checked.h"

#include <gtest/gtest.h>

#include <limits>

namespace trn {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

TEST(Checked, InRangeExpressionsKeepTheirValue) {
  const Checked<std::int64_t> v = Checked<std::int64_t>(128) * 512 * 4 + 256 - 1;
  ASSERT_TRUE(v.valid());
  EXPECT_EQ(v.value(), 128 * 512 * 4 + 255);
  EXPECT_EQ((Checked<std::int64_t>(kMax - 1) + 1).get(), kMax);
  EXPECT_EQ((Checked<std::int64_t>(kMin) + 0).get(), kMin);
}

TEST(Checked, OverflowIsStickyThroughLaterOperations) {
  // 2^62 * 4 wraps to 0 in plain arithmetic; subtracting it back must not hide the overflow.
  const Checked<std::int64_t> wrapped = Checked<std::int64_t>(std::int64_t{1} << 62) * 4;
  EXPECT_FALSE(wrapped.valid());
  EXPECT_FALSE((wrapped - (std::int64_t{1} << 62) * 0).valid());
  EXPECT_FALSE((wrapped * 0).valid());
  EXPECT_EQ(wrapped.get(), std::nullopt);
  EXPECT_FALSE((Checked<std::int64_t>(kMax) + 1).valid());
  EXPECT_FALSE((Checked<std::int64_t>(kMin) - 1).valid());
  EXPECT_FALSE((Checked<std::int64_t>(kMin) * -1).valid());
  // The reported example: row count 2^60 + 1 times a 16-byte stride.
  EXPECT_FALSE((Checked<std::int64_t>((std::int64_t{1} << 60) + 1) * 16).valid());
}

TEST(Checked, OverflowInAnOperandPropagates) {
  const Checked<std::int64_t> bad = Checked<std::int64_t>(kMax) + kMax;
  EXPECT_FALSE((Checked<std::int64_t>(1) + bad).valid());
  EXPECT_FALSE((Checked<std::int64_t>(1) * bad).valid());
}

TEST(Checked, UnsignedArithmetic) {
  EXPECT_FALSE((Checked<std::uint64_t>(0) - 1).valid());
  EXPECT_EQ((Checked<std::uint64_t>(3) * 5).get(), 15u);
}

TEST(CheckedCast, RejectsValuesThatDoNotFit) {
  EXPECT_EQ(checkedCast<std::int32_t>(std::int64_t{2147483647}), 2147483647);
  EXPECT_EQ(checkedCast<std::int32_t>(std::int64_t{2147483648}), std::nullopt);
  EXPECT_EQ(checkedCast<std::uint64_t>(std::int64_t{-1}), std::nullopt);
  EXPECT_EQ(checkedCast<std::int64_t>(std::numeric_limits<std::uint64_t>::max()), std::nullopt);
}

}  // namespace
}  // namespace trn
