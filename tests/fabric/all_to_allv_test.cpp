// All-to-all-v: per-pair counts and displacements moved bit for bit (against the exchange rebuilt
// here from the counts, element by element, and against checkAgainstFloat64), over chips and
// over logical cores; times derived by hand (two flows on one link, max-min shares); and the
// errors inconsistent counts get.
#include "trn/fabric/all_to_allv.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

#include "fabric_fixture.h"

namespace trn::fabric {
namespace {

using testing::chipWithMemory;
using testing::grid;
using testing::kMicrosecond;
using testing::ring;
using testing::topologyOf;

/// An all_to_allv over `group` of `v`, buffers of `elements` elements of `dtype`.
CollectiveRequest allToAllV(std::vector<std::int64_t> group, VariableCounts v,
                            std::int64_t elements, DType dtype) {
  CollectiveRequest r;
  r.op = CollectiveOp::kAllToAllV;
  r.group = std::move(group);
  r.elementBytes = byteSize(dtype);
  r.bytes = elements * r.elementBytes;
  r.variable = std::move(v);
  return r;
}

/// MoE-like skew: counts from 0 to `most`, a quarter of the pairs sending nothing.
std::vector<std::vector<std::int64_t>> skewedCounts(std::size_t n, std::int64_t most,
                                                    unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::int64_t> count(0, most);
  std::vector<std::vector<std::int64_t>> m(n, std::vector<std::int64_t>(n));
  for (auto& row : m) {
    for (std::int64_t& c : row) {
      c = rng() % 4 == 0 ? 0 : count(rng);
    }
  }
  return m;
}

/// Runs `r` on data and checks every receive buffer element by element: rank j's element at
/// receive offset (i, j) + e is rank i's input at send offset (i, j) + e, zero where nothing lands.
void expectExchangedExactly(const Topology& t, const CollectiveRequest& r, DType dtype) {
  const auto n = static_cast<std::int64_t>(r.group.size());
  const std::int64_t elements = r.bytes / r.elementBytes;
  const auto inputs = testing::uniformInputs(r.group.size(), elements, dtype, 11);
  const Result<DataCollectiveResult> out =
      runCollectiveOnData(t, chipWithMemory(), r, dtype, ReduceOp::kSum, inputs);
  ASSERT_TRUE(out.ok()) << out.status().toString();
  EXPECT_EQ(out->timing.algorithm, Algorithm::kMesh);
  const auto size = static_cast<std::size_t>(r.elementBytes);
  for (std::int64_t j = 0; j < n; ++j) {
    std::vector<bool> landed(static_cast<std::size_t>(elements), false);
    const std::vector<std::byte>& got = out->outputs[static_cast<std::size_t>(j)];
    for (std::int64_t i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i * n + j);
      for (std::int64_t e = 0; e < r.variable.counts[k]; ++e) {
        const std::int64_t to = r.variable.receiveOffsets[k] + e;
        const std::int64_t from = r.variable.sendOffsets[k] + e;
        landed[static_cast<std::size_t>(to)] = true;
        ASSERT_EQ(std::memcmp(got.data() + static_cast<std::size_t>(to) * size,
                              inputs[static_cast<std::size_t>(i)].data() +
                                  static_cast<std::size_t>(from) * size,
                              size),
                  0)
            << "rank " << j << " element " << to << " from rank " << i;
      }
    }
    for (std::int64_t e = 0; e < elements; ++e) {
      if (!landed[static_cast<std::size_t>(e)]) {
        ASSERT_EQ(testing::elementAt(got, e, dtype), 0.0F) << "rank " << j << " element " << e;
      }
    }
  }
  const Result<ReferenceCheck> check =
      checkAgainstFloat64(r, dtype, ReduceOp::kSum, inputs, out->outputs);
  ASSERT_TRUE(check.ok()) << check.status().toString();
  EXPECT_EQ(check->mismatches, 0);
  EXPECT_EQ(check->elements, n * elements);
}

TEST(AllToAllV, SkewedPackedCountsMoveBitForBitOverChips) {
  const Topology t = topologyOf(grid({ring("x", 4), ring("y", 2)}));
  for (const std::size_t n : {2U, 5U, 8U}) {
    for (const DType dtype : {DType::kFp32, DType::kBf16, DType::kFp8E4m3}) {
      SCOPED_TRACE(fmt::format("{} ranks, {}", n, dtypeName(dtype)));
      const auto counts = skewedCounts(n, 37, static_cast<unsigned>(n));
      const Result<VariableCounts> v = packedVariableCounts(counts);
      ASSERT_TRUE(v.ok()) << v.status().toString();
      const std::int64_t elements = variableExtent(*v) + 3;  // a tail nothing lands in
      expectExchangedExactly(
          t, allToAllV(testing::consecutive(0, static_cast<std::int64_t>(n)), *v, elements, dtype),
          dtype);
    }
  }
}

// NKI's form: each rank's own send displacements (here backwards through its buffer) and, with
// no receive displacements, equal slots in the receive buffer; over a shuffled group.
TEST(AllToAllV, RankRowsWithOwnDisplacementsAndEqualSlots) {
  const Topology t = topologyOf(grid({ring("x", 4), ring("y", 2)}));
  const std::vector<std::int64_t> group = {6, 1, 3, 0};
  const std::int64_t n = 4;
  const std::int64_t elements = 40;  // slots of 10
  std::vector<RankCounts> ranks(4);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      ranks[static_cast<std::size_t>(i)].sendCounts.push_back((i + 2 * j) % 7 + 1);
      ranks[static_cast<std::size_t>(i)].sendOffsets.push_back(30 - 10 * j);
    }
  }
  const Result<VariableCounts> v = variableCountsFromRanks(ranks, elements);
  ASSERT_TRUE(v.ok()) << v.status().toString();
  EXPECT_EQ(v->receiveOffsets[1 * 4 + 2], 10);  // rank 1's slot at rank 2
  expectExchangedExactly(t, allToAllV(group, *v, elements, DType::kBf16), DType::kBf16);
}

