// Tests of the Vector-engine random-number instructions (dropout, rng, set_rng_seed): exact drop
// rule against the generator's own words, reproducibility per seed, truncation to narrow integer
// types, statistics, engine independence, and the instruction-specific verifier rules.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <tuple>

#include "vector_test_util.h"

namespace trn::isa {
namespace {

using vtest::decode;
using vtest::expectRejected;
using vtest::inputRegion;
using vtest::makeRegion;
using vtest::outputRegion;
using vtest::rawBits;
using vtest::Region;
using vtest::runKernel;
using vtest::verifyLine;

/// A [1, 1] seed region holding `bits`.
Region seedRegion(std::uint32_t bits, DType type = DType::kUint32) {
  Region r = makeRegion("seed", type, 0, 1, 1, 60000);
  r.input = trn::testing::toBytes(std::vector<std::uint32_t>{bits});
  return r;
}

/// The first `count` words of the Vector engine's generator after set_rng_seed(bits), read back
/// through rng into a uint32 tile of 32 partitions.
std::vector<std::uint32_t> words(std::uint32_t bits, std::int64_t count) {
  Region seed = seedRegion(bits);
  Region out = outputRegion("w", DType::kUint32, 0, 32, count / 32);
  const auto o = runKernel({seed, out}, {fmt::format("dve: set_rng_seed src_seeds={}", seed.ap()),
                                         fmt::format("dve: rng dst={}", out.ap())});
  return rawBits(o.at("w"), DType::kUint32);
}

// ---- dropout ----

TEST(Dropout, DropsExactlyTheElementsWhoseRandomWordIsBelowProbTimes2To32) {
  constexpr std::int64_t kFree = 256;
  const std::vector<std::uint32_t> w = words(1234, 32 * kFree);
  std::vector<float> probs(32);
  for (std::size_t p = 0; p < 32; ++p) {
    probs[p] = static_cast<float>(p) / 31.0f;  // 0 .. 1 across partitions
  }
  std::vector<float> data(32 * kFree);
  for (std::size_t i = 0; i < data.size(); ++i) {
    data[i] = 1.0f + static_cast<float>(i % 7);
  }
  Region seed = seedRegion(1234);
  Region in = inputRegion("a", DType::kFp32, 0, 32, kFree, data);
  Region prob = inputRegion("p", DType::kFp32, 0, 32, 1, probs, 4096);
  Region out = outputRegion("c", DType::kFp32, 0, 32, kFree, 8192);
  const auto o =
      runKernel({seed, in, prob, out},
                {fmt::format("dve: set_rng_seed src_seeds={}", seed.ap()),
                 fmt::format("dve: dropout dst={} data={} prob={}", out.ap(), in.ap(), prob.ap())});
  const std::vector<float> got = decode(o.at("c"), DType::kFp32);
  for (std::size_t i = 0; i < got.size(); ++i) {
    const bool drop = static_cast<double>(w[i]) < static_cast<double>(probs[i / kFree]) * 0x1p32;
    ASSERT_EQ(got[i], drop ? 0.0f : data[i]) << i;
  }
}

TEST(Dropout, ProbabilityZeroKeepsBitsAndOneDropsEverything) {
  Region in = makeRegion("a", DType::kFp32, 32, 2, 4);
  const std::vector<std::uint32_t> bits = {0x7fa00001, 0x80000000, 0x00000001, 0x3f800000,
                                           0xff800000, 0xbf800000, 0x7f7fffff, 0x12345678};
  in.input = trn::testing::toBytes(bits);
  Region keep = outputRegion("k", DType::kFp32, 32, 2, 4, 64);
  Region drop = outputRegion("d", DType::kFp32, 32, 2, 4, 128);
  const auto o = runKernel(
      {in, keep, drop},
      {fmt::format("dve: dropout dst={} data={} prob=0", keep.ap(), in.ap()),
       fmt::format("dve: dropout dst={} data={} prob=1", drop.ap(), in.ap("[[-1,4]]", 3))});
  EXPECT_EQ(rawBits(o.at("k"), DType::kFp32), bits);
  EXPECT_EQ(rawBits(o.at("d"), DType::kFp32), std::vector<std::uint32_t>(8, 0));
}

TEST(Dropout, DropsTheRequestedFractionOfIntegerAndBf16Data) {
  Region ints = inputRegion("i", DType::kInt16, 0, 128, 256, std::vector<float>(128 * 256, -7));
  Region halves =
      inputRegion("h", DType::kBf16, 0, 128, 256, std::vector<float>(128 * 256, 3), 1024);
  Region prob = inputRegion("p", DType::kFp32, 0, 128, 1, std::vector<float>(128, 0.3f), 2048);
  Region outInts = outputRegion("oi", DType::kInt16, 0, 128, 256, 4096);
  Region outHalves = outputRegion("oh", DType::kBf16, 0, 128, 256, 8192);
  const auto o = runKernel(
      {ints, halves, prob, outInts, outHalves},
      {fmt::format("dve: dropout dst={} data={} prob={}", outInts.ap(), ints.ap(), prob.ap()),
       fmt::format("dve: dropout dst={} data={} prob=0.3", outHalves.ap(), halves.ap())});
  for (const auto& [name, type, kept] :
       {std::tuple{"oi", DType::kInt16, -7.0f}, std::tuple{"oh", DType::kBf16, 3.0f}}) {
    double dropped = 0;
    const std::vector<float> got = decode(o.at(name), type);
    for (const float v : got) {
      ASSERT_TRUE(v == 0.0f || v == kept) << v;
      dropped += v == 0.0f ? 1 : 0;
    }
    // 5 standard deviations of a binomial fraction: sqrt(0.3 * 0.7 / 32768) ~ 0.0025.
    EXPECT_NEAR(dropped / static_cast<double>(got.size()), 0.3, 0.0127) << name;
  }
}

TEST(DropoutVerifier, RejectsEachInstructionSpecificRule) {
  expectRejected(verifyLine("dve: dropout dst=sbuf[0:4]:bf16[[1,8]] data=sbuf[0:4]+64:fp32[[1,8]] "
                            "prob=0.5"),
                 {"'dst' (bf16) and 'data' (fp32) must have the same dtype"});
  expectRejected(
      verifyLine("dve: dropout dst=sbuf[0:4]:int16[[1,8]] data=sbuf[0:4]+64:int16[[1,8]] "
                 "prob=sbuf[0:4]+128:bf16[[1,1]]"),
      {"operand 'prob'", "dtype bf16 is not allowed here (allowed: fp32)"});
  expectRejected(verifyLine("dve: dropout dst=sbuf[0:4]:fp32[[1,8]] data=sbuf[0:4]+64:fp32[[1,8]] "
                            "prob=sbuf[0:4]+128:int32[[1,1]]"),
                 {"operand 'prob'", "dtype int32 is not a floating-point type"});
  expectRejected(verifyLine("dve: dropout dst=sbuf[0:4]:fp32[[1,8]] data=sbuf[0:4]+64:fp32[[1,8]] "
                            "prob=sbuf[0:4]+128:fp32[[1,2]]"),
                 {"operand 'prob'", "must be [4, 1], not [4, 2]"});
}

// ---- rng / set_rng_seed ----

TEST(Rng, SequencesDependOnlyOnTheSeedAndRestartWhenReseeded) {
  Region seed = seedRegion(42);
  Region a = outputRegion("a", DType::kUint32, 0, 32, 64);
  Region b = outputRegion("b", DType::kUint32, 0, 32, 64, 1024);
  Region c = outputRegion("c", DType::kUint32, 0, 32, 64, 2048);
  const std::vector<std::string> lines = {fmt::format("dve: set_rng_seed src_seeds={}", seed.ap()),
                                          fmt::format("dve: rng dst={}", a.ap()),
                                          fmt::format("dve: rng dst={}", b.ap()),
                                          fmt::format("dve: set_rng_seed src_seeds={}", seed.ap()),
                                          fmt::format("dve: rng dst={}", c.ap())};
  const auto o = runKernel({seed, a, b, c}, lines);
  EXPECT_EQ(o.at("a"), o.at("c"));  // reseeding restarts the sequence
  EXPECT_NE(o.at("a"), o.at("b"));  // consecutive draws differ
  EXPECT_EQ(runKernel({seed, a, b, c}, lines).at("b"), o.at("b"));
  EXPECT_NE(words(43, 32 * 64), rawBits(o.at("a"), DType::kUint32));
}

TEST(Rng, RunSeedDrivesTheGeneratorUntilSetRngSeed) {
  Region out = outputRegion("a", DType::kUint32, 0, 32, 64);
  const std::vector<std::string> line = {fmt::format("dve: rng dst={}", out.ap())};
  core::CoreOptions seven;
  seven.seed = 7;
  core::CoreOptions eight;
  eight.seed = 8;
  EXPECT_EQ(runKernel({out}, line, seven).at("a"), runKernel({out}, line, seven).at("a"));
  EXPECT_NE(runKernel({out}, line, seven).at("a"), runKernel({out}, line, eight).at("a"));
}

TEST(Rng, NarrowTypesTakeTheLeastSignificantBits) {
  const std::vector<std::uint32_t> w = words(99, 32 * 16);
  for (const DType type :
       {DType::kUint8, DType::kInt8, DType::kUint16, DType::kInt16, DType::kInt32}) {
    Region seed = seedRegion(99);
    Region out = outputRegion("n", type, 0, 32, 16);
    const auto o = runKernel({seed, out}, {fmt::format("dve: set_rng_seed src_seeds={}", seed.ap()),
                                           fmt::format("dve: rng dst={}", out.ap())});
    const std::vector<std::uint32_t> got = rawBits(o.at("n"), type);
    const std::uint32_t mask = byteSize(type) == 4 ? 0xffffffffU : (1U << (8 * byteSize(type))) - 1;
    for (std::size_t i = 0; i < w.size(); ++i) {
      ASSERT_EQ(got[i], w[i] & mask) << dtypeName(type) << " " << i;
    }
  }
}

TEST(Rng, WordsAreUniform) {
  const std::vector<std::uint32_t> w = words(5, 128 * 512);
  double mean = 0;
  std::array<double, 32> ones{};
  for (const std::uint32_t x : w) {
    mean += static_cast<double>(x) * 0x1p-32;
    for (int b = 0; b < 32; ++b) {
      ones[static_cast<std::size_t>(b)] += (x >> b) & 1U;
    }
  }
  const auto n = static_cast<double>(w.size());
  EXPECT_NEAR(mean / n, 0.5, 5 * std::sqrt(1.0 / 12 / n));
  for (const double count : ones) {
    EXPECT_NEAR(count / n, 0.5, 5 * std::sqrt(0.25 / n));
  }
}

TEST(Rng, TheGpSimdGeneratorIsIndependentOfTheVectorSeed) {
  Region seed = seedRegion(1);
  Region other = makeRegion("seed2", DType::kUint32, 0, 1, 1, 60004);
  other.input = trn::testing::toBytes(std::vector<std::uint32_t>{2});
  Region pool1 = outputRegion("p1", DType::kUint32, 0, 32, 16);
  Region vector = outputRegion("v", DType::kUint32, 0, 32, 16, 2048);
  core::CoreOptions options;
  options.seed = 3;
  const auto first = runKernel(
      {seed, other, pool1, vector},
      {fmt::format("dve: set_rng_seed src_seeds={}", seed.ap()),
       fmt::format("pool: rng dst={}", pool1.ap()), fmt::format("dve: rng dst={}", vector.ap())},
      options);
  const auto second = runKernel({seed, other, pool1, vector},
                                {fmt::format("dve: set_rng_seed src_seeds={}", other.ap()),
                                 fmt::format("pool: rng dst={}", pool1.ap())},
                                options);
  EXPECT_EQ(first.at("p1"), second.at("p1"));
  EXPECT_NE(first.at("p1"), first.at("v"));
}

TEST(SetRngSeed, UsesTheRawBitsOfA32BitValue) {
  const std::vector<std::uint32_t> fromInt = words(0x3f800000U, 32 * 8);
  Region seed = makeRegion("seed", DType::kFp32, 0, 1, 1, 60000);
  seed.input = vtest::encode({1.0f}, DType::kFp32);
  Region out = outputRegion("w", DType::kUint32, 0, 32, 8);
  const auto o = runKernel({seed, out}, {fmt::format("dve: set_rng_seed src_seeds={}", seed.ap()),
                                         fmt::format("dve: rng dst={}", out.ap())});
  EXPECT_EQ(rawBits(o.at("w"), DType::kUint32), fromInt);
}

TEST(RngVerifier, RejectsEachInstructionSpecificRule) {
  expectRejected(verifyLine("dve: rng dst=sbuf[0:4]:fp32[[1,8]]"),
                 {"operand 'dst'",
                  "dtype fp32 is not allowed here (allowed: int8, int16, int32, "
                  "uint8, uint16, uint32)"});
  expectRejected(verifyLine("pool: rng dst=psum[0:4]:uint32[[1,8]]"),
                 {"the GpSimd engine cannot access PSUM"});
  expectRejected(verifyLine("dve: set_rng_seed src_seeds=sbuf[0:1]:uint32[[1,2]]"),
                 {"operand 'src_seeds': must be a [1, 1] tensor, not [1, 2]"});
  expectRejected(verifyLine("dve: set_rng_seed src_seeds=sbuf[0:2]:uint32[[1,1]]"),
                 {"operand 'src_seeds': must be a [1, 1] tensor, not [2, 1]"});
  expectRejected(verifyLine("dve: set_rng_seed src_seeds=sbuf[0:1]:int16[[1,1]]"),
                 {"operand 'src_seeds'",
                  "dtype int16 is not allowed here (allowed: int32, "
                  "uint32, fp32)"});
  expectRejected(verifyLine("pool: set_rng_seed src_seeds=sbuf[0:1]:uint32[[1,1]]"),
                 {"set_rng_seed cannot be issued by the pool engine (allowed: dve)"});
}

}  // namespace
}  // namespace trn::isa
