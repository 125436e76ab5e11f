#include "trn/base/status.h"

#include <gtest/gtest.h>

#include <string>

namespace trn {
namespace {

Result<int> parsePositive(int v) {
  if (v <= 0) {
    return invalidArgument("value " + std::to_string(v) + " is not positive");
  }
  return v;
}

Result<int> doubled(int v) {
  TRN_ASSIGN_OR_RETURN(const int checked, parsePositive(v));
  return checked * 2;
}

Status validate(int v) {
  TRN_RETURN_IF_ERROR(parsePositive(v));
  return {};
}

TEST(Status, OkByDefault) {
  const Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.toString(), "ok");
}

TEST(Status, CarriesCodeMessageAndOrigin) {
  const int line = __LINE__ + 1;
  const Status s = notFound("chip 'trn9' not found");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::kNotFound);
  EXPECT_EQ(s.toString(), "not found: chip 'trn9' not found");
  EXPECT_EQ(s.origin().line(), static_cast<unsigned>(line));
  EXPECT_NE(std::string(s.origin().file_name()).find("status_test.cpp"), std::string::npos);
  EXPECT_NE(s.toDebugString().find("status_test.cpp:" + std::to_string(line)), std::string::npos);
}

TEST(Status, WithContextPrefixesTheMessage) {
  const Status s = parseError("bad unit").withContext("trn2.yaml:12");
  EXPECT_EQ(s.code(), ErrorCode::kParseError);
  EXPECT_EQ(s.message(), "trn2.yaml:12: bad unit");
}

TEST(Result, HoldsValueOrError) {
  EXPECT_EQ(doubled(21).value(), 42);
  const Result<int> bad = doubled(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "value -1 is not positive");
  EXPECT_TRUE(validate(3).ok());
  EXPECT_EQ(validate(0).code(), ErrorCode::kInvalidArgument);
}

TEST(ResultDeathTest, ValueOfAnErrorAborts) {
  const Result<int> bad = invalidArgument("nope");
  EXPECT_DEATH((void)bad.value(), "value\\(\\) of an error Result: invalid argument: nope");
}

}  // namespace
}  // namespace trn
