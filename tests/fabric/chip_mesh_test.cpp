// R2's two-step mesh over logical-core ranks x chips: on data over 1 to 4 Trn2 chips against the
// float64 reference, its documented reduction order bit for bit, an all-gather's time derived by
// hand, and where it applies.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>

#include "fabric_fixture.h"
#include "trn/fabric/collective.h"
#include "trn/fabric/functional_collective.h"
#include "trn/numerics/convert.h"

namespace trn::fabric {
namespace {

using testing::kMicrosecond;

std::vector<std::vector<std::byte>> randomInputs(std::size_t ranks, std::int64_t count,
                                                 DType dtype) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);
  const auto size = static_cast<std::size_t>(byteSize(dtype));
  std::vector<std::vector<std::byte>> inputs(
      ranks, std::vector<std::byte>(static_cast<std::size_t>(count) * size, std::byte{0}));
  for (auto& in : inputs) {
    for (std::size_t e = 0; e < static_cast<std::size_t>(count); ++e) {
      const std::uint32_t bits = encodeFloat(uniform(rng), dtype);
      std::memcpy(in.data() + e * size, &bits, size);
    }
  }
  return inputs;
}

CollectiveRequest requestOf(CollectiveOp op, std::vector<std::int64_t> group, std::int64_t chunk,
                            DType dtype) {
  CollectiveRequest r;
  r.op = op;
  r.elementBytes = byteSize(dtype);
  r.bytes = static_cast<std::int64_t>(group.size()) * chunk * r.elementBytes;
  r.group = std::move(group);
  return r;
}

std::vector<std::int64_t> places(std::int64_t first, std::int64_t count) {
  std::vector<std::int64_t> g(static_cast<std::size_t>(count));
  std::iota(g.begin(), g.end(), first);
  return g;
}

spec::ChipSpec trn2() {
  Result<spec::ChipSpec> c = spec::loadChip("trn2");
  EXPECT_TRUE(c.ok()) << c.status().toString();
  return *c;
}

TEST(ChipMesh, ReducesAndGathersOverTheLogicalCoresOfOneToFourTrn2Chips) {
  const Topology t = testing::systemTopology("trn2.48xlarge", 64);
  const spec::ChipSpec chip = trn2();
  std::vector<std::vector<std::int64_t>> groups = {places(0, 4), places(0, 8), places(0, 12),
                                                   places(0, 16)};
  groups.push_back({37, 20, 22, 36, 21, 39, 23, 38});  // chips' ranks not evenly spaced
  int runs = 0;
  for (const std::vector<std::int64_t>& group : groups) {
    for (const CollectiveOp op :
         {CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter, CollectiveOp::kAllGather}) {
      for (const DType dtype : {DType::kFp32, DType::kBf16}) {
        for (const ReduceOp reduce : {ReduceOp::kSum, ReduceOp::kMin}) {
          const CollectiveRequest r = requestOf(op, group, 3, dtype);
          SCOPED_TRACE(fmt::format("{} ranks from place {}: {} {} {}", group.size(), group[0],
                                   opName(op), dtypeName(dtype), reduceOpName(reduce)));
          ASSERT_EQ(unsupportedReason(t, r, Algorithm::kChipMesh), "");
          const Result<Plan> plan = buildPlan(t, r, Algorithm::kChipMesh);
          ASSERT_TRUE(plan.ok()) << plan.status().toString();
          const Status ordered = checkPlanOrder(*plan);
          ASSERT_TRUE(ordered.ok()) << ordered.toString();
          const auto in = randomInputs(group.size(), inputBytes(r) / r.elementBytes, dtype);
          const Result<DataCollectiveResult> got =
              runCollectiveOnData(t, chip, r, dtype, reduce, in, Algorithm::kChipMesh);
          ASSERT_TRUE(got.ok()) << got.status().toString();
          const Result<ReferenceCheck> check =
              checkAgainstFloat64(r, dtype, reduce, in, got->outputs);
          ASSERT_TRUE(check.ok()) << check.status().toString();
          EXPECT_EQ(check->mismatches, 0);
          // Rounded twice: each chip's partial, then the sum of the partials.
          const double unit = dtype == DType::kBf16 ? 1.0 / 256 : 1.0 / (1 << 24);
          EXPECT_LE(check->maxRelative, 2 * unit);
          ++runs;
        }
      }
    }
  }
  EXPECT_EQ(runs, 5 * 3 * 2 * 2);
}