TEST(AllToAllV, LogicalCoreRanksExchangeWithinAndBetweenChips) {
  const Topology t = testing::twoLogicalChips(4);  // LNC=2: 2 ranks per chip
  const auto counts = skewedCounts(4, 50, 3);
  const Result<VariableCounts> v = packedVariableCounts(counts);
  ASSERT_TRUE(v.ok()) << v.status().toString();
  expectExchangedExactly(
      t, allToAllV(testing::consecutive(0, 4), *v, variableExtent(*v), DType::kFp32), DType::kFp32);
}

// A ring of 4, links of 0.1 byte/ps and 1 us per hop. Rank 0 sends 1 MB to rank 1 (one hop on
// its x+ link) and 0.5 MB to rank 2 (halfway round from an even coordinate: forward, through
// chip 1, on the same x+ link first). They share that link at 0.05 byte/ps each until the
// 0.5 MB ends at 10 us (+ 2 hops: 12 us); the 1 MB then has 0.5 MB left at 0.1 byte/ps: 5 us
// more, + 1 hop: 16 us. Nothing else moves (zero counts send no message).
TEST(AllToAllV, TwoFlowsOnOneLinkShareItThenTheLongerFinishesAlone) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  const std::vector<std::vector<std::int64_t>> counts = {
      {0, 500'000, 250'000, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}};
  const Result<VariableCounts> v = packedVariableCounts(counts);
  ASSERT_TRUE(v.ok()) << v.status().toString();
  const CollectiveRequest r = allToAllV(testing::consecutive(0, 4), *v, 750'000, DType::kBf16);
  const Result<CollectiveResult> result = runCollective(t, r);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_EQ(result->algorithm, Algorithm::kMesh);
  EXPECT_EQ(result->messages, 2U);
  EXPECT_NEAR(static_cast<double>(result->picoseconds), 16.0 * kMicrosecond, 2);
  // The same bytes split evenly over the two destinations (0.75 MB each): both share the link
  // throughout, 15 us, then 2 hops.
  const std::vector<std::vector<std::int64_t>> even = {
      {0, 375'000, 375'000, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}};
  const CollectiveRequest balanced =
      allToAllV(testing::consecutive(0, 4), *packedVariableCounts(even), 750'000, DType::kBf16);
  EXPECT_NEAR(static_cast<double>(testing::timeOf(t, balanced, Algorithm::kMesh)),
              17.0 * kMicrosecond, 2);
}

TEST(AllToAllV, OnlyTheMeshHasAForm) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  const CollectiveRequest r = allToAllV(
      testing::consecutive(0, 4), *packedVariableCounts(skewedCounts(4, 9, 1)), 64, DType::kBf16);
  EXPECT_NE(unsupportedReason(t, r, Algorithm::kRing).find("has no all_to_allv form"),
            std::string::npos);
  EXPECT_NE(unsupportedReason(t, r, Algorithm::kRecursive).find("has no all_to_allv form"),
            std::string::npos);
  EXPECT_EQ(unsupportedReason(t, r, Algorithm::kMesh), "");
}

