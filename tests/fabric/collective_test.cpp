// The collective algorithms: times derived by hand on small rings, the choice between
// algorithms, and the errors bad requests get.
#include "trn/fabric/collective.h"

#include <gtest/gtest.h>

#include <numeric>

#include "fabric_fixture.h"

namespace trn::fabric {
namespace {

using testing::grid;
using testing::kMicrosecond;
using testing::ring;
using testing::timeOf;
using testing::topologyOf;

CollectiveRequest request(CollectiveOp op, std::int64_t ranks, std::int64_t bytes) {
  CollectiveRequest r;
  r.op = op;
  r.group.resize(static_cast<std::size_t>(ranks));
  std::iota(r.group.begin(), r.group.end(), 0);
  r.bytes = bytes;
  r.elementBytes = 2;
  return r;
}

// A ring of 4 chips, 800 KB: each of the two channels (one per direction, so no link is shared)
// moves 800 KB / 4 / 2 = 100 KB per step in 1 us, plus 1 us per hop, over 3 steps.
TEST(RingCollective, AnAllGatherOnFourChipsTakesThreeStepsOfOneChunkEach) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  EXPECT_EQ(timeOf(t, request(CollectiveOp::kAllGather, 4, 800'000), Algorithm::kRing),
            3 * 2 * kMicrosecond);
}

// A reduce-scatter adds, after each step, the reduction of the chunk received: 300 KB of HBM
// traffic per channel, both channels' reductions at once on 10 byte/ps: 60 ns. (Pieces of 100
// KB are below two slices of 64 KiB: each step goes whole.)
TEST(RingCollective, AReduceScatterAddsEachStepsReduction) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  EXPECT_EQ(timeOf(t, request(CollectiveOp::kReduceScatter, 4, 800'000), Algorithm::kRing),
            3 * (2 * kMicrosecond + 60'000));
}

TEST(RingCollective, AnAllReduceIsAReduceScatterThenAnAllGather) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  EXPECT_EQ(timeOf(t, request(CollectiveOp::kAllReduce, 4, 800'000), Algorithm::kRing),
            3 * (2 * kMicrosecond + 60'000) + 3 * 2 * kMicrosecond);
}

// Slices (R2): reductions on a collective core's DMA at 0.08 byte/ps, slower than the links' 0.1.
// 8 MB on a ring of 4: per channel and step a piece of 1 MB, cut in 8 slices of 125 KB. A slice
// moves in a = 1.25 us (+ 1 us hop) and reduces in b = 1.5625 us. The member's reductions run
// back to back from the first slice's arrival (a + 1 us), each slice going on to the next
// member as soon as it is reduced (its next reduction there is due 7 b = 10.9 us later, and
// it arrives a + 1 us = 2.25 us after it leaves): a + 1 us + 3 steps x 8 slices x b = 39.75 us.
// Unsliced, each step is its transfer, hop and reduction in turn: 3 x (10 + 1 + 12.5) = 70.5 us.
TEST(RingCollective, SlicedStepsOverlapOneSlicesReductionWithTheNextsTransfer) {
  const Topology t =
      topologyOf(grid({ring("x", 4)}), testing::chipWithCollectiveCores(16, 16, 160'000'000'000));
  ASSERT_DOUBLE_EQ(t.reduceBandwidth(), 0.08);
  const std::int64_t sliced =
      timeOf(t, request(CollectiveOp::kReduceScatter, 4, 8'000'000), Algorithm::kRing);
  // Each operation's end is rounded up to the ps: at most one ps per operation of the chain.
  EXPECT_NEAR(static_cast<double>(sliced), 39'750'000.0, 30.0);
  EXPECT_LT(sliced, 70'500'000);
}

// With a per-message overhead (EFA's 2 us host proxy), K slices cost K overheads and hide all but
// 1/K of the shorter of a piece's transfer and its reduction: K = sqrt(shorter / overhead). Four
// chips on a switch of 25 GB/s links; a 5.12 MB reduce-scatter has pieces of 640 KB per channel,
// 25.6 us to send and 8 us to reduce at 0.08 byte/ps: sqrt(8 / 2) = 2 slices (8 without the
// overhead). Each slice past the first adds a copy and a reduction per member, step and channel,
// and slicing adds a join per member and channel.
TEST(RingCollective, APerMessageOverheadLimitsTheSlicesToTheCheapestCount) {
  const auto system = [](std::int64_t overheadPs) {
    return grid({{"node", 4, spec::DimensionKind::kSwitch, "efa"}},
                {{"efa", BytesPerSecond(25'000'000'000), Picoseconds(15 * kMicrosecond),
                  Picoseconds(overheadPs)}});
  };
  const spec::ChipSpec chip = testing::chipWithCollectiveCores(16, 16, 160'000'000'000);
  const Topology efa = topologyOf(system(2 * kMicrosecond), chip);
  const Topology free = topologyOf(system(0), chip);
  const auto opsOf = [](const Topology& t, std::int64_t bytes) {
    const Result<Plan> plan =
        buildPlan(t, request(CollectiveOp::kReduceScatter, 4, bytes), Algorithm::kRing);
    EXPECT_TRUE(plan.ok()) << plan.status().toString();
    return plan.ok() ? static_cast<std::int64_t>(plan->ops().size()) : 0;
  };
  const std::int64_t whole = opsOf(efa, 8 * 4 * 2);  // pieces of 8 bytes: one slice
  EXPECT_EQ(opsOf(efa, 5'120'000) - whole, 2 * 3 * 4 * (2 - 1) * 2 + 2 * 4);
  EXPECT_EQ(opsOf(free, 5'120'000) - whole, 2 * 3 * 4 * (8 - 1) * 2 + 2 * 4);
}

// Recursive doubling on 4 chips of a ring: the all-gather's partners are 1 apart (1 hop) with
// 2 MB, then 2 apart (2 hops, halfway round) with 4 MB. Halfway round, chips 0 and 2 send
// forward and 1 and 3 back, so no link carries two messages.
TEST(RecursiveCollective, AnAllGatherDoublesTheDataAndTheDistanceEachStep) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  // Step 1: 2 MB at 0.1 byte/ps = 20 us + 1 us. Step 2: 4 MB = 40 us + 2 us.
  EXPECT_EQ(timeOf(t, request(CollectiveOp::kAllGather, 4, 8'000'000), Algorithm::kRecursive),
            21 * kMicrosecond + 42 * kMicrosecond);
}

TEST(CollectiveChoice, MeshWinsSmallMessagesAndRingWinsLargeOnesOnARingOfEight) {
  const Topology t = topologyOf(grid({ring("x", 8)}));
  const Result<CollectiveResult> small =
      runCollective(t, request(CollectiveOp::kAllReduce, 8, 1024));
  ASSERT_TRUE(small.ok()) << small.status().toString();
  EXPECT_EQ(small->algorithm, Algorithm::kMesh);
  const Result<CollectiveResult> large =
      runCollective(t, request(CollectiveOp::kAllReduce, 8, 64 << 20));
  ASSERT_TRUE(large.ok()) << large.status().toString();
  EXPECT_EQ(large->algorithm, Algorithm::kRing);
  for (const Candidate& c : large->candidates) {
    if (c.picoseconds) {
      EXPECT_GE(*c.picoseconds, large->picoseconds) << algorithmName(c.algorithm);
    }
  }
}

TEST(CollectiveChoice, TheTorusRingBeatsTheSnakeRingOnALargeAllReduceOverFourByFour) {
  const Topology t = topologyOf(grid({ring("x", 4), ring("y", 4)}));
  const CollectiveRequest r = request(CollectiveOp::kAllReduce, 16, 256 << 20);
  EXPECT_LT(timeOf(t, r, Algorithm::kTorus), timeOf(t, r, Algorithm::kRing));
}

TEST(CollectiveChoice, TheSameRequestGivesTheSameTime) {
  const Topology t = topologyOf(grid({ring("x", 4), ring("y", 4)}));
  const CollectiveRequest r = request(CollectiveOp::kAllReduce, 16, 3 << 20);
  const Result<CollectiveResult> a = runCollective(t, r);
  const Result<CollectiveResult> b = runCollective(t, r);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->picoseconds, b->picoseconds);
  EXPECT_EQ(a->algorithm, b->algorithm);
  EXPECT_EQ(a->timing.events, b->timing.events);
}

TEST(CollectiveChoice, EveryOperationRunsOnSomeAlgorithm) {
  const Topology t = topologyOf(grid({ring("x", 4), ring("y", 2)}));
  for (const CollectiveOp op :
       {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter,
        CollectiveOp::kAllToAll, CollectiveOp::kBroadcast, CollectiveOp::kPermute}) {
    const Result<CollectiveResult> r = runCollective(t, request(op, 8, 1 << 20));
    ASSERT_TRUE(r.ok()) << opName(op) << ": " << r.status().toString();
    EXPECT_GT(r->picoseconds, 0) << opName(op);
  }
}

TEST(CollectiveRequests, BadOnesGetErrorsThatNameTheProblem) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  auto message = [&](const CollectiveRequest& r, std::optional<Algorithm> a = std::nullopt) {
    const Result<CollectiveResult> result = runCollective(t, r, a);
    EXPECT_FALSE(result.ok());
    return result.ok() ? std::string() : result.status().toString();
  };
  CollectiveRequest outside = request(CollectiveOp::kAllReduce, 4, 64);
  outside.group[3] = 7;
  EXPECT_NE(message(outside).find("rank 3 is chip 7, but the system has chips 0..3"),
            std::string::npos);
  CollectiveRequest twice = request(CollectiveOp::kAllReduce, 4, 64);
  twice.group[2] = 1;
  EXPECT_NE(message(twice).find("chip 1 is in the group twice"), std::string::npos);
  EXPECT_NE(message(request(CollectiveOp::kAllReduce, 3, 8)).find("does not divide among 3"),
            std::string::npos);
  EXPECT_NE(message(request(CollectiveOp::kAllGather, 3, 6), Algorithm::kRecursive)
                .find("power-of-two number of ranks"),
            std::string::npos);
  EXPECT_NE(message(request(CollectiveOp::kAllToAll, 4, 64), Algorithm::kRing)
                .find("has no all_to_all form here"),
            std::string::npos);
  EXPECT_FALSE(parseOp("allreduce").ok());
  EXPECT_NE(parseAlgorithm("tree").status().toString().find("ring, mesh, rdh, torus"),
            std::string::npos);
}

}  // namespace
}  // namespace trn::fabric
