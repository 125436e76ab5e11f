// Stochastic rounding: unbiased, with P(round up) equal to the discarded fraction, reproducible
// from (seed, stream, element index), and the documented fp16 accumulation example.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "trn/numerics/convert.h"

namespace trn {
namespace {

ConvertOptions stochastic(std::uint64_t seed, std::uint64_t stream = 0) {
  ConvertOptions options;
  options.rounding = RoundingMode::kStochastic;
  options.seed = seed;
  options.stream = stream;
  return options;
}

struct SrCase {
  DType type;
  float lo;        ///< representable value below x
  float hi;        ///< next representable value
  double fraction;  ///< (x - lo) / (hi - lo), exact for the chosen x
};

// Over kSamples conversions of x = lo + fraction * (hi - lo): the count of round-ups is within
// 5 binomial standard deviations of kSamples * fraction, every result is lo or hi, and the mean
// result is within 5 standard errors of x.
TEST(StochasticRounding, UnbiasedWithUpProbabilityEqualToFraction) {
  constexpr std::size_t kSamples = 1 << 16;
  const SrCase cases[] = {
      {DType::kBf16, 1.0f, 1.0078125f, 0.25},
      {DType::kBf16, -1.0f, -1.0078125f, 0.875},
      {DType::kFp16, 1024.0f, 1025.0f, 0.5},
      {DType::kFp16, 2048.0f, 2050.0f, 0.25},
      {DType::kFp16, 0.0f, 0x1p-24f, 0.125},  // subnormal range
      {DType::kFp8E4m3, 16.0f, 18.0f, 0.75},
      {DType::kFp8E4m3, 0.0f, 0x1p-9f, 0.375},  // below the smallest subnormal
      {DType::kFp8E5m2, 3.0f, 3.5f, 0.5},
      {DType::kFp8E3m4, 1.0f, 1.0625f, 0.0625},
      {DType::kFp8E4m3Fn, 256.0f, 288.0f, 0.9375},
      {DType::kTf32, 1.0f, 1.0009765625f, 0.5},
      {DType::kInt8, 3.0f, 4.0f, 0.25},
      {DType::kInt32, -7.0f, -8.0f, 0.625},
  };
  for (const SrCase& c : cases) {
    const auto x = static_cast<float>(c.lo + c.fraction * (static_cast<double>(c.hi) - c.lo));
    SCOPED_TRACE(std::string(dtypeName(c.type)) + " x=" + std::to_string(x));
    const int size = byteSize(c.type);
    const std::vector<float> input(kSamples, x);
    std::vector<std::byte> bytes(kSamples * static_cast<std::size_t>(size));
    convertFromFloat(input, c.type, bytes, stochastic(0xC0FFEE, static_cast<int>(c.type)));
    std::vector<float> output(kSamples);
    convertToFloat(bytes, c.type, output);
    std::size_t ups = 0;
    double sum = 0;
    for (float y : output) {
      ASSERT_TRUE(y == c.lo || y == c.hi) << y;
      ups += y == c.hi ? 1 : 0;
      sum += y;
    }
    const double n = kSamples;
    const double sigma = std::sqrt(n * c.fraction * (1 - c.fraction));
    EXPECT_NEAR(static_cast<double>(ups), n * c.fraction, 5 * sigma);
    const double spacing = std::fabs(static_cast<double>(c.hi) - c.lo);
    EXPECT_NEAR(sum / n, x, 5 * spacing * sigma / n);
  }
}

TEST(StochasticRounding, RepresentableValuesNeverMove) {
  for (float x : {0.0f, -0.0f, 1.0f, 240.0f, -0x1p-9f, 0.5f}) {
    for (std::uint32_t word : {0u, 1u, 0x7FFFFFFFu, 0xFFFFFFFFu}) {
      EXPECT_EQ(quantize(x, DType::kFp8E4m3, stochastic(1), word), x) << x << " " << word;
    }
  }
}

TEST(StochasticRounding, RandomWordIsAddedBelowTheKeptBits) {
  // bf16 keeps the top 16 bits of 1 + 2^-9: the discarded fraction is 1/4 of a bf16 ulp, so the
  // value rounds up exactly when the word is >= 3/4 * 2^32.
  const float x = 1.0f + 0x1p-9f;
  EXPECT_EQ(encodeFloat(x, DType::kBf16, stochastic(0), 0xBFFFFFFFu), 0x3F80u);
  EXPECT_EQ(encodeFloat(x, DType::kBf16, stochastic(0), 0xC0000000u), 0x3F81u);
  // More than 32 discarded bits: only the top 32 bits of the fraction count.
  const float tiny = 0x1p-40f;  // fraction 2^-31 of the e4m3 subnormal spacing 2^-9
  EXPECT_EQ(encodeFloat(tiny, DType::kFp8E4m3, stochastic(0), 0xFFFFFFFDu), 0x00u);
  EXPECT_EQ(encodeFloat(tiny, DType::kFp8E4m3, stochastic(0), 0xFFFFFFFEu), 0x01u);
}

TEST(StochasticRounding, OverflowFollowsTheSaturationRules) {
  // 244 is a quarter of the way from 240 to 256 (= overflow) in e4m3.
  EXPECT_EQ(quantize(244.0f, DType::kFp8E4m3, stochastic(0), 0xC0000000u), INFINITY);
  EXPECT_EQ(quantize(244.0f, DType::kFp8E4m3, stochastic(0), 0xBFFFFFFFu), 240.0f);
  ConvertOptions saturating = stochastic(0);
  saturating.saturate = true;
  EXPECT_EQ(quantize(244.0f, DType::kFp8E4m3, saturating, 0xFFFFFFFFu), 240.0f);
  EXPECT_EQ(quantize(460.0f, DType::kFp8E4m3Fn, stochastic(0), 0xFFFFFFFFu), 448.0f);
}

// Hardware-doc example (Neuron data-types page): add 0.5 to fp16 1024.0 2048 times. Under RNE
// each sum ties back to 1024. Under SR each step adds 0.5 in expectation, so the result is
// 2048 in expectation with sigma = sqrt(2048 * 0.25) ~= 22.6 (slightly more once past 2048,
// where steps are 0 or 2); we assert |result - 2048| <= 5 * 25 for one run, and for the mean of
// 64 seeds |mean - 2048| <= 5 * 25 / 8. The documented hardware result, about 2056, is inside.
float accumulateHalves(const ConvertOptions& options) {
  float value = 1024.0f;
  for (std::uint64_t step = 0; step < 2048; ++step) {
    value = quantize(value + 0.5f, DType::kFp16, options, stochasticWord(options, step));
  }
  return value;
}

TEST(StochasticRounding, DocumentedFp16AccumulationExample) {
  EXPECT_EQ(accumulateHalves(ConvertOptions{}), 1024.0f);
  const float one = accumulateHalves(stochastic(2026));
  EXPECT_NEAR(one, 2048.0f, 5 * 25.0);
  double sum = 0;
  for (std::uint64_t seed = 0; seed < 64; ++seed) {
    sum += accumulateHalves(stochastic(seed));
  }
  EXPECT_NEAR(sum / 64, 2048.0, 5 * 25.0 / 8);
}

TEST(StochasticRounding, ReproducibleAndOrderIndependent) {
  constexpr std::size_t kCount = 10007;
  std::vector<float> input(kCount);
  for (std::size_t i = 0; i < kCount; ++i) {
    input[i] = std::sin(static_cast<float>(i)) * 100.0f;
  }
  auto convert = [&](const ConvertOptions& options) {
    std::vector<std::byte> bytes(kCount * 2);
    convertFromFloat(input, DType::kBf16, bytes, options);
    return bytes;
  };
  const std::vector<std::byte> first = convert(stochastic(7, 3));
  EXPECT_EQ(first, convert(stochastic(7, 3)));
  EXPECT_NE(first, convert(stochastic(8, 3)));
  EXPECT_NE(first, convert(stochastic(7, 4)));
  // Converting in pieces, last piece first, with the right firstIndex gives the same bytes.
  std::vector<std::byte> pieces(kCount * 2);
  const std::size_t cuts[] = {0, 1, 5, 4096, 4099, kCount};
  for (int p = 4; p >= 0; --p) {
    const std::size_t begin = cuts[p];
    const std::size_t end = cuts[p + 1];
    convertFromFloat(std::span<const float>(input).subspan(begin, end - begin), DType::kBf16,
                     std::span<std::byte>(pieces).subspan(begin * 2, (end - begin) * 2),
                     stochastic(7, 3), begin);
  }
  EXPECT_EQ(first, pieces);
  // Element i uses stochasticWord(options, i), as the scalar API does.
  for (std::size_t i = 0; i < kCount; i += 101) {
    const ConvertOptions options = stochastic(7, 3);
    const std::uint32_t scalar = encodeFloat(input[i], DType::kBf16, options,
                                             stochasticWord(options, i));
    const auto bulk = static_cast<std::uint32_t>(std::to_integer<std::uint8_t>(first[2 * i])) |
                      (static_cast<std::uint32_t>(std::to_integer<std::uint8_t>(first[2 * i + 1]))
                       << 8);
    ASSERT_EQ(bulk, scalar) << i;
  }
  // Different seeds change a large share of the inexact elements.
  const std::vector<std::byte> other = convert(stochastic(8, 3));
  std::size_t differ = 0;
  for (std::size_t i = 0; i < first.size(); i += 2) {
    differ += (first[i] != other[i] || first[i + 1] != other[i + 1]) ? 1 : 0;
  }
  EXPECT_GT(differ, kCount / 5);
}

}  // namespace
}  // namespace trn
