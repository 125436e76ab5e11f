#include "trn/numerics/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "reference.h"

namespace trn {
namespace {

TEST(DType, NamesRoundTripThroughParse) {
  for (DType type : allDTypes()) {
    const Result<DType> parsed = parseDType(dtypeName(type));
    ASSERT_TRUE(parsed.ok()) << dtypeName(type);
    EXPECT_EQ(*parsed, type);
  }
}

TEST(DType, CanonicalNames) {
  EXPECT_EQ(dtypeName(DType::kFp32), "fp32");
  EXPECT_EQ(dtypeName(DType::kTf32), "tf32");
  EXPECT_EQ(dtypeName(DType::kBf16), "bf16");
  EXPECT_EQ(dtypeName(DType::kFp16), "fp16");
  EXPECT_EQ(dtypeName(DType::kFp8E4m3), "fp8_e4m3");
  EXPECT_EQ(dtypeName(DType::kFp8E5m2), "fp8_e5m2");
  EXPECT_EQ(dtypeName(DType::kFp8E3m4), "fp8_e3m4");
  EXPECT_EQ(dtypeName(DType::kFp8E4m3Fn), "fp8_e4m3fn");
  EXPECT_EQ(dtypeName(DType::kUint16), "uint16");
}

TEST(DType, ParseAcceptsNkiSpellingsAndIgnoresCase) {
  EXPECT_EQ(*parseDType("bfloat16"), DType::kBf16);
  EXPECT_EQ(*parseDType("float8_e4m3"), DType::kFp8E4m3);
  EXPECT_EQ(*parseDType("float8_e4m3fn"), DType::kFp8E4m3Fn);
  EXPECT_EQ(*parseDType("tfloat32"), DType::kTf32);
  EXPECT_EQ(*parseDType("FP16"), DType::kFp16);
  EXPECT_EQ(*parseDType("Int32"), DType::kInt32);
}

TEST(DType, ParseErrorListsValidNames) {
  const Result<DType> bad = parseDType("fp8");
  ASSERT_FALSE(bad.ok());
  const Status status = bad.status();
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  const std::string& message = status.message();
  EXPECT_NE(message.find("'fp8'"), std::string::npos) << message;
  for (DType type : allDTypes()) {
    EXPECT_NE(message.find(std::string(dtypeName(type))), std::string::npos) << message;
  }
  EXPECT_FALSE(parseDType("").ok());
  EXPECT_FALSE(parseDType("bf16 ").ok());
}

TEST(DType, SizesAndKinds) {
  EXPECT_EQ(byteSize(DType::kFp32), 4);
  EXPECT_EQ(byteSize(DType::kTf32), 4);
  EXPECT_EQ(byteSize(DType::kBf16), 2);
  EXPECT_EQ(byteSize(DType::kFp16), 2);
  for (DType type : {DType::kFp8E4m3, DType::kFp8E5m2, DType::kFp8E3m4, DType::kFp8E4m3Fn,
                     DType::kInt8, DType::kUint8}) {
    EXPECT_EQ(byteSize(type), 1) << dtypeName(type);
  }
  EXPECT_EQ(byteSize(DType::kInt16), 2);
  EXPECT_EQ(byteSize(DType::kUint32), 4);
  EXPECT_TRUE(isFloat(DType::kFp8E3m4));
  EXPECT_TRUE(isInteger(DType::kUint8));
  EXPECT_EQ(dtypeTraits(DType::kInt16).kind, DTypeKind::kSignedInt);
  EXPECT_EQ(dtypeTraits(DType::kUint16).kind, DTypeKind::kUnsignedInt);
}

// The traits table agrees with the hand-written formats and with the textbook formula.
TEST(DType, FloatTraitsMatchTheBitFormula) {
  for (const reference::Format& f : reference::kNarrowFormats) {
    const DTypeTraits& t = dtypeTraits(f.type);
    SCOPED_TRACE(std::string(t.name));
    EXPECT_EQ(t.exponentBits, f.exponentBits);
    EXPECT_EQ(t.mantissaBits, f.mantissaBits);
    EXPECT_EQ(t.exponentBias, f.bias);
    EXPECT_EQ(t.hasInf, f.hasInf);
    EXPECT_EQ(t.nan, f.fnNan ? NanEncoding::kAllOnes : NanEncoding::kIeee);
    const std::vector<reference::Entry> table = reference::finiteTable(f);
    EXPECT_EQ(t.maxFinite, table.back().value);
    EXPECT_EQ(t.lowest, -table.back().value);
    EXPECT_EQ(t.minSubnormal, table[1].value);
    EXPECT_EQ(t.minNormal, std::ldexp(1.0, 1 - f.bias));
  }
}

// Published constants: OCP 8-bit Floating Point Specification (OFP8) v1.0 for E5M2 and E4M3
// ("fn"), IEEE 754 for binary16/binary32, and the IEEE-style e4m3 / e3m4 (max 240 / 15.5).
TEST(DType, PublishedRanges) {
  EXPECT_EQ(dtypeTraits(DType::kFp8E5m2).maxFinite, 57344.0);
  EXPECT_EQ(dtypeTraits(DType::kFp8E5m2).minNormal, std::ldexp(1.0, -14));
  EXPECT_EQ(dtypeTraits(DType::kFp8E5m2).minSubnormal, std::ldexp(1.0, -16));
  EXPECT_EQ(dtypeTraits(DType::kFp8E4m3Fn).maxFinite, 448.0);
  EXPECT_EQ(dtypeTraits(DType::kFp8E4m3Fn).minNormal, std::ldexp(1.0, -6));
  EXPECT_EQ(dtypeTraits(DType::kFp8E4m3Fn).minSubnormal, std::ldexp(1.0, -9));
  EXPECT_FALSE(dtypeTraits(DType::kFp8E4m3Fn).hasInf);
  EXPECT_EQ(dtypeTraits(DType::kFp8E4m3).maxFinite, 240.0);
  EXPECT_TRUE(dtypeTraits(DType::kFp8E4m3).hasInf);
  EXPECT_EQ(dtypeTraits(DType::kFp8E3m4).maxFinite, 15.5);
  EXPECT_EQ(dtypeTraits(DType::kFp8E3m4).minNormal, 0.25);
  EXPECT_EQ(dtypeTraits(DType::kFp8E3m4).minSubnormal, std::ldexp(1.0, -6));
  EXPECT_EQ(dtypeTraits(DType::kFp16).maxFinite, 65504.0);
  EXPECT_EQ(dtypeTraits(DType::kFp16).minSubnormal, std::ldexp(1.0, -24));
  EXPECT_EQ(dtypeTraits(DType::kFp32).maxFinite, static_cast<double>(3.4028234663852886e38f));
  EXPECT_EQ(dtypeTraits(DType::kFp32).minSubnormal, std::ldexp(1.0, -149));
  EXPECT_EQ(dtypeTraits(DType::kBf16).maxFinite, std::ldexp(255.0, 120));
  EXPECT_EQ(dtypeTraits(DType::kTf32).maxFinite, std::ldexp(2047.0, 117));
  EXPECT_EQ(dtypeTraits(DType::kTf32).minSubnormal, std::ldexp(1.0, -136));
}

TEST(DType, IntegerTraits) {
  EXPECT_EQ(dtypeTraits(DType::kInt8).maxFinite, 127.0);
  EXPECT_EQ(dtypeTraits(DType::kInt8).lowest, -128.0);
  EXPECT_EQ(dtypeTraits(DType::kInt16).lowest, -32768.0);
  EXPECT_EQ(dtypeTraits(DType::kInt32).maxFinite, 2147483647.0);
  EXPECT_EQ(dtypeTraits(DType::kUint8).maxFinite, 255.0);
  EXPECT_EQ(dtypeTraits(DType::kUint32).maxFinite, 4294967295.0);
  EXPECT_EQ(dtypeTraits(DType::kUint32).lowest, 0.0);
  EXPECT_EQ(dtypeTraits(DType::kInt32).nan, NanEncoding::kNone);
}

}  // namespace
}  // namespace trn
