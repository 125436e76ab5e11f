// fp32 -> narrow float conversions against the reference in reference.h, which finds the nearest
// (or truncated) representable value by searching the table of every finite value of the target
// format in double precision.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "reference.h"
#include "trn/base/rng.h"
#include "trn/numerics/convert.h"

namespace trn {
namespace {

struct Case {
  RoundingMode mode;
  reference::Mode referenceMode;
  bool saturate;
};

constexpr Case kCases[] = {
    {RoundingMode::kNearestEven, reference::Mode::kNearestEven, false},
    {RoundingMode::kNearestEven, reference::Mode::kNearestEven, true},
    {RoundingMode::kTowardZero, reference::Mode::kTowardZero, false},
    {RoundingMode::kTowardZero, reference::Mode::kTowardZero, true},
};

float nextUp(float x) { return std::nextafter(x, std::numeric_limits<float>::infinity()); }
float nextDown(float x) { return std::nextafter(x, -std::numeric_limits<float>::infinity()); }

/// Every exact value, every midpoint between neighbours and the fp32 values on either side of
/// each midpoint, with both signs; the boundaries of the subnormal and overflow ranges; specials.
std::vector<float> interestingInputs(const std::vector<reference::Entry>& table, int stride) {
  std::vector<float> inputs;
  auto add = [&](double v) {
    const auto f = static_cast<float>(v);
    for (float x : {f, nextUp(f), nextDown(f)}) {
      inputs.push_back(x);
      inputs.push_back(-x);
    }
  };
  for (std::size_t i = 0; i + 1 < table.size(); i += static_cast<std::size_t>(stride)) {
    add(table[i].value);
    add((table[i].value + table[i + 1].value) / 2);  // exact in fp32
  }
  const double max = table.back().value;
  const double spacing = max - table[table.size() - 2].value;
  for (double v : {max, max + spacing / 2, max + spacing, 2 * max, table[1].value / 2,
                   table[1].value / 4, table[1].value * 0.75}) {
    add(v);
  }
  for (float v : {0.0f, std::numeric_limits<float>::max(), std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN(), std::bit_cast<float>(0x7F800001u),
                  std::bit_cast<float>(0xFFFFFFFFu)}) {
    inputs.push_back(v);
    inputs.push_back(-v);
  }
  return inputs;
}

void expectMatchesReference(const reference::Format& f, const std::vector<reference::Entry>& table,
                            const std::vector<float>& inputs) {
  for (const Case& c : kCases) {
    ConvertOptions options;
    options.rounding = c.mode;
    options.saturate = c.saturate;
    for (float x : inputs) {
      const std::uint32_t expected =
          reference::round(f, table, x, c.referenceMode, c.saturate) << f.storageShift;
      const std::uint32_t actual = encodeFloat(x, f.type, options);
      ASSERT_EQ(actual, expected) << dtypeName(f.type) << " " << roundingModeName(c.mode)
                                  << (c.saturate ? " saturating" : "") << " x=" << x << " (0x"
                                  << std::hex << std::bit_cast<std::uint32_t>(x) << ")";
    }
  }
}

TEST(Rounding, ExactValuesMidpointsAndBoundaries) {
  for (const reference::Format& f : reference::kNarrowFormats) {
    SCOPED_TRACE(std::string(dtypeName(f.type)));
    const std::vector<reference::Entry> table = reference::finiteTable(f);
    // tf32 has 2^18 non-negative values; every 5th keeps the test fast and covers all binades.
    const int stride =
        static_cast<int>(reference::kSweepStride) * (f.type == DType::kTf32 ? 5 : 1);
    expectMatchesReference(f, table, interestingInputs(table, stride));
  }
}

TEST(Rounding, RandomFp32BitPatterns) {
  constexpr std::uint64_t kCount = reference::kRandomInputs;
  for (const reference::Format& f : reference::kNarrowFormats) {
    SCOPED_TRACE(std::string(dtypeName(f.type)));
    const std::vector<reference::Entry> table = reference::finiteTable(f);
    const CounterRng rng(20261129, static_cast<std::uint64_t>(f.type));
    std::vector<float> inputs(kCount);
    for (std::uint64_t i = 0; i < kCount; ++i) {
      std::uint32_t bits = rng.at(i);
      // Half of the patterns are squeezed into the format's own exponent range.
      if ((i & 1) != 0) {
        const int span = 2 * f.bias + 24;
        const int exponent =
            std::clamp(127 - f.bias - 12 + static_cast<int>((bits >> 23) % span), 0, 255);
        bits = (bits & 0x807FFFFFu) | (static_cast<std::uint32_t>(exponent) << 23);
      }
      inputs[i] = std::bit_cast<float>(bits);
    }
    expectMatchesReference(f, table, inputs);
  }
}

TEST(Rounding, TiesGoToEven) {
  // bf16 spacing at 1.0 is 2^-7: 1 + 2^-8 ties down to 1.0, 1 + 3*2^-8 ties up to 1 + 2^-6.
  EXPECT_EQ(encodeFloat(1.0f + 0x1p-8f, DType::kBf16), 0x3F80u);
  EXPECT_EQ(encodeFloat(1.0f + 3 * 0x1p-8f, DType::kBf16), 0x3F82u);
  // fp16 spacing at 1024 is 1.
  EXPECT_EQ(decodeFloat(encodeFloat(1024.5f, DType::kFp16), DType::kFp16), 1024.0f);
  EXPECT_EQ(decodeFloat(encodeFloat(1025.5f, DType::kFp16), DType::kFp16), 1026.0f);
  // e4m3: 17 ties between 16 and 18 -> 16; 19 -> 20.
  EXPECT_EQ(quantize(17.0f, DType::kFp8E4m3), 16.0f);
  EXPECT_EQ(quantize(19.0f, DType::kFp8E4m3), 20.0f);
}

TEST(Rounding, OverflowRules) {
  ConvertOptions saturating;
  saturating.saturate = true;
  ConvertOptions truncating;
  truncating.rounding = RoundingMode::kTowardZero;
  // e4m3 (IEEE-like): max 240, spacing 16 at the top; 248 ties to the (even) overflow code.
  EXPECT_EQ(quantize(247.9f, DType::kFp8E4m3), 240.0f);
  EXPECT_EQ(quantize(248.0f, DType::kFp8E4m3), INFINITY);
  EXPECT_EQ(quantize(-1e6f, DType::kFp8E4m3), -INFINITY);
  EXPECT_EQ(quantize(1e6f, DType::kFp8E4m3, saturating), 240.0f);
  EXPECT_EQ(quantize(1e6f, DType::kFp8E4m3, truncating), 240.0f);
  EXPECT_EQ(quantize(INFINITY, DType::kFp8E4m3, truncating), INFINITY);
  EXPECT_EQ(quantize(-INFINITY, DType::kFp8E4m3, saturating), -240.0f);
  // e4m3fn has no Inf: overflow and Inf always saturate.
  EXPECT_EQ(quantize(464.0f, DType::kFp8E4m3Fn), 448.0f);
  EXPECT_EQ(quantize(1e30f, DType::kFp8E4m3Fn), 448.0f);
  EXPECT_EQ(quantize(-INFINITY, DType::kFp8E4m3Fn), -448.0f);
  // fp16 and bf16.
  EXPECT_EQ(quantize(65519.0f, DType::kFp16), 65504.0f);
  EXPECT_EQ(quantize(65520.0f, DType::kFp16), INFINITY);
  EXPECT_EQ(quantize(65520.0f, DType::kFp16, saturating), 65504.0f);
  EXPECT_EQ(quantize(std::numeric_limits<float>::max(), DType::kBf16), INFINITY);
  EXPECT_EQ(quantize(std::numeric_limits<float>::max(), DType::kBf16, truncating),
            std::ldexp(255.0f, 120));
}

TEST(Rounding, SubnormalsAreKept) {
  // Half the smallest e4m3 subnormal ties to zero; just above it rounds up; sign is kept.
  const float minSub = std::ldexp(1.0f, -9);
  EXPECT_EQ(quantize(minSub / 2, DType::kFp8E4m3), 0.0f);
  EXPECT_EQ(quantize(nextUp(minSub / 2), DType::kFp8E4m3), minSub);
  EXPECT_EQ(encodeFloat(-minSub / 4, DType::kFp8E4m3), 0x80u);
  EXPECT_EQ(quantize(3 * minSub, DType::kFp8E4m3), 3 * minSub);
  // fp32 subnormals survive a bf16/tf32 round trip when representable.
  const float tiny = std::ldexp(1.0f, -133);
  EXPECT_EQ(quantize(tiny, DType::kBf16), tiny);
  EXPECT_EQ(quantize(std::ldexp(1.0f, -136), DType::kTf32), std::ldexp(1.0f, -136));
  EXPECT_EQ(quantize(std::ldexp(1.0f, -149), DType::kFp32), std::ldexp(1.0f, -149));
}

TEST(Rounding, NanIsCanonical) {
  for (const reference::Format& f : reference::kNarrowFormats) {
    for (std::uint32_t bits : {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFBFFFFFu}) {
      EXPECT_EQ(encodeFloat(std::bit_cast<float>(bits), f.type), f.nanCode << f.storageShift)
          << dtypeName(f.type) << " " << std::hex << bits;
    }
  }
}

TEST(Rounding, ModeNamesParse) {
  EXPECT_EQ(*parseRoundingMode("rne"), RoundingMode::kNearestEven);
  EXPECT_EQ(*parseRoundingMode("SR"), RoundingMode::kStochastic);
  EXPECT_EQ(*parseRoundingMode("truncate"), RoundingMode::kTowardZero);
  for (RoundingMode mode :
       {RoundingMode::kNearestEven, RoundingMode::kStochastic, RoundingMode::kTowardZero}) {
    EXPECT_EQ(*parseRoundingMode(roundingModeName(mode)), mode);
  }
  const Result<RoundingMode> bad = parseRoundingMode("up");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("stochastic"), std::string::npos);
}

}  // namespace
}  // namespace trn
