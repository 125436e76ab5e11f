// Exhaustive checks of every 8-bit and 16-bit pattern of each small float format: decoding,
// classification and re-encoding, against the independent formula in reference.h, plus the
// special encodings published for each format.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <string>

#include "reference.h"
#include "trn/numerics/convert.h"

namespace trn {
namespace {

FloatClass expectedClass(reference::Class cls) {
  switch (cls) {
    case reference::Class::kZero: return FloatClass::kZero;
    case reference::Class::kSubnormal: return FloatClass::kSubnormal;
    case reference::Class::kNormal: return FloatClass::kNormal;
    case reference::Class::kInf: return FloatClass::kInfinite;
    case reference::Class::kNan: return FloatClass::kNan;
  }
  return FloatClass::kNan;
}

TEST(FloatFormat, EveryPatternDecodesAndClassifiesLikeTheFormula) {
  for (const reference::Format& f : reference::kSmallFormats) {
    SCOPED_TRACE(std::string(dtypeName(f.type)));
    for (std::uint32_t code = 0; code < reference::codeCount(f); ++code) {
      const reference::Decoded expected = reference::decode(f, code);
      const float value = decodeFloat(code, f.type);
      ASSERT_EQ(classify(code, f.type), expectedClass(expected.cls)) << "code " << code;
      if (expected.cls == reference::Class::kNan) {
        ASSERT_TRUE(std::isnan(value)) << "code " << code;
        ASSERT_EQ(std::signbit(value), (code & reference::signBit(f)) != 0) << "code " << code;
      } else {
        ASSERT_EQ(static_cast<double>(value), expected.value) << "code " << code;
        ASSERT_EQ(std::signbit(value), (code & reference::signBit(f)) != 0) << "code " << code;
      }
    }
  }
}

// Re-encoding a decoded value gives the same bits, whatever the rounding mode or random word;
// NaN gives the canonical NaN.
TEST(FloatFormat, EveryPatternReencodesToItself) {
  const ConvertOptions modes[] = {
      {RoundingMode::kNearestEven, false, 0, 0},
      {RoundingMode::kTowardZero, false, 0, 0},
      {RoundingMode::kStochastic, false, 0, 0},
  };
  for (const reference::Format& f : reference::kSmallFormats) {
    SCOPED_TRACE(std::string(dtypeName(f.type)));
    for (std::uint32_t code = 0; code < reference::codeCount(f); ++code) {
      const float value = decodeFloat(code, f.type);
      const bool nan = reference::decode(f, code).cls == reference::Class::kNan;
      for (const ConvertOptions& options : modes) {
        for (std::uint32_t word : {0u, 0x80000000u, 0xFFFFFFFFu}) {
          ASSERT_EQ(encodeFloat(value, f.type, options, word), nan ? f.nanCode : code)
              << "code " << code << " mode " << roundingModeName(options.rounding) << " word "
              << word;
        }
      }
      ConvertOptions saturating;
      saturating.saturate = true;
      if (reference::decode(f, code).cls != reference::Class::kInf) {
        ASSERT_EQ(encodeFloat(value, f.type, saturating), nan ? f.nanCode : code);
      }
    }
  }
}

TEST(FloatFormat, Tf32SampledPatterns) {
  const reference::Format& f = reference::kTf32;
  for (std::uint32_t code = 0; code < reference::codeCount(f); code += 7) {
    const std::uint32_t storage = code << 13;
    const reference::Decoded expected = reference::decode(f, code);
    const float value = decodeFloat(storage, DType::kTf32);
    ASSERT_EQ(classify(storage, DType::kTf32), expectedClass(expected.cls)) << code;
    if (expected.cls == reference::Class::kNan) {
      ASSERT_TRUE(std::isnan(value));
      ASSERT_EQ(encodeFloat(value, DType::kTf32), f.nanCode << 13);
    } else {
      ASSERT_EQ(static_cast<double>(value), expected.value) << code;
      ASSERT_EQ(encodeFloat(value, DType::kTf32), storage) << code;
    }
  }
  // The low 13 storage bits are ignored when reading.
  EXPECT_EQ(decodeFloat(0x3F801FFFu, DType::kTf32), 1.0f);
}

// OCP OFP8 v1.0, E5M2: IEEE-style specials.
TEST(FloatFormat, E5m2SpecialEncodingsMatchOcp) {
  const DType t = DType::kFp8E5m2;
  EXPECT_EQ(decodeFloat(0x7B, t), 57344.0f);
  EXPECT_EQ(decodeFloat(0x04, t), std::ldexp(1.0f, -14));
  EXPECT_EQ(decodeFloat(0x03, t), 0.75f * std::ldexp(1.0f, -14));
  EXPECT_EQ(decodeFloat(0x01, t), std::ldexp(1.0f, -16));
  EXPECT_EQ(decodeFloat(0x7C, t), INFINITY);
  EXPECT_EQ(decodeFloat(0xFC, t), -INFINITY);
  for (std::uint32_t nan : {0x7Du, 0x7Eu, 0x7Fu, 0xFDu, 0xFEu, 0xFFu}) {
    EXPECT_TRUE(std::isnan(decodeFloat(nan, t))) << nan;
  }
  EXPECT_EQ(decodeFloat(0x80, t), 0.0f);
  EXPECT_TRUE(std::signbit(decodeFloat(0x80, t)));
}

// OCP OFP8 v1.0, E4M3 ("fn"): no Inf, S.1111.111 is the only NaN, S.1111.000..110 are finite.
TEST(FloatFormat, E4m3FnSpecialEncodingsMatchOcp) {
  const DType t = DType::kFp8E4m3Fn;
  EXPECT_EQ(decodeFloat(0x7E, t), 448.0f);
  EXPECT_EQ(decodeFloat(0xFE, t), -448.0f);
  EXPECT_EQ(decodeFloat(0x78, t), 256.0f);
  EXPECT_EQ(decodeFloat(0x08, t), std::ldexp(1.0f, -6));
  EXPECT_EQ(decodeFloat(0x07, t), 0.875f * std::ldexp(1.0f, -6));
  EXPECT_EQ(decodeFloat(0x01, t), std::ldexp(1.0f, -9));
  EXPECT_TRUE(std::isnan(decodeFloat(0x7F, t)));
  EXPECT_TRUE(std::isnan(decodeFloat(0xFF, t)));
  for (std::uint32_t code = 0; code < 256; ++code) {
    EXPECT_NE(classify(code, t), FloatClass::kInfinite) << code;
  }
}

// The IEEE-style e4m3 of Trainium1/2: S.1111.000 is Inf, S.1111.xxx (xxx != 0) NaN, max 240.
TEST(FloatFormat, E4m3IeeeSpecialEncodings) {
  const DType t = DType::kFp8E4m3;
  EXPECT_EQ(decodeFloat(0x77, t), 240.0f);
  EXPECT_EQ(decodeFloat(0x78, t), INFINITY);
  EXPECT_EQ(decodeFloat(0xF8, t), -INFINITY);
  for (std::uint32_t m = 1; m < 8; ++m) {
    EXPECT_TRUE(std::isnan(decodeFloat(0x78 | m, t))) << m;
  }
  EXPECT_EQ(decodeFloat(0x08, t), std::ldexp(1.0f, -6));
  EXPECT_EQ(decodeFloat(0x01, t), std::ldexp(1.0f, -9));
}

TEST(FloatFormat, E3m4SpecialEncodings) {
  const DType t = DType::kFp8E3m4;
  EXPECT_EQ(decodeFloat(0x6F, t), 15.5f);
  EXPECT_EQ(decodeFloat(0x70, t), INFINITY);
  EXPECT_TRUE(std::isnan(decodeFloat(0x71, t)));
  EXPECT_EQ(decodeFloat(0x10, t), 0.25f);
  EXPECT_EQ(decodeFloat(0x01, t), std::ldexp(1.0f, -6));
  EXPECT_EQ(decodeFloat(0x0F, t), 15.0f * std::ldexp(1.0f, -6));
}

TEST(FloatFormat, SixteenBitSpecialEncodings) {
  EXPECT_EQ(decodeFloat(0x7BFF, DType::kFp16), 65504.0f);
  EXPECT_EQ(decodeFloat(0x7C00, DType::kFp16), INFINITY);
  EXPECT_EQ(decodeFloat(0x0400, DType::kFp16), std::ldexp(1.0f, -14));
  EXPECT_EQ(decodeFloat(0x0001, DType::kFp16), std::ldexp(1.0f, -24));
  EXPECT_EQ(decodeFloat(0x3C00, DType::kFp16), 1.0f);
  EXPECT_EQ(decodeFloat(0x7F7F, DType::kBf16), std::ldexp(255.0f, 120));
  EXPECT_EQ(decodeFloat(0x7F80, DType::kBf16), INFINITY);
  EXPECT_EQ(decodeFloat(0x0080, DType::kBf16), std::ldexp(1.0f, -126));
  EXPECT_EQ(decodeFloat(0x0001, DType::kBf16), std::ldexp(1.0f, -133));
  EXPECT_EQ(decodeFloat(0x3F80, DType::kBf16), 1.0f);
}

// NaN widening keeps the sign and the left-aligned payload and sets the quiet bit.
TEST(FloatFormat, NanWideningIsQuietAndKeepsPayload) {
  EXPECT_EQ(std::bit_cast<std::uint32_t>(decodeFloat(0x7F81, DType::kBf16)), 0x7FC10000u);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(decodeFloat(0xFFC0, DType::kBf16)), 0xFFC00000u);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(decodeFloat(0x7C01, DType::kFp16)), 0x7FC02000u);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(decodeFloat(0xFF, DType::kFp8E4m3Fn)), 0xFFF00000u);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(decodeFloat(0x7F800001u, DType::kFp32)), 0x7FC00001u);
}

TEST(FloatFormat, Fp32IsIdentityExceptNan) {
  for (float v : {0.0f, -0.0f, 1.0f, -3.5f, 1e-45f, 3.4028234e38f, INFINITY, -INFINITY}) {
    EXPECT_EQ(encodeFloat(v, DType::kFp32), std::bit_cast<std::uint32_t>(v)) << v;
    EXPECT_EQ(std::bit_cast<std::uint32_t>(decodeFloat(std::bit_cast<std::uint32_t>(v),
                                                       DType::kFp32)),
              std::bit_cast<std::uint32_t>(v));
  }
  EXPECT_EQ(encodeFloat(std::bit_cast<float>(0xFF812345u), DType::kFp32), 0x7FC00000u);
  ConvertOptions saturating;
  saturating.saturate = true;
  EXPECT_EQ(encodeFloat(-INFINITY, DType::kFp32, saturating), 0xFF7FFFFFu);
}

}  // namespace
}  // namespace trn
