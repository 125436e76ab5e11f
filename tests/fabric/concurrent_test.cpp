// Collectives in flight at once share the fabric, and a chip's collective cores and DMA engines
// limit its streams: times against hand-derived ones on the fixture's round-number systems
// (links of 0.1 byte/ps, 1 us per hop, HBM of 10 byte/ps).
#include <gtest/gtest.h>

#include <vector>

#include "fabric_fixture.h"
#include "trn/fabric/concurrent_collectives.h"
#include "trn/fabric/flow_simulator.h"
#include "trn/fabric/kernel_collectives.h"
#include "trn/fabric/plan.h"
#include "trn/isa/instrs/control.h"

namespace trn::fabric {
namespace {

using testing::chipWithCollectiveCores;
using testing::grid;
using testing::kMicrosecond;
using testing::ring;
using testing::topologyOf;

CollectiveRequest request(CollectiveOp op, std::vector<std::int64_t> group, std::int64_t bytes) {
  CollectiveRequest r;
  r.op = op;
  r.group = std::move(group);
  r.bytes = bytes;
  return r;
}

TEST(ConcurrentCollectives, GroupsWhoseMessagesShareALinkSplitIt) {
  // A 4 x 4 torus. Group A = chips {0, 2} permutes 1 MB: 0 -> 2 goes x+ from chip 0 and chip 1
  // (halfway round from an even coordinate goes forward), 2 -> 0 x+ from chips 2 and 3. Group B =
  // chips {1, 6}: 1 -> 6 goes x+ from chip 1, then y+ from chip 2; 6 -> 1 x- from chip 6, y- from
  // chip 5. Only chip 1's x+ is shared, by 0 -> 2 and 1 -> 6.
  const Topology t = topologyOf(grid({ring("x", 4), ring("y", 4)}));
  const std::vector<ConcurrentCollective> both = {
      {request(CollectiveOp::kPermute, {0, 2}, 1'000'000), std::nullopt, 0},
      {request(CollectiveOp::kPermute, {1, 6}, 1'000'000), std::nullopt, 0}};
  const Result<ConcurrentResult> r = runConcurrentCollectives(t, both);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  // Alone: 1 MB at 0.1 byte/ps = 10 us, then two hops of 1 us.
  EXPECT_EQ(r->alone[0], 12 * kMicrosecond);
  EXPECT_EQ(r->alone[1], 12 * kMicrosecond);
  // Together the two messages on chip 1's x+ move at 0.05 byte/ps: 20 us, then two hops.
  EXPECT_EQ(r->together[0], 22 * kMicrosecond);
  EXPECT_EQ(r->together[1], 22 * kMicrosecond);
  EXPECT_EQ(r->algorithms[0], Algorithm::kMesh);
}

TEST(ConcurrentCollectives, GroupsOnDisjointLinksTakeTheTimeTheyTakeAlone) {
  // Rows 0 and 1 of the torus: every algorithm's messages stay within a row.
  const Topology t = topologyOf(grid({ring("x", 4), ring("y", 4)}));
  const std::vector<ConcurrentCollective> rows = {
      {request(CollectiveOp::kAllReduce, {0, 1, 2, 3}, 1'048'576), std::nullopt, 0},
      {request(CollectiveOp::kAllReduce, {4, 5, 6, 7}, 1'048'576), std::nullopt, 0}};
  const Result<ConcurrentResult> r = runConcurrentCollectives(t, rows);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  const Result<CollectiveResult> alone = runCollective(t, rows[0].request);
  ASSERT_TRUE(alone.ok());
  EXPECT_EQ(r->alone[0], alone->picoseconds);
  EXPECT_EQ(r->together[0], alone->picoseconds);
  EXPECT_EQ(r->together[1], r->alone[1]);
}

TEST(ConcurrentCollectives, AGroupThatStartsAfterTheOtherHasSentMeetsNothing) {
  const Topology t = topologyOf(grid({ring("x", 4), ring("y", 4)}));
  // B starts at 10 us, when A's 0 -> 2 has moved its last byte over chip 1's x+.
  const std::vector<ConcurrentCollective> staggered = {
      {request(CollectiveOp::kPermute, {0, 2}, 1'000'000), std::nullopt, 0},
      {request(CollectiveOp::kPermute, {1, 6}, 1'000'000), std::nullopt, 10 * kMicrosecond}};
  const Result<ConcurrentResult> r = runConcurrentCollectives(t, staggered);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->together[0], 12 * kMicrosecond);
  EXPECT_EQ(r->together[1], 12 * kMicrosecond);
}

TEST(ConcurrentCollectives, ABadRequestIsNamed) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  const std::vector<ConcurrentCollective> bad = {
      {request(CollectiveOp::kPermute, {0, 1}, 64), std::nullopt, 0},
      {request(CollectiveOp::kPermute, {2, 9}, 64), std::nullopt, 0}};
  const Result<ConcurrentResult> r = runConcurrentCollectives(t, bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().toString().find("concurrent collective 1"), std::string::npos)
      << r.status().toString();
  EXPECT_NE(r.status().toString().find("rank 1 is chip 9"), std::string::npos)
      << r.status().toString();
  const std::vector<ConcurrentCollective> early = {
      {request(CollectiveOp::kPermute, {0, 1}, 64), std::nullopt, -1}};
  EXPECT_FALSE(runConcurrentCollectives(t, early).ok());
}