// docs/collectives.md: rank d's chunk is, per chip, the sum of the chip's ranks in logical-core
// order in fp32, rounded; then the chips' partials in the order the group first names the chips,
// in fp32, rounded once.
TEST(ChipMesh, ReductionOrderIsTheDocumentedOne) {
  const Topology t = testing::systemTopology("trn2.48xlarge", 64);
  constexpr std::int64_t kChunk = 4;
  const std::vector<std::int64_t> group = {4, 5, 6, 7, 0, 1, 2, 3};  // chip 1 first
  const CollectiveRequest r = requestOf(CollectiveOp::kAllReduce, group, kChunk, DType::kBf16);
  const auto in = randomInputs(8, 8 * kChunk, DType::kBf16);
  auto x = [&](std::int64_t rank, std::int64_t e) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, in[static_cast<std::size_t>(rank)].data() + e * 2, 2);
    return static_cast<float>(decodeFloat(bits, DType::kBf16));
  };
  const Result<DataCollectiveResult> got =
      runCollectiveOnData(t, trn2(), r, DType::kBf16, ReduceOp::kSum, in, Algorithm::kChipMesh);
  ASSERT_TRUE(got.ok()) << got.status().toString();
  for (std::int64_t e = 0; e < 8 * kChunk; ++e) {
    // Ranks 0-3 of the group are chip 1's logical cores 0-3, ranks 4-7 chip 0's.
    const float first = quantize(x(0, e) + x(1, e) + x(2, e) + x(3, e), DType::kBf16);
    const float second = quantize(x(4, e) + x(5, e) + x(6, e) + x(7, e), DType::kBf16);
    const float expected = quantize(first + second, DType::kBf16);
    for (std::size_t rank = 0; rank < 8; ++rank) {
      std::uint32_t bits = 0;
      std::memcpy(&bits, got->outputs[rank].data() + e * 2, 2);
      ASSERT_EQ(decodeFloat(bits, DType::kBf16), expected) << "rank " << rank << " element " << e;
    }
  }
}

// The test chip at LNC=2 (fabric_fixture.h): 2 ranks a chip, their DMA 0.2 byte/ps on-chip with
// a 1 us fixed cost; 2 chips joined by links of 0.1 byte/ps and 1 us. An all-gather of 1 MB per
// rank: step 1, chip 0's rank 1 sends both its chip's chunks (2 MB) to chip 1's rank 1 and back
// the same way, each on its own link: 20 + 1 us; meanwhile each rank copies its own chunk to the
// other rank of its chip (5 + 1 us). Step 2, rank 1 of each chip copies the 2 MB it received to
// rank 0: 10 + 1 us. 21 + 11 = 32 us.
TEST(ChipMesh, AnAllGatherOverTwoChipsTakesTheTimeDerivedByHand) {
  Result<Topology> t =
      Topology::forRanks(testing::grid({testing::ring("x", 2)}), testing::logicalChip(), 4);
  ASSERT_TRUE(t.ok()) << t.status().toString();
  const CollectiveRequest r =
      requestOf(CollectiveOp::kAllGather, places(0, 4), 250'000, DType::kFp32);
  const Result<CollectiveResult> timed = runCollective(*t, r, Algorithm::kChipMesh);
  ASSERT_TRUE(timed.ok()) << timed.status().toString();
  EXPECT_EQ(timed->picoseconds, 32 * kMicrosecond);
}

TEST(ChipMesh, AppliesToWholeChipsOfLogicalCoresUpToSixteen) {
  CollectiveRequest r = requestOf(CollectiveOp::kReduceScatter, places(0, 16), 4, DType::kFp32);
  EXPECT_EQ(
      unsupportedReason(testing::systemTopology("trn2.48xlarge", 16), r, Algorithm::kChipMesh),
      "needs ranks that are logical cores (here a rank is a chip)");
  const Topology ultra = testing::systemTopology("trn2-ultraserver", 256);
  r = requestOf(CollectiveOp::kReduceScatter, places(0, 256), 4, DType::kFp32);
  EXPECT_EQ(unsupportedReason(ultra, r, Algorithm::kChipMesh),
            "reduces a partial from each of 64 chips at once, and DMA compute adds at most 16");
  r.group = places(0, 64);  // 16 chips
  EXPECT_EQ(unsupportedReason(ultra, r, Algorithm::kChipMesh), "");
}

}  // namespace
}  // namespace trn::fabric
