// Logical cores (LNC) as ranks: the places of a chip, their on-chip DMA, the chip's links and
// HBM stacks they share, against times derived by hand; collectives over them against the
// float64 reference; and 64 ranks on trn2.48xlarge.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>

#include "fabric_fixture.h"
#include "trn/fabric/collective.h"
#include "trn/fabric/flow_simulator.h"
#include "trn/fabric/functional_collective.h"
#include "trn/fabric/plan.h"
#include "trn/numerics/convert.h"

namespace trn::fabric {
namespace {

using testing::grid;
using testing::kMicrosecond;
using testing::logicalChip;
using testing::ring;

TEST(LogicalCores, AreThePlacesOfAChipAlongAnInnermostCoreDimension) {
  const Topology t = testing::twoLogicalChips(4);  // 2 chips x 2 logical cores (LNC=2)
  EXPECT_EQ(t.chips(), 4);
  EXPECT_EQ(t.ranksPerChip(), 2);
  EXPECT_EQ(t.physicalChipOf(3), 1);
  const Route within = t.route(0, 1);
  ASSERT_EQ(within.links.size(), 2U);
  EXPECT_EQ(t.resourceName(within.links[0]), "chip 0 core 0 DMA out");
  EXPECT_EQ(t.resourceName(within.links[1]), "chip 0 core 1 DMA in");
  EXPECT_EQ(within.latency, kMicrosecond);  // the DMA's fixed cost
  EXPECT_DOUBLE_EQ(t.bandwidth(within.links[0]), 0.2);
  EXPECT_EQ(t.resourceName(t.hbm(1)), "chip 0 HBM stack 1");
  EXPECT_DOUBLE_EQ(t.bandwidth(t.hbm(1)), 5.0);
  // Core 1 of chip 0 to core 1 of chip 1: over the chips' link only.
  const Route across = t.route(1, 3);
  ASSERT_EQ(across.links.size(), 1U);
  EXPECT_EQ(t.resourceName(across.links[0]), "chip 0 x+");
  // At LNC=1 the 4 cores of a chip use the stacks of their physical cores: 0, 0, 1, 1.
  const Topology lnc1 = testing::twoLogicalChips(8);
  EXPECT_EQ(lnc1.hbm(0), lnc1.hbm(1));
  EXPECT_NE(lnc1.hbm(1), lnc1.hbm(2));
  EXPECT_DOUBLE_EQ(lnc1.bandwidth(lnc1.route(0, 1).links[0]), 0.1);  // one core's engines
}

TEST(LogicalCores, AStepWithinAChipGoesThroughItsDmaAndHbmStacks) {
  const Topology t = testing::twoLogicalChips(4);
  Plan plan(t);
  plan.transfer(0, 1, 1e6, {});
  const Result<PlanTiming> timing = simulate(plan);
  ASSERT_TRUE(timing.ok()) << timing.status().toString();
  // 1 MB at the logical core's 0.2 byte/ps = 5 us, then the DMA's 1 us.
  EXPECT_EQ(timing->makespan, 6 * kMicrosecond);
}

TEST(LogicalCores, TheCoresOfAChipShareItsLinks) {
  const Topology t = testing::twoLogicalChips(4);
  Plan plan(t);
  plan.transfer(0, 2, 1e6, {});  // chip 0 core 0 -> chip 1 core 0
  plan.transfer(1, 3, 1e6, {});  // chip 0 core 1 -> chip 1 core 1
  const Result<PlanTiming> timing = simulate(plan);
  ASSERT_TRUE(timing.ok()) << timing.status().toString();
  // Both on chip 0's x+ at 0.05 byte/ps: 20 us, then the hop's 1 us.
  EXPECT_EQ(timing->makespan, 21 * kMicrosecond);
}

TEST(LogicalCores, RanksThatAreNotAWholeNumberOfLogicalCoresPerChipAreRefused) {
  const Result<Topology> three = Topology::forRanks(grid({ring("x", 2)}), logicalChip(), 6);
  ASSERT_FALSE(three.ok());
  EXPECT_NE(three.status().toString().find(
                "3 ranks per chip: a test chip runs one rank, or one per logical core: 4 (LNC=1), "
                "2 (LNC=2)"),
            std::string::npos)
      << three.status().toString();
  const Result<Topology> five = Topology::forRanks(grid({ring("x", 2)}), logicalChip(), 5);
  ASSERT_FALSE(five.ok());
  EXPECT_NE(five.status().toString().find("whole number of logical cores per chip"),
            std::string::npos)
      << five.status().toString();
}

TEST(LogicalCores, EveryAlgorithmAllReducesOverThemAsTheFloat64ReferenceDoes) {
  const Topology t = testing::twoLogicalChips(8);  // 2 chips x 4 logical cores
  CollectiveRequest r;
  r.op = CollectiveOp::kAllReduce;
  r.group.resize(8);
  std::iota(r.group.begin(), r.group.end(), 0);
  r.elementBytes = 4;
  r.bytes = 64 * 4;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);
  std::vector<std::vector<std::byte>> inputs(8, std::vector<std::byte>(256));
  for (auto& in : inputs) {
    for (std::size_t e = 0; e < 64; ++e) {
      const float v = uniform(rng);
      std::memcpy(in.data() + e * 4, &v, 4);
    }
  }
  for (const Algorithm a : kAllAlgorithms) {
    const Result<DataCollectiveResult> got =
        runCollectiveOnData(t, logicalChip(), r, DType::kFp32, ReduceOp::kSum, inputs, a);
    ASSERT_TRUE(got.ok()) << algorithmName(a) << ": " << got.status().toString();
    const Result<ReferenceCheck> check =
        checkAgainstFloat64(r, DType::kFp32, ReduceOp::kSum, inputs, got->outputs);
    ASSERT_TRUE(check.ok());
    EXPECT_EQ(check->elements, 8 * 64);
    EXPECT_LT(check->maxRelative, 1e-6) << algorithmName(a);
  }
}

TEST(LogicalCores, SixtyFourRanksOnTrn2InstanceAreFourLogicalCoresPerChip) {
  const Topology t = testing::systemTopology("trn2.48xlarge", 64);
  EXPECT_EQ(t.chips(), 64);
  EXPECT_EQ(t.ranksPerChip(), 4);  // LNC=2, the Trn2 default
  // A logical core at LNC=2 drives 2 x 16 DMA engines of 23 B/ns: 0.736 byte/ps on-chip.
  EXPECT_DOUBLE_EQ(t.bandwidth(t.route(0, 1).links[0]), 0.736);
  CollectiveRequest r;
  r.op = CollectiveOp::kAllReduce;
  r.group.resize(64);
  std::iota(r.group.begin(), r.group.end(), 0);
  r.bytes = std::int64_t{1} << 20;
  const Result<CollectiveResult> result = runCollective(t, r);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  for (const Candidate& c : result->candidates) {
    EXPECT_TRUE(c.picoseconds.has_value()) << algorithmName(c.algorithm) << ": " << c.skipped;
  }
}

}  // namespace
}  // namespace trn::fabric
