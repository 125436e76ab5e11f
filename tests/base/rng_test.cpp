#include "trn/base/rng.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace trn {
namespace {

using Words4 = std::array<std::uint32_t, 4>;

// Known-answer vectors of the Random123 distribution (tests/kat_vectors, "philox4x32 10").
TEST(Philox4x32, MatchesRandom123KnownAnswers) {
  EXPECT_EQ(philox4x32({0, 0, 0, 0}, {0, 0}),
            (Words4{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (Words4{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (Words4{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(CounterRng, RandomAccessAgreesWithSequentialWalk) {
  CounterRng walker(42, 7);
  const CounterRng indexed(42, 7);
  for (std::uint64_t i = 0; i < 100; ++i) {
    EXPECT_EQ(walker.next(), indexed.at(i)) << "word " << i;
  }
}

TEST(CounterRng, WordsComeFromTheDocumentedCounterLayout) {
  const CounterRng rng(0x0123456789abcdefULL, 0x1111222233334444ULL);
  const std::uint64_t block = 0x0000000500000009ULL;
  const Words4 expected =
      philox4x32({0x00000009, 0x00000005, 0x33334444, 0x11112222}, {0x89abcdef, 0x01234567});
  for (std::uint64_t lane = 0; lane < 4; ++lane) {
    EXPECT_EQ(rng.at(block * 4 + lane), expected[lane]);
  }
}

TEST(CounterRng, DifferentSeedsAndStreamsDiffer) {
  EXPECT_NE(CounterRng(1, 0).at(0), CounterRng(2, 0).at(0));
  EXPECT_NE(CounterRng(1, 0).at(0), CounterRng(1, 1).at(0));
}

// Mean and variance of 2^16 uniforms are within 5 standard errors of 1/2 and 1/12, and each of
// 16 equal bins holds its expected count within 5 sigma.
TEST(CounterRng, UniformDoublesAreUniform) {
  constexpr int kSamples = 1 << 16;
  constexpr int kBins = 16;
  CounterRng rng(2026, 0);
  double sum = 0;
  double sumSquares = 0;
  std::vector<int> bins(kBins, 0);
  for (int i = 0; i < kSamples; ++i) {
    const double u = rng.nextUniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    sumSquares += u * u;
    ++bins[static_cast<int>(u * kBins)];
  }
  const double mean = sum / kSamples;
  const double variance = sumSquares / kSamples - mean * mean;
  EXPECT_NEAR(mean, 0.5, 5 * std::sqrt(1.0 / 12 / kSamples));
  EXPECT_NEAR(variance, 1.0 / 12, 5 * std::sqrt(1.0 / 180 / kSamples));
  const double expected = static_cast<double>(kSamples) / kBins;
  const double sigma = std::sqrt(expected * (1 - 1.0 / kBins));
  for (int b = 0; b < kBins; ++b) {
    EXPECT_NEAR(bins[b], expected, 5 * sigma) << "bin " << b;
  }
}

}  // namespace
}  // namespace trn
