// The KangaRing: on data over the logical cores of one Trn2 chip and of 2 to 4 chips against the
// float64 reference, its documented reduction order bit for bit, a step's time derived by hand,
// where it applies, and against the flat ring on a trn2.48xlarge.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "fabric_fixture.h"
#include "trn/fabric/collective.h"
#include "trn/fabric/flow_simulator.h"
#include "trn/fabric/functional_collective.h"
#include "trn/numerics/convert.h"

namespace trn::fabric {
namespace {

using testing::consecutive;
using testing::elementAt;
using testing::kMicrosecond;
using testing::requestOver;
using testing::trn2Chip;

std::vector<std::vector<std::byte>> randomInputs(std::size_t ranks, std::int64_t count,
                                                 DType dtype) {
  return testing::uniformInputs(ranks, count, dtype, 11);
}

TEST(KangaRing, ReducesAndGathersOverTheLogicalCoresOfOneToFourTrn2Chips) {
  // 5 elements per rank: the channels take 2 and 3 (one chip) or 1, 1, 1 and 2. A sum is rounded
  // once per primary it passes: n / 2 times.
  testing::expectMatchesFloat64OverLogicalCores(
      Algorithm::kKangaRing, ReduceOp::kMax, 5,
      [](std::size_t ranks) { return static_cast<double>(ranks) / 2; });
}

// docs/collectives.md: on one chip of 4 ranks the forward channel (first half of every chunk)
// pairs ranks 0+1 and 2+3 with the even ones primary; the piece of pair q (the chunks of its two
// ranks) accumulates at the other pair's primary (its own value, then its secondary's, rounded)
// and ends at pair q's primary: (partial + primary + secondary) in fp32, rounded once. The
// backward channel (the rest) does the same with the odd ranks primary.
TEST(KangaRing, ReductionOrderIsTheDocumentedOne) {
  const Topology t = testing::systemTopology("trn2.48xlarge", 64);
  constexpr std::int64_t kChunk = 6;
  const CollectiveRequest r =
      requestOver(CollectiveOp::kAllReduce, consecutive(0, 4), kChunk, DType::kBf16);
  const auto in = randomInputs(4, 4 * kChunk, DType::kBf16);
  auto x = [&](std::int64_t rank, std::int64_t e) {
    return elementAt(in[static_cast<std::size_t>(rank)], e, DType::kBf16);
  };
  const Result<DataCollectiveResult> got = runCollectiveOnData(
      t, trn2Chip(), r, DType::kBf16, ReduceOp::kSum, in, Algorithm::kKangaRing);
  ASSERT_TRUE(got.ok()) << got.status().toString();
  std::vector<float> expected;
  for (std::int64_t e = 0; e < 4 * kChunk; ++e) {
    const std::int64_t channel = e % kChunk < kChunk / 2 ? 0 : 1;
    const std::int64_t pair = e / kChunk / 2;
    const std::int64_t other = 1 - pair;
    const float partial =
        quantize(x(2 * other + channel, e) + x(2 * other + 1 - channel, e), DType::kBf16);
    expected.push_back(
        quantize(partial + x(2 * pair + channel, e) + x(2 * pair + 1 - channel, e), DType::kBf16));
  }
  testing::expectEveryRankHolds(got->outputs, expected, DType::kBf16);
}

// The test chip at LNC=1 (fabric_fixture.h): 4 ranks on a chip, each logical core's DMA 0.1
// byte/ps out and in with a 1 us fixed cost, ranks 0-1 on HBM stack 0 and 2-3 on stack 1 (5
// byte/ps each), no collective cores (no stream limits). A reduce-scatter of 4 MB fp32 over the
// chip's 4 ranks: chunks of 1 MB, each channel a half. Step 0: each of the 4 primaries reduces
// its pair's two halves of the other pair's chunks (1 MB) into the other primary's staging, each
// over its own DMA out and the other's DMA in: 10 us + 1 us. Last, each primary reduces (staged,
// own, secondary's) into its own 0.5 MB (no link; its stack carries 4 reads and writes of it,
// shared by 4 such streams: 5 / 16 byte/ps, 1.6 us) and its secondary's (through both ranks' DMA
// at 0.1 byte/ps: 5 us + 1 us). 11 + 6 = 17 us.
TEST(KangaRing, AReduceScatterWithinAChipTakesTheTimeDerivedByHand) {
  const CollectiveRequest r =
      requestOver(CollectiveOp::kReduceScatter, consecutive(0, 4), 250'000, DType::kFp32);
  EXPECT_EQ(testing::timeOf(testing::twoLogicalChips(8), r, Algorithm::kKangaRing),
            17 * kMicrosecond);
}

TEST(KangaRing, AppliesToGroupsOfWholeChipsOfLogicalCoreRanks) {
  CollectiveRequest r = requestOver(CollectiveOp::kAllReduce, consecutive(0, 4), 4, DType::kFp32);
  const Topology chips = testing::systemTopology("trn2.48xlarge", 16);
  EXPECT_EQ(unsupportedReason(chips, r, Algorithm::kKangaRing),
            "needs ranks that are logical cores (here a rank is a chip)");
  const Topology cores = testing::systemTopology("trn2.48xlarge", 64);
  r.group = {0, 1, 2, 4};
  EXPECT_EQ(unsupportedReason(cores, r, Algorithm::kKangaRing),
            "needs every rank of a chip in the group; chip 0 has 3 of its 4");
  r.group = consecutive(0, 4);
  r.op = CollectiveOp::kAllToAll;
  EXPECT_EQ(unsupportedReason(cores, r, Algorithm::kKangaRing), "has no all_to_all form");
}

// Neuron documents the KangaRing as better than the ring at every size for such groups; the
// model finds it faster on a whole trn2.48xlarge of 64 logical-core ranks at 64 MiB.
TEST(KangaRing, BeatsTheFlatRingOverTheLogicalCoresOfATrn2Instance) {
  const Topology t = testing::systemTopology("trn2.48xlarge", 64);
  CollectiveRequest r = requestOver(CollectiveOp::kAllReduce, consecutive(0, 64), 1, DType::kBf16);
  r.bytes = std::int64_t{64} << 20;
  const Result<CollectiveResult> result = runCollective(t, r);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  std::int64_t ring = 0;
  std::int64_t kangaRing = 0;
  for (const Candidate& c : result->candidates) {
    ASSERT_TRUE(c.picoseconds.has_value()) << algorithmName(c.algorithm) << ": " << c.skipped;
    ring = c.algorithm == Algorithm::kRing ? *c.picoseconds : ring;
    kangaRing = c.algorithm == Algorithm::kKangaRing ? *c.picoseconds : kangaRing;
  }
  EXPECT_LT(kangaRing, ring);
}

}  // namespace
}  // namespace trn::fabric
