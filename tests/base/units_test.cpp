#include "trn/base/units.h"

#include <gtest/gtest.h>

#include <string>

namespace trn {
namespace {

TEST(Units, ParsesTheSpecificationExamples) {
  EXPECT_EQ(parseFrequency("2.4GHz")->count(), 2'400'000'000);
  EXPECT_EQ(parseBandwidth("2.9TB/s")->count(), 2'900'000'000'000);
  EXPECT_EQ(parseBytes("24GiB")->count(), 24LL << 30);
  EXPECT_EQ(parseTime("1.3us")->count(), 1'300'000);
  EXPECT_EQ(parseBytes("224KiB")->count(), 224 * 1024);
}

TEST(Units, TimeUnits) {
  EXPECT_EQ(parseTime("416ps")->count(), 416);
  EXPECT_EQ(parseTime("600ns")->count(), 600'000);
  EXPECT_EQ(parseTime("15 \u00b5s")->count(), 15'000'000);
  EXPECT_EQ(parseTime("3ms")->count(), 3'000'000'000);
  EXPECT_EQ(parseTime("0.5s")->count(), 500'000'000'000);
  EXPECT_EQ(parseTime("1e3ns")->count(), 1'000'000);
  EXPECT_EQ(parseTime("0.001ns")->count(), 1);
}

TEST(Units, SizeUnitsDecimalAndBinary) {
  EXPECT_EQ(parseBytes("64KiB")->count(), 65536);
  EXPECT_EQ(parseBytes("2KB")->count(), 2000);
  EXPECT_EQ(parseBytes("1.5KiB")->count(), 1536);
  EXPECT_EQ(parseBytes("28MiB")->count(), 28LL << 20);
  EXPECT_EQ(parseBytes("0B")->count(), 0);
  EXPECT_EQ(parseBytes("2TiB")->count(), 2LL << 40);
}

TEST(Units, FrequencyAndBandwidthUnits) {
  EXPECT_EQ(parseFrequency("960MHz")->count(), 960'000'000);
  EXPECT_EQ(parseFrequency("0.96GHz")->count(), 960'000'000);
  EXPECT_EQ(parseBandwidth("23B/ns")->count(), 23'000'000'000);
  EXPECT_EQ(parseBandwidth("27.2GB/s")->count(), 27'200'000'000);
  EXPECT_EQ(parseBandwidth("27GiB/s")->count(), 27LL << 30);
  EXPECT_EQ(parseBandwidth("3200Gbps")->count(), 400'000'000'000);
  EXPECT_EQ(parseBandwidth("200Gbps")->count(), 25'000'000'000);
}

TEST(Units, RejectsMalformedInputWithAClearMessage) {
  const auto noUnit = parseBytes("24");
  ASSERT_FALSE(noUnit.ok());
  EXPECT_NE(noUnit.status().message().find("no unit"), std::string::npos);

  const auto wrongDimension = parseBytes("2.4GHz");
  ASSERT_FALSE(wrongDimension.ok());
  EXPECT_NE(wrongDimension.status().message().find("unknown unit 'GHz'"), std::string::npos);

  const auto notANumber = parseTime("fast");
  ASSERT_FALSE(notANumber.ok());
  EXPECT_NE(notANumber.status().message().find("not a time"), std::string::npos);

  const auto negative = parseBytes("-4KiB");
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("negative"), std::string::npos);

  const auto fractional = parseTime("0.5ps");
  ASSERT_FALSE(fractional.ok());
  EXPECT_NE(fractional.status().message().find("not a whole number of picoseconds"),
            std::string::npos);

  const auto huge = parseBytes("1e30TiB");
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), ErrorCode::kOutOfRange);

  EXPECT_FALSE(parseBandwidth("3TB").ok());
  EXPECT_FALSE(parseBandwidth("3TB/hour").ok());
  EXPECT_FALSE(parseTime("").ok());
  EXPECT_FALSE(parseTime(".us").ok());
  EXPECT_FALSE(parseTime("1.2.3us").ok());
  EXPECT_FALSE(parseTime("1e99999s").ok());
}

TEST(Units, FormatsInTheLargestExactUnitAndRoundTrips) {
  EXPECT_EQ(toString(Picoseconds(1'300'000)), "1.3us");
  EXPECT_EQ(toString(Picoseconds(416)), "416ps");
  EXPECT_EQ(toString(Bytes(224 * 1024)), "224KiB");
  EXPECT_EQ(toString(Bytes(3000)), "3KB");
  EXPECT_EQ(toString(Bytes(1536)), "1.536KB");
  EXPECT_EQ(toString(Bytes(24LL << 30)), "24GiB");
  EXPECT_EQ(toString(Bytes(7)), "7B");
  EXPECT_EQ(toString(Hertz(2'400'000'000)), "2.4GHz");
  EXPECT_EQ(toString(BytesPerSecond(2'900'000'000'000)), "2.9TB/s");
  EXPECT_EQ(toString(BytesPerSecond(27LL << 30)), "27GiB/s");
  for (const std::int64_t v : {0LL, 1LL, 999LL, 1001LL, 123456789LL, 1LL << 40, 5'000'000'001LL}) {
    EXPECT_EQ(parseTime(toString(Picoseconds(v)))->count(), v);
    EXPECT_EQ(parseBytes(toString(Bytes(v)))->count(), v);
    EXPECT_EQ(parseFrequency(toString(Hertz(v)))->count(), v);
    EXPECT_EQ(parseBandwidth(toString(BytesPerSecond(v)))->count(), v);
  }
}

TEST(Units, CyclesToTimeRoundsUpToWholePicoseconds) {
  const Hertz pe(2'400'000'000);
  EXPECT_EQ(cyclesToTime(0, pe).count(), 0);
  EXPECT_EQ(cyclesToTime(1, pe).count(), 417);       // 416.67 ps
  EXPECT_EQ(cyclesToTime(12, pe).count(), 5000);     // exact
  EXPECT_EQ(cyclesToTime(512, Hertz(960'000'000)).count(), 533'334);  // 533333.3 ps
}

TEST(Units, QuantitiesOfOneDimensionCombine) {
  Bytes total = Bytes(100) + Bytes(28);
  total -= Bytes(28);
  EXPECT_EQ(total, Bytes(100));
  EXPECT_LT(Picoseconds(1), Picoseconds(2));
  EXPECT_EQ((Bytes(3) * 4).count(), 12);
}

}  // namespace
}  // namespace trn