/// Calls of a timing-only permute of `bytes` bf16 over `ranks`, starting at `start`.
std::vector<core::CollectiveCall> permuteCalls(const isa::Collective& instr,
                                               const std::vector<std::int64_t>& ranks,
                                               std::int64_t bytes, std::int64_t start) {
  std::vector<core::CollectiveCall> calls;
  for (const std::int64_t rank : ranks) {
    core::CollectiveCall call;
    call.instr = &instr;
    call.rank = rank;
    call.srcBytes = bytes;
    call.dstBytes = bytes;
    call.start = start;
    calls.push_back(call);
  }
  return calls;
}

TEST(KernelCollectives, AGroupIsTimedWithTheGroupsStillInFlightWhenItStarts) {
  const Topology t = topologyOf(grid({ring("x", 4), ring("y", 4)}));
  FabricCollectives fabric(t);
  isa::Collective instr;
  instr.op = CollectiveOp::kPermute;
  instr.src.dtype = DType::kBf16;
  instr.dst.dtype = DType::kBf16;
  const Result<std::int64_t> a = fabric.run(permuteCalls(instr, {0, 2}, 1'000'000, 0), false);
  ASSERT_TRUE(a.ok()) << a.status().toString();
  EXPECT_EQ(*a, 12 * kMicrosecond);  // alone
  // B starts while A is in flight and shares chip 1's x+ with it for A's whole transfer.
  const Result<std::int64_t> b = fabric.run(permuteCalls(instr, {1, 6}, 1'000'000, 0), false);
  ASSERT_TRUE(b.ok()) << b.status().toString();
  EXPECT_EQ(*b, 22 * kMicrosecond);
  EXPECT_EQ(fabric.records().back().alonePicoseconds, 12 * kMicrosecond);
  // C starts after both have ended: alone again.
  const Result<std::int64_t> c =
      fabric.run(permuteCalls(instr, {0, 2}, 1'000'000, 30 * kMicrosecond), false);
  ASSERT_TRUE(c.ok()) << c.status().toString();
  EXPECT_EQ(*c, 12 * kMicrosecond);
  // A group's next collective meets none of its own earlier ones, whatever the clock says (a
  // rank reaches it only once its last one has ended).
  FabricCollectives again(t);
  ASSERT_TRUE(again.run(permuteCalls(instr, {0, 2}, 1'000'000, 0), false).ok());
  const Result<std::int64_t> next = again.run(permuteCalls(instr, {2, 0}, 1'000'000, 0), false);
  ASSERT_TRUE(next.ok()) << next.status().toString();
  EXPECT_EQ(*next, 12 * kMicrosecond);
}

TEST(CollectiveCores, AStreamMovesAtMostItsCollectiveCoresShareOfTheDmaEngines) {
  // 2 collective cores sharing 2 engines of 50 GB/s: a stream moves 0.05 byte/ps, half the link.
  const Topology t =
      topologyOf(grid({ring("x", 4), ring("y", 4)}), chipWithCollectiveCores(2, 2, 50'000'000'000));
  EXPECT_EQ(t.collectiveCores(), 2);
  EXPECT_DOUBLE_EQ(t.streamBandwidth(), 0.05);
  EXPECT_DOUBLE_EQ(t.reduceBandwidth(), 0.025);
  Plan plan(t);
  plan.transfer(0, 1, 1e6, {});
  const Result<PlanTiming> timing = simulate(plan);
  ASSERT_TRUE(timing.ok()) << timing.status().toString();
  EXPECT_EQ(timing->makespan, 20 * kMicrosecond + kMicrosecond);
}

TEST(CollectiveCores, StreamsBeyondAChipsCollectiveCoresWaitForOneToFree) {
  // Chip 0 sends 1 MB to each of its 4 neighbours, over 4 different links. With 2 collective
  // cores, two streams move at 0.05 byte/ps for 20 us, then the other two: 40 us, + 1 us.
  const Topology limited =
      topologyOf(grid({ring("x", 4), ring("y", 4)}), chipWithCollectiveCores(2, 2, 50'000'000'000));
  Plan plan(limited);
  for (const std::int64_t to : {1, 3, 4, 12}) {
    plan.transfer(0, to, 1e6, {});
  }
  const Result<PlanTiming> timing = simulate(plan);
  ASSERT_TRUE(timing.ok()) << timing.status().toString();
  EXPECT_EQ(timing->makespan, 41 * kMicrosecond);
  EXPECT_EQ(timing->opStart[0], 0);
  EXPECT_EQ(timing->opStart[2], 20 * kMicrosecond);  // the first to wait takes the first core freed
  EXPECT_EQ(timing->opStart[3], 20 * kMicrosecond);
  // A chip file without collective cores sets no limit: all four at the link's 0.1 byte/ps.
  const Topology open = topologyOf(grid({ring("x", 4), ring("y", 4)}));
  Plan free(open);
  for (const std::int64_t to : {1, 3, 4, 12}) {
    free.transfer(0, to, 1e6, {});
  }
  EXPECT_EQ(simulate(free)->makespan, 11 * kMicrosecond);
}

TEST(CollectiveCores, AReductionRunsAtTheDmaComputeRate) {
  // 1 MB reduced from one staged input: 3 MB of HBM, 1 MB written at 0.025 byte/ps = 40 us.
  const Topology t =
      topologyOf(grid({ring("x", 2)}), chipWithCollectiveCores(2, 2, 50'000'000'000));
  Plan plan(t);
  plan.reduce(0, 3e6, {});
  const Result<PlanTiming> timing = simulate(plan);
  ASSERT_TRUE(timing.ok()) << timing.status().toString();
  EXPECT_EQ(timing->makespan, 40 * kMicrosecond);
}

}  // namespace
}  // namespace trn::fabric
