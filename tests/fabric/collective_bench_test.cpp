// The nccom-test style sweep: size parsing, rounding, bandwidth arithmetic and errors.
#include "trn/fabric/collective_bench.h"

#include <gtest/gtest.h>

#include "fabric_fixture.h"

namespace trn::fabric {
namespace {

using testing::grid;
using testing::kMicrosecond;
using testing::ring;
using testing::topologyOf;

TEST(CollectiveBench, SizesAreRangesOfPowersOf1024) {
  const Result<std::vector<std::int64_t>> sizes = parseSizes("8K:64K");
  ASSERT_TRUE(sizes.ok()) << sizes.status().toString();
  EXPECT_EQ(*sizes, (std::vector<std::int64_t>{8192, 16384, 32768, 65536}));
  EXPECT_EQ(*parseSizes("1M:1G:32"), (std::vector<std::int64_t>{1 << 20, 32 << 20, 1 << 30}));
  EXPECT_EQ(*parseSizes("100"), (std::vector<std::int64_t>{100}));
  EXPECT_FALSE(parseSizes("8X").ok());
  EXPECT_FALSE(parseSizes("64K:8K").ok());
  EXPECT_FALSE(parseSizes("1:2:3:4").ok());
  EXPECT_FALSE(parseSizes("99999999999G").ok());
}

TEST(CollectiveBench, ReportsTimeAndBandwidthsAsNccomTestDoes) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  BenchRequest r;
  r.op = CollectiveOp::kAllGather;
  r.ranks = 4;
  r.sizes = {8'000'000, 8'000'003};  // the second is rounded down to whole elements per rank
  r.algorithm = Algorithm::kRing;
  const Result<std::vector<BenchRow>> rows = benchCollective(t, r);
  ASSERT_TRUE(rows.ok()) << rows.status().toString();
  ASSERT_EQ(rows->size(), 2U);
  const BenchRow& row = (*rows)[0];
  EXPECT_EQ(row.count, 4'000'000);
  EXPECT_EQ(row.result.picoseconds, 33 * kMicrosecond);  // as RingCollective derives it
  EXPECT_DOUBLE_EQ(row.algorithmGBps, 8e6 / 33e-6 * 1e-9);
  EXPECT_DOUBLE_EQ(row.busGBps, row.algorithmGBps * 3 / 4);
  EXPECT_EQ((*rows)[1].bytes, 8'000'000);
  const std::string table = benchTable(r, *rows);
  EXPECT_NE(table.find("busbw(GB/s)"), std::string::npos) << table;
  EXPECT_NE(table.find("33.00"), std::string::npos) << table;
}

TEST(CollectiveBench, RejectsMoreRanksThanChipsAndReductionsInFp8) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  BenchRequest r;
  r.ranks = 5;
  r.sizes = {1024};
  EXPECT_NE(benchCollective(t, r).status().toString().find("the system has 4 chips"),
            std::string::npos);
  r.ranks = 4;
  r.dtype = DType::kFp8E4m3;
  EXPECT_NE(benchCollective(t, r).status().toString().find("reduces in fp32 or bf16"),
            std::string::npos);
  r.op = CollectiveOp::kAllGather;
  EXPECT_TRUE(benchCollective(t, r).ok());
  r.sizes = {2};
  EXPECT_NE(benchCollective(t, r).status().toString().find("below one"), std::string::npos);
}

}  // namespace
}  // namespace trn::fabric
