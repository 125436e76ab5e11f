// The topology's routes and the flow simulator's times, against times derived by hand.
#include <gtest/gtest.h>

#include "fabric_fixture.h"
#include "trn/fabric/flow_simulator.h"
#include "trn/fabric/plan.h"

namespace trn::fabric {
namespace {

using testing::chipWithHbm;
using testing::grid;
using testing::kMicrosecond;
using testing::ring;
using testing::topologyOf;

TEST(FabricRoutes, TakeTheShorterWayRoundEachRingInnermostDimensionFirst) {
  const Topology t = topologyOf(grid({ring("x", 4), ring("y", 4)}));
  // Chip 0 (0,0) to chip 15 (3,3): one hop back along x, then one back along y.
  const Route r = t.route(0, 15);
  ASSERT_EQ(r.links.size(), 2U);
  EXPECT_EQ(t.resourceName(r.links[0]), "chip 0 x-");
  EXPECT_EQ(t.resourceName(r.links[1]), "chip 3 y-");
  EXPECT_EQ(r.latency, 2 * kMicrosecond);
  // Forced forward, the same pair takes three hops along each ring.
  EXPECT_EQ(t.route(0, 15, 1).links.size(), 6U);
  EXPECT_TRUE(t.route(5, 5).links.empty());
}

TEST(FabricRoutes, CrossASwitchDimensionInOneHopThroughTheSendersUplinkAndTheReceiversDownlink) {
  const Topology t = topologyOf(
      grid({ring("x", 2), {"node", 3, spec::DimensionKind::kSwitch, "efa"}},
           {{"link", BytesPerSecond(100'000'000'000), Picoseconds(kMicrosecond), Picoseconds(0)},
            {"efa", BytesPerSecond(25'000'000'000), Picoseconds(15 * kMicrosecond),
             Picoseconds(2 * kMicrosecond)}}));
  const Route r = t.route(1, 4);  // (1, node 0) to (0, node 2)
  ASSERT_EQ(r.links.size(), 3U);
  EXPECT_EQ(t.resourceName(r.links[0]), "chip 1 x-");  // halfway round from an odd coordinate
  EXPECT_EQ(t.resourceName(r.links[1]), "chip 0 node up");
  EXPECT_EQ(t.resourceName(r.links[2]), "chip 4 node down");
  EXPECT_EQ(r.latency, 16 * kMicrosecond);
  EXPECT_EQ(r.overhead, 2 * kMicrosecond);
}

TEST(FabricRoutes, ALineHasNoLinkPastItsEnds) {
  const Topology t = topologyOf(grid({{"x", 3, spec::DimensionKind::kLine, "link"}}));
  EXPECT_EQ(t.route(0, 2).links.size(), 2U);
  EXPECT_EQ(t.route(2, 0).links.size(), 2U);  // back along the line, not round
}

TEST(FabricTopology, RejectsADimensionThatNamesNoLink) {
  const Result<Topology> t = Topology::create(grid({ring("x", 4, "neuronlink")}), chipWithHbm());
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("names link 'neuronlink'"), std::string::npos)
      << t.status().toString();
}

TEST(FlowSimulator, ATwoChipTransferTakesItsBytesOverTheLinkPlusTheHopLatency) {
  const Topology t = topologyOf(grid({ring("x", 2)}));
  Plan plan(t);
  plan.transfer(0, 1, 1e6, {});
  const Result<PlanTiming> timing = simulate(plan);
  ASSERT_TRUE(timing.ok()) << timing.status().toString();
  // 1 MB at 0.1 byte/ps = 10 us, then 1 us of latency.
  EXPECT_EQ(timing->makespan, 11 * kMicrosecond);
  EXPECT_EQ(plan.messages(), 1U);
}

TEST(FlowSimulator, FlowsSharingALinkSplitItsBandwidth) {
  const Topology t = topologyOf(grid({{"x", 3, spec::DimensionKind::kLine, "link"}}));
  Plan plan(t);
  const OpId far = plan.transfer(0, 2, 1e6, {});   // links 0+ and 1+
  const OpId near = plan.transfer(1, 2, 1e6, {});  // link 1+
  Result<PlanTiming> timing = simulate(plan);
  ASSERT_TRUE(timing.ok()) << timing.status().toString();
  // Both move at 0.05 byte/ps over the shared link 1+: 20 us, then 2 us and 1 us of latency.
  EXPECT_EQ(timing->makespan, 22 * kMicrosecond);
  EXPECT_DOUBLE_EQ(timing->resourceBytes[t.route(1, 2).links[0]], 2e6);
  (void)far;
  (void)near;
}

TEST(FlowSimulator, AFlowSpeedsUpWhenTheOneSharingItsLinkFinishes) {
  const Topology t = topologyOf(grid({{"x", 3, spec::DimensionKind::kLine, "link"}}));
  Plan plan(t);
  plan.transfer(0, 2, 2e6, {});
  plan.transfer(1, 2, 1e6, {});
  const Result<PlanTiming> timing = simulate(plan);
  ASSERT_TRUE(timing.ok()) << timing.status().toString();
  // Shared until the short one has moved 1 MB (20 us); the long one then has 1 MB left at the
  // full 0.1 byte/ps (10 us): 30 us, plus its 2 us of latency.
  EXPECT_EQ(timing->makespan, 32 * kMicrosecond);
}

TEST(FlowSimulator, AnOperationStartsWhenItsPredecessorsEnd) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  Plan plan(t);
  const OpId first = plan.transfer(0, 1, 1e6, {});
  const OpId reduced = plan.reduce(1, 3e6, {first});  // 3 MB of HBM at 10 byte/ps: 0.3 us
  plan.transfer(1, 2, 1e6, {reduced});
  const Result<PlanTiming> timing = simulate(plan);
  ASSERT_TRUE(timing.ok()) << timing.status().toString();
  EXPECT_EQ(timing->makespan, 11 * kMicrosecond + 300'000 + 11 * kMicrosecond);
}

TEST(FlowSimulator, AnOperationQueuedBehindAnotherStartsAtItsLastByteNotItsEnd) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  Plan plan(t);
  const OpId first = plan.transfer(0, 1, 1e6, {});
  const OpId second = plan.transfer(0, 3, 1e6, {});
  plan.queueBehind(second, first);
  const Result<PlanTiming> timing = simulate(plan);
  ASSERT_TRUE(timing.ok()) << timing.status().toString();
  // The first's last byte leaves at 10 us; the second moves from then (on another link, alone),
  // 10 us, and ends 1 us of latency later. After the first's end it would end at 22 us.
  EXPECT_EQ(timing->opStart[second], 10 * kMicrosecond);
  EXPECT_EQ(timing->makespan, 21 * kMicrosecond);
}

TEST(FlowSimulator, HbmSharedWithTheLinksCanBeTheBottleneck) {
  // HBM of 0.15 byte/ps: the sender's HBM carries two outgoing 1 MB messages at once, each at
  // 0.075 byte/ps (below the links' 0.1): 1 MB / 0.075 = 13.333.. us, rounded up to the ps.
  const Topology t = topologyOf(grid({ring("x", 4)}), chipWithHbm(150'000'000'000));
  Plan plan(t);
  plan.transfer(0, 1, 1e6, {});
  plan.transfer(0, 3, 1e6, {});
  const Result<PlanTiming> timing = simulate(plan);
  ASSERT_TRUE(timing.ok()) << timing.status().toString();
  EXPECT_EQ(timing->makespan, 13'333'334 + kMicrosecond);
}

}  // namespace
}  // namespace trn::fabric