std::string errorOf(const Status& s) { return s.ok() ? "ok" : s.message(); }

TEST(AllToAllV, InconsistentCountsAreNamed) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  const std::vector<std::vector<std::int64_t>> sends = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
  // Rank 2 expects 5 from rank 1, which sends it 6.
  const std::vector<std::vector<std::int64_t>> expected = {{1, 4, 7}, {2, 5, 8}, {3, 5, 9}};
  EXPECT_EQ(errorOf(packedVariableCounts(sends, expected).status()),
            "rank 1 sends 6 elements to rank 2, but rank 2 expects 5 from rank 1");
  EXPECT_EQ(
      errorOf(packedVariableCounts(std::vector<std::vector<std::int64_t>>{{1, 2}, {3}}).status()),
      "rank 1 gives 1 counts, one per rank of its group of 2");
  EXPECT_EQ(
      errorOf(
          packedVariableCounts(std::vector<std::vector<std::int64_t>>{{1, -2}, {3, 4}}).status()),
      "rank 0's counts for rank 1 is -2: negative");

  // Counts beyond the buffers: rank 2 sends 7 + 8 + 9 = 24 elements from a buffer of 20.
  CollectiveRequest r = allToAllV({0, 1, 2}, *packedVariableCounts(sends), 20, DType::kBf16);
  EXPECT_EQ(errorOf(checkRequest(t, r)),
            "all_to_allv over 3 ranks with buffers of 20 elements: rank 2 sends 9 elements to "
            "rank 2 at element 15 of rank 2's buffer, which holds 20 elements");
  // Two senders landing on the same elements.
  r.bytes = 64;
  r.variable.receiveOffsets[0 * 3 + 1] = 2;  // rank 0's 2 elements to rank 1 at [2, 4)
  EXPECT_EQ(errorOf(checkRequest(t, r)),
            "all_to_allv over 3 ranks with buffers of 32 elements: rank 1 receives from ranks 0 "
            "and 1 into overlapping elements [2, 4) and [2, 7) of its receive buffer");
  // Counts that do not fit a slot when the receiver gives no displacements.
  std::vector<RankCounts> ranks(2);
  ranks[0] = {{3, 5}, {0, 3}, {}, {}};
  ranks[1] = {{1, 1}, {0, 1}, {}, {}};
  EXPECT_NE(errorOf(variableCountsFromRanks(ranks, 8).status())
                .find("rank 0 sends 5 elements to rank 1, more than the slot of 4 elements"),
            std::string::npos);
  // Counts for an operation that takes none.
  CollectiveRequest plain = testing::requestOver(CollectiveOp::kAllToAll, {0, 1}, 4, DType::kBf16);
  plain.variable = *packedVariableCounts(std::vector<std::vector<std::int64_t>>{{1, 1}, {1, 1}});
  EXPECT_EQ(errorOf(checkRequest(t, plain)),
            "all_to_all takes no per-rank counts (only all_to_allv does)");
}

TEST(AllToAllV, CountMatricesFromText) {
  const auto m = parseCountMatrix("0,512/1K,3");
  ASSERT_TRUE(m.ok()) << m.status().toString();
  EXPECT_EQ(*m, (std::vector<std::vector<std::int64_t>>{{0, 512}, {1024, 3}}));
  EXPECT_EQ(errorOf(parseCountMatrix("1,2/3,x").status()),
            "counts '1,2/3,x', row 1, column 1: size 'x' does not start with a number");
}

}  // namespace
}  // namespace trn::fabric
