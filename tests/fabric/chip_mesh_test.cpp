// R2's two-step mesh over logical-core ranks x chips: on data over 1 to 4 Trn2 chips against the
// float64 reference, its documented reduction order bit for bit, an all-gather's time derived by
// hand, and where it applies.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "fabric_fixture.h"
#include "trn/fabric/collective.h"
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
  return testing::uniformInputs(ranks, count, dtype, 5);
}

TEST(ChipMesh, ReducesAndGathersOverTheLogicalCoresOfOneToFourTrn2Chips) {
  // Rounded twice: each chip's partial, then the sum of the partials.
  testing::expectMatchesFloat64OverLogicalCores(Algorithm::kChipMesh, ReduceOp::kMin, 3,
                                                [](std::size_t) { return 2.0; });
}

// docs/collectives.md: rank d's chunk is, per chip, the sum of the chip's ranks in logical-core
// order in fp32, rounded; then the chips' partials in the order the group first names the chips,
// in fp32, rounded once.
TEST(ChipMesh, ReductionOrderIsTheDocumentedOne) {
  const Topology t = testing::systemTopology("trn2.48xlarge", 64);
  constexpr std::int64_t kChunk = 4;
  const std::vector<std::int64_t> group = {4, 5, 6, 7, 0, 1, 2, 3};  // chip 1 first
  const CollectiveRequest r = requestOver(CollectiveOp::kAllReduce, group, kChunk, DType::kBf16);
  const auto in = randomInputs(8, 8 * kChunk, DType::kBf16);
  auto x = [&](std::int64_t rank, std::int64_t e) {
    return elementAt(in[static_cast<std::size_t>(rank)], e, DType::kBf16);
  };
  const Result<DataCollectiveResult> got =
      runCollectiveOnData(t, trn2Chip(), r, DType::kBf16, ReduceOp::kSum, in, Algorithm::kChipMesh);
  ASSERT_TRUE(got.ok()) << got.status().toString();
  std::vector<float> expected;
  for (std::int64_t e = 0; e < 8 * kChunk; ++e) {
    // Ranks 0-3 of the group are chip 1's logical cores 0-3, ranks 4-7 chip 0's.
    const float first = quantize(x(0, e) + x(1, e) + x(2, e) + x(3, e), DType::kBf16);
    const float second = quantize(x(4, e) + x(5, e) + x(6, e) + x(7, e), DType::kBf16);
    expected.push_back(quantize(first + second, DType::kBf16));
  }
  testing::expectEveryRankHolds(got->outputs, expected, DType::kBf16);
}

// The test chip at LNC=2 (fabric_fixture.h): 2 ranks a chip, their DMA 0.2 byte/ps on-chip with
// a 1 us fixed cost; 2 chips joined by links of 0.1 byte/ps and 1 us. An all-gather of 1 MB per
// rank: step 1, chip 0's rank 1 sends both its chip's chunks (2 MB) to chip 1's rank 1 and back
// the same way, each on its own link: 20 + 1 us; meanwhile each rank copies its own chunk to the
// other rank of its chip (5 + 1 us). Step 2, rank 1 of each chip copies the 2 MB it received to
// rank 0: 10 + 1 us. 21 + 11 = 32 us.
TEST(ChipMesh, AnAllGatherOverTwoChipsTakesTheTimeDerivedByHand) {
  const CollectiveRequest r =
      requestOver(CollectiveOp::kAllGather, consecutive(0, 4), 250'000, DType::kFp32);
  EXPECT_EQ(testing::timeOf(testing::twoLogicalChips(4), r, Algorithm::kChipMesh),
            32 * kMicrosecond);
}

TEST(ChipMesh, AppliesToWholeChipsOfLogicalCoresUpToSixteen) {
  CollectiveRequest r =
      requestOver(CollectiveOp::kReduceScatter, consecutive(0, 16), 4, DType::kFp32);
  EXPECT_EQ(
      unsupportedReason(testing::systemTopology("trn2.48xlarge", 16), r, Algorithm::kChipMesh),
      "needs ranks that are logical cores (here a rank is a chip)");
  const Topology ultra = testing::systemTopology("trn2-ultraserver", 256);
  r = requestOver(CollectiveOp::kReduceScatter, consecutive(0, 256), 4, DType::kFp32);
  EXPECT_EQ(unsupportedReason(ultra, r, Algorithm::kChipMesh),
            "reduces a partial from each of 64 chips at once, and DMA compute adds at most 16");
  r.group = consecutive(0, 64);  // 16 chips
  EXPECT_EQ(unsupportedReason(ultra, r, Algorithm::kChipMesh), "");
}

}  // namespace
}  // namespace trn::fabric
