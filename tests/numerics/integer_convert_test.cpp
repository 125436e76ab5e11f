// fp32 <-> integer conversions: round to nearest even (or as selected), then saturate; NaN -> 0.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "trn/numerics/convert.h"

namespace trn {
namespace {

/// The integer value stored by encodeFloat, sign-extended for signed types.
std::int64_t toInt(float value, DType type, const ConvertOptions& options = {}) {
  const std::uint32_t bits = encodeFloat(value, type, options);
  switch (type) {
    case DType::kInt8: return static_cast<std::int8_t>(bits);
    case DType::kInt16: return static_cast<std::int16_t>(bits);
    case DType::kInt32: return static_cast<std::int32_t>(bits);
    default: return bits;
  }
}

TEST(IntegerConvert, NearestEvenTies) {
  EXPECT_EQ(toInt(0.5f, DType::kInt32), 0);
  EXPECT_EQ(toInt(1.5f, DType::kInt32), 2);
  EXPECT_EQ(toInt(2.5f, DType::kInt32), 2);
  EXPECT_EQ(toInt(3.5f, DType::kInt32), 4);
  EXPECT_EQ(toInt(-0.5f, DType::kInt32), 0);
  EXPECT_EQ(toInt(-1.5f, DType::kInt32), -2);
  EXPECT_EQ(toInt(-2.5f, DType::kInt32), -2);
  EXPECT_EQ(toInt(2.4999998f, DType::kInt8), 2);
  EXPECT_EQ(toInt(2.5000002f, DType::kInt8), 3);
  EXPECT_EQ(toInt(-7.75f, DType::kInt16), -8);
  EXPECT_EQ(toInt(0.49999997f, DType::kUint8), 0);
  EXPECT_EQ(toInt(8388609.0f, DType::kInt32), 8388609);  // 2^23 + 1 is exact
}

TEST(IntegerConvert, SaturatesAtBothEnds) {
  EXPECT_EQ(toInt(127.4f, DType::kInt8), 127);
  EXPECT_EQ(toInt(127.5f, DType::kInt8), 127);  // 128 saturates
  EXPECT_EQ(toInt(1000.0f, DType::kInt8), 127);
  EXPECT_EQ(toInt(-128.5f, DType::kInt8), -128);
  EXPECT_EQ(toInt(-1000.0f, DType::kInt8), -128);
  EXPECT_EQ(toInt(-1.0f, DType::kUint8), 0);
  EXPECT_EQ(toInt(-0.4f, DType::kUint8), 0);
  EXPECT_EQ(toInt(255.5f, DType::kUint8), 255);
  EXPECT_EQ(toInt(65535.4f, DType::kUint16), 65535);
  EXPECT_EQ(toInt(70000.0f, DType::kUint16), 65535);
  EXPECT_EQ(toInt(-40000.0f, DType::kInt16), -32768);
  EXPECT_EQ(toInt(2147483648.0f, DType::kInt32), 2147483647);
  EXPECT_EQ(toInt(-2147483648.0f, DType::kInt32), -2147483647 - 1);
  EXPECT_EQ(toInt(-3e9f, DType::kInt32), -2147483647 - 1);
  EXPECT_EQ(toInt(4294967040.0f, DType::kUint32), 4294967040u);  // largest float < 2^32
  EXPECT_EQ(toInt(4294967296.0f, DType::kUint32), 4294967295u);
  EXPECT_EQ(toInt(std::numeric_limits<float>::max(), DType::kUint32), 4294967295u);
}

TEST(IntegerConvert, InfinityAndNan) {
  for (DType type : {DType::kInt8, DType::kInt16, DType::kInt32, DType::kUint8, DType::kUint16,
                     DType::kUint32}) {
    const DTypeTraits& t = dtypeTraits(type);
    EXPECT_EQ(toInt(INFINITY, type), static_cast<std::int64_t>(t.maxFinite)) << t.name;
    EXPECT_EQ(toInt(-INFINITY, type), static_cast<std::int64_t>(t.lowest)) << t.name;
    EXPECT_EQ(toInt(NAN, type), 0) << t.name;
    EXPECT_EQ(toInt(-NAN, type), 0) << t.name;
  }
}

TEST(IntegerConvert, TowardZero) {
  ConvertOptions truncating;
  truncating.rounding = RoundingMode::kTowardZero;
  EXPECT_EQ(toInt(2.9f, DType::kInt32, truncating), 2);
  EXPECT_EQ(toInt(-2.9f, DType::kInt32, truncating), -2);
  EXPECT_EQ(toInt(300.7f, DType::kUint8, truncating), 255);
}

TEST(IntegerConvert, StorageIsTwosComplementOfTheWidth) {
  EXPECT_EQ(encodeFloat(-1.0f, DType::kInt8), 0xFFu);
  EXPECT_EQ(encodeFloat(-2.0f, DType::kInt16), 0xFFFEu);
  EXPECT_EQ(encodeFloat(-3.0f, DType::kInt32), 0xFFFFFFFDu);
}

TEST(IntegerConvert, Decode) {
  EXPECT_EQ(decodeFloat(0x80, DType::kInt8), -128.0f);
  EXPECT_EQ(decodeFloat(0x80, DType::kUint8), 128.0f);
  EXPECT_EQ(decodeFloat(0xFFFF, DType::kInt16), -1.0f);
  EXPECT_EQ(decodeFloat(0xFFFF, DType::kUint16), 65535.0f);
  EXPECT_EQ(decodeFloat(0x80000000u, DType::kInt32), -2147483648.0f);
  EXPECT_EQ(decodeFloat(0xFFFFFFFFu, DType::kUint32), 4294967296.0f);  // nearest fp32
  EXPECT_EQ(decodeFloat(16777217u, DType::kInt32), 16777216.0f);        // tie to even
  EXPECT_EQ(decodeFloat(16777219u, DType::kInt32), 16777220.0f);
  // Every 8- and 16-bit pattern round-trips exactly.
  for (std::uint32_t bits = 0; bits < 65536; ++bits) {
    ASSERT_EQ(encodeFloat(decodeFloat(bits, DType::kInt16), DType::kInt16), bits);
    ASSERT_EQ(encodeFloat(decodeFloat(bits, DType::kUint16), DType::kUint16), bits);
    if (bits < 256) {
      ASSERT_EQ(encodeFloat(decodeFloat(bits, DType::kInt8), DType::kInt8), bits);
      ASSERT_EQ(encodeFloat(decodeFloat(bits, DType::kUint8), DType::kUint8), bits);
    }
  }
}

TEST(IntegerConvert, BulkMatchesScalar) {
  std::vector<float> values;
  for (int i = -700; i <= 700; ++i) {
    values.push_back(static_cast<float>(i) * 0.37f);
  }
  values.push_back(NAN);
  values.push_back(INFINITY);
  for (DType type : {DType::kInt8, DType::kInt16, DType::kInt32, DType::kUint8, DType::kUint16,
                     DType::kUint32}) {
    const int size = byteSize(type);
    std::vector<std::byte> bytes(values.size() * static_cast<std::size_t>(size));
    convertFromFloat(values, type, bytes);
    std::vector<float> back(values.size());
    convertToFloat(bytes, type, back);
    for (std::size_t i = 0; i < values.size(); ++i) {
      std::uint32_t stored = 0;
      std::memcpy(&stored, bytes.data() + i * size, size);
      ASSERT_EQ(stored, encodeFloat(values[i], type)) << dtypeName(type) << " " << values[i];
      ASSERT_EQ(back[i], decodeFloat(stored, type));
    }
  }
}

}  // namespace
}  // namespace trn
