#include "trn/base/check.h"

#include <gtest/gtest.h>

namespace trn {
namespace {

TEST(CheckDeathTest, FailedCheckAbortsWithFileLineAndMessage) {
  const int value = 3;
  EXPECT_DEATH(TRN_CHECK(value == 4) << "value was " << value,
               "check_test.cpp:[0-9]+: check failed: value == 4: value was 3");
}

TEST(CheckDeathTest, PassingCheckDoesNotEvaluateTheMessage) {
  int evaluations = 0;
  auto count = [&] { return ++evaluations; };
  TRN_CHECK(true) << count();
  EXPECT_EQ(evaluations, 0);
}

TEST(CheckDeathTest, UnreachableAborts) {
  EXPECT_DEATH(TRN_UNREACHABLE() << "never", "check failed: unreachable: never");
}

}  // namespace
}  // namespace trn
