// Collectives issued by kernels (Session::runRanks) beyond a rank per chip: all_to_allv with its
// counts in a kernel's HBM tensor (the tile language's nisa::allToAllV and the .tasm
// instruction), and ranks that are logical cores (LNC=2 and LNC=1), in groups that are the cores
// of one chip, logical cores across chips or whole chips. Data against references computed here
// from the inputs (float64 sums, element-by-element exchanges), times derived by hand.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fabric_fixture.h"
#include "trn/isa/program_text.h"
#include "trn/kernel/compiler.h"
#include "trn/kernel/kernel.h"
#include "trn/kernel/nisa.h"
#include "trn/numerics/convert.h"
#include "trn/runtime/session.h"

namespace trn::fabric {
namespace {

using runtime::NpyArray;
using runtime::RankProgram;
using runtime::RanksResult;
using runtime::RunOptions;
using runtime::Session;

Session trn2Session() {
  Result<Session> s = Session::open("trn2");
  EXPECT_TRUE(s.ok()) << s.status().toString();
  return std::move(*s);
}

std::shared_ptr<const isa::Program> program(const std::string& text) {
  Result<isa::Program> p = isa::parseProgramText(text, "rank.tasm");
  EXPECT_TRUE(p.ok()) << p.status().toString();
  return std::make_shared<const isa::Program>(std::move(*p));
}

NpyArray uint32Array(std::vector<std::int64_t> shape, const std::vector<std::uint32_t>& values) {
  NpyArray a;
  a.type = runtime::NpyType::kUInt32;
  a.shape = std::move(shape);
  a.data.resize(values.size() * 4);
  std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

RunOptions timingOnly() {
  RunOptions options;
  options.mode = core::RunMode::kTimingOnly;
  options.poison = false;
  return options;
}

/// An all-to-all-v's counts as rank rows: counts[i][j] from rank i to rank j, sent from the end
/// of each rank's src backwards (displacements of its own choosing) into equal slots.
struct Exchange {
  std::vector<std::vector<std::int64_t>> counts;
  std::vector<std::vector<std::int64_t>> sendOffsets;
  std::int64_t slot = 0;
};

Exchange skewedExchange(std::int64_t n, std::int64_t srcElements, std::int64_t dstElements) {
  Exchange x;
  x.slot = dstElements / n;
  for (std::int64_t i = 0; i < n; ++i) {
    std::vector<std::int64_t> row;
    std::vector<std::int64_t> offsets;
    std::int64_t end = srcElements;
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t c = (3 * i + 5 * j) % 4 == 0 ? 0 : 1 + (3 * i + 5 * j) % (x.slot - 1);
      row.push_back(c);
      end -= c;
      offsets.push_back(end);
    }
    EXPECT_GE(end, 0);
    x.counts.push_back(row);
    x.sendOffsets.push_back(offsets);
  }
  return x;
}

/// Rank i's metadata: send counts, send displacements and the counts it expects (3 rows).
std::vector<std::uint32_t> metadataOf(const Exchange& x, std::int64_t i) {
  const auto n = static_cast<std::int64_t>(x.counts.size());
  std::vector<std::uint32_t> rows;
  for (std::int64_t j = 0; j < n; ++j) {
    rows.push_back(static_cast<std::uint32_t>(x.counts[i][j]));
  }
  for (std::int64_t j = 0; j < n; ++j) {
    rows.push_back(static_cast<std::uint32_t>(x.sendOffsets[i][j]));
  }
  for (std::int64_t j = 0; j < n; ++j) {
    rows.push_back(static_cast<std::uint32_t>(x.counts[j][i]));
  }
  return rows;
}

std::vector<float> rankValues(std::int64_t rank, std::int64_t count) {
  std::vector<float> v(static_cast<std::size_t>(count));
  for (std::size_t e = 0; e < v.size(); ++e) {
    v[e] = static_cast<float>(rank * 1000 + static_cast<std::int64_t>(e));
  }
  return v;
}

/// Every element rank j received: x_i[sendOffset(i, j) + e] at slot i, element e.
void expectReceived(const Exchange& x, const RanksResult& result, std::int64_t srcElements) {
  const auto n = static_cast<std::int64_t>(x.counts.size());
  for (std::int64_t j = 0; j < n; ++j) {
    const std::vector<float> got =
        runtime::floatValues(result.ranks[static_cast<std::size_t>(j)].outputs[0]);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::vector<float> sent = rankValues(i, srcElements);
      for (std::int64_t e = 0; e < x.counts[i][j]; ++e) {
        ASSERT_EQ(got[static_cast<std::size_t>(i * x.slot + e)],
                  sent[static_cast<std::size_t>(x.sendOffsets[i][j] + e)])
            << "rank " << j << " from rank " << i << " element " << e;
      }
    }
  }
}

// The tile language over 4 chips: each rank's kernel hands its x and its counts to allToAllV.
TEST(KernelAllToAllV, ATileKernelDispatchesSkewedCountsOverFourChips) {
  const Session session = trn2Session();
  const Topology topology = testing::systemTopology("trn2.48xlarge", 16);
  constexpr std::int64_t kRanks = 4;
  constexpr std::int64_t kElements = 64;
  const Exchange x = skewedExchange(kRanks, kElements, kElements);
  const kernel::KernelDef def = kernel::makeKernel(
      "dispatch", [](kernel::Kernel& k, kernel::Tensor tokens, kernel::Tensor counts) {
        kernel::Tensor out = k.output("out", tokens.shape(), DType::kFp32);
        kernel::nisa::allToAllV(out, tokens, counts);
        return out;
      });
  const std::vector<kernel::TensorSpec> specs = {{"tokens", {1, kElements}, DType::kFp32},
                                                 {"counts", {3, kRanks}, DType::kUint32}};
  const Result<std::shared_ptr<const kernel::CompiledKernel>> compiled =
      session.compile(def, specs);
  ASSERT_TRUE(compiled.ok()) << compiled.status().toString();
  const std::shared_ptr<const isa::Program> shared(*compiled, &(*compiled)->program);
  std::vector<NpyArray> tokens;
  std::vector<NpyArray> metadata;
  for (std::int64_t r = 0; r < kRanks; ++r) {
    tokens.push_back(runtime::floatArray({1, kElements}, rankValues(r, kElements)));
    metadata.push_back(uint32Array({3, kRanks}, metadataOf(x, r)));
  }
  std::vector<RankProgram> ranks;
  for (std::size_t r = 0; r < kRanks; ++r) {
    ranks.push_back({shared,
                     {{"tokens", &tokens[r], "tokens"}, {"counts", &metadata[r], "counts"}},
                     {{"out", std::nullopt}}});
  }
  const Result<RanksResult> result = session.runRanks(topology, ranks, RunOptions{});
  ASSERT_TRUE(result.ok()) << result.status().toString();
  expectReceived(x, *result, kElements);
  ASSERT_EQ(result->collectives.size(), 1U);
  EXPECT_EQ(result->collectives[0].op, CollectiveOp::kAllToAllV);
  EXPECT_EQ(result->collectives[0].algorithm, Algorithm::kMesh);
}

std::string allToAllVProgram(std::int64_t ranks, std::int64_t src, std::int64_t dst,
                             std::int64_t rows, const std::string& groups = "") {
  return fmt::format(
      ".tensor x input fp32 [1, {0}]\n"
      ".tensor counts input uint32 [{3}, {2}]\n"
      ".tensor y output fp32 [1, {1}]\n"
      "pool: collective op=all_to_allv dst=hbm:y:fp32[[{1},1],[1,{1}]] "
      "src=hbm:x:fp32[[{0},1],[1,{0}]] counts=hbm:counts:uint32[[{2},{3}],[1,{2}]]{4}\n",
      src, dst, ranks, rows, groups);
}

/// Runs `text` on `n` ranks of `topology` with x = rankValues and counts = metadata[r].
Result<RanksResult> runAllToAllV(const Topology& topology, const std::string& text,
                                 std::int64_t srcElements,
                                 const std::vector<std::vector<std::uint32_t>>& metadata,
                                 const RunOptions& options = {}) {
  const Session session = trn2Session();
  const auto n = static_cast<std::int64_t>(metadata.size());
  const std::int64_t rows = static_cast<std::int64_t>(metadata[0].size()) / n;
  std::vector<NpyArray> xs;
  std::vector<NpyArray> counts;
  for (std::int64_t r = 0; r < n; ++r) {
    xs.push_back(runtime::floatArray({1, srcElements}, rankValues(r, srcElements)));
    counts.push_back(uint32Array({rows, n}, metadata[static_cast<std::size_t>(r)]));
  }
  const std::shared_ptr<const isa::Program> p = program(text);
  std::vector<RankProgram> ranks;
  for (std::size_t r = 0; r < metadata.size(); ++r) {
    if (core::hasData(options.mode)) {
      ranks.push_back({p, {{"x", &xs[r], "x"}, {"counts", &counts[r], "counts"}}, {{"y", {}}}});
    } else {
      ranks.push_back({p, {}, {}});
    }
  }
  return session.runRanks(topology, ranks, options);
}

// 8 ranks that are the logical cores (LNC=2) of chips 0 and 1: the exchange crosses within each
// chip (through the logical cores' DMA) and between them.
TEST(KernelAllToAllV, LogicalCoreRanksExchangeWithinAndAcrossChips) {
  const Topology topology = testing::systemTopology("trn2.48xlarge", 64);
  constexpr std::int64_t kRanks = 8;
  const Exchange x = skewedExchange(kRanks, 96, 128);
  std::vector<std::vector<std::uint32_t>> metadata;
  for (std::int64_t r = 0; r < kRanks; ++r) {
    metadata.push_back(metadataOf(x, r));
  }
  const Result<RanksResult> result =
      runAllToAllV(topology, allToAllVProgram(kRanks, 96, 128, 3), 96, metadata);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  expectReceived(x, *result, 96);
  // Timing-only runs have no counts to read: they take equal shares and still run.
  const Result<RanksResult> timed =
      runAllToAllV(topology, allToAllVProgram(kRanks, 96, 128, 3), 96, metadata, timingOnly());
  ASSERT_TRUE(timed.ok()) << timed.status().toString();
  EXPECT_GT(timed->collectives[0].picoseconds, 0);
}

TEST(KernelAllToAllV, InconsistentCountsFailNamingTheRanks) {
  const Topology topology = testing::systemTopology("trn2.48xlarge", 16);
  const Exchange x = skewedExchange(2, 32, 32);
  std::vector<std::vector<std::uint32_t>> metadata = {metadataOf(x, 0), metadataOf(x, 1)};
  metadata[1][2 * 2 + 0] += 1;  // rank 1 expects one more element from rank 0
  const Result<RanksResult> result =
      runAllToAllV(topology, allToAllVProgram(2, 32, 32, 3), 32, metadata);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find(
                fmt::format("rank 0 sends {} elements to rank 1, but rank 1 expects {} from rank 0",
                            x.counts[0][1], x.counts[0][1] + 1)),
            std::string::npos)
      << result.status().message();
  // Counts beyond src: rank 0 sends 40 elements (within its slot of 64) from a src of 32.
  metadata = {{0, 40, 0, 0}, {0, 0, 0, 0}};
  const Result<RanksResult> beyond =
      runAllToAllV(topology, allToAllVProgram(2, 32, 128, 2), 32, metadata);
  ASSERT_FALSE(beyond.ok());
  EXPECT_NE(beyond.status().message().find("rank 0 sends 40 elements to rank 1 at element 0 of "
                                           "rank 0's buffer, which holds 32 elements"),
            std::string::npos)
      << beyond.status().message();
}

// Two chips side by side on trn2.48xlarge (a rank per chip). Rank 0 sends 256 KiB to rank 1 and
// rank 1 64 KiB to rank 0, on the two directions of the x link between them: the longer one
// streams at the link's 128 GB/s (below a collective core's 184 GB/s of DMA), 2.048 us, and
// arrives a hop (1.5 us) later: 3.548 us.
TEST(KernelAllToAllV, TheFabricTimeOfTwoChipsIsTheLargerSendOverTheLink) {
  const Topology topology = testing::systemTopology("trn2.48xlarge", 16);
  const std::vector<std::vector<std::uint32_t>> metadata = {{0, 65536, 0, 0}, {16384, 0, 0, 0}};
  const Result<RanksResult> result =
      runAllToAllV(topology, allToAllVProgram(2, 65536, 131072, 2), 65536, metadata);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  ASSERT_EQ(result->collectives.size(), 1U);
  EXPECT_NEAR(static_cast<double>(result->collectives[0].picoseconds), 3'548'000.0, 2);
}

// ---- Logical-core ranks ---------------------------------------------------------------------

std::string allReduceProgram(std::int64_t elements, const std::string& groups,
                             const std::string& dtype = "fp32") {
  return fmt::format(
      ".tensor x input {1} [1, {0}]\n"
      ".tensor y output {1} [1, {0}]\n"
      "pool: collective op=all_reduce reduce=add dst=hbm:y:{1}[[{0},1],[1,{0}]] "
      "src=hbm:x:{1}[[{0},1],[1,{0}]]{2}\n",
      elements, dtype, groups);
}

/// Whole numbers per rank and element (their fp32 sums are exact in any order).
std::vector<float> wholeValues(std::int64_t rank, std::int64_t count) {
  std::vector<float> v(static_cast<std::size_t>(count));
  for (std::size_t e = 0; e < v.size(); ++e) {
    v[e] = static_cast<float>((static_cast<std::int64_t>(e) * 7 + rank * 13) % 29 - 14);
  }
  return v;
}

Result<RanksResult> runAllReduce(const Topology& topology, std::int64_t ranks,
                                 std::int64_t elements, const std::string& groups) {
  const Session session = trn2Session();
  std::vector<NpyArray> xs;
  for (std::int64_t r = 0; r < ranks; ++r) {
    xs.push_back(runtime::floatArray({1, elements}, wholeValues(r, elements)));
  }
  const std::shared_ptr<const isa::Program> p = program(allReduceProgram(elements, groups));
  std::vector<RankProgram> programs;
  for (std::size_t r = 0; r < xs.size(); ++r) {
    programs.push_back({p, {{"x", &xs[r], "x"}}, {{"y", {}}}});
  }
  return session.runRanks(topology, programs, RunOptions{});
}

// 8 logical-core ranks (LNC=2) on chips 0 and 1, all-reducing in groups that are the cores of
// one chip, logical core k of both chips, and both whole chips: every rank holds its group's
// float64 sum.
TEST(LogicalCoreRanks, GroupsOfOneChipAcrossChipsAndWholeChipsReduceExactly) {
  const Topology topology = testing::systemTopology("trn2.48xlarge", 64);
  constexpr std::int64_t kElements = 256;
  const std::vector<std::pair<std::string, std::vector<std::vector<std::int64_t>>>> layouts = {
      {" groups=[[0,1,2,3],[4,5,6,7]]", {{0, 1, 2, 3}, {4, 5, 6, 7}}},
      {" groups=[[0,4],[1,5],[2,6],[3,7]]", {{0, 4}, {1, 5}, {2, 6}, {3, 7}}},
      {"", {{0, 1, 2, 3, 4, 5, 6, 7}}},
  };
  for (const auto& [text, groups] : layouts) {
    SCOPED_TRACE(text.empty() ? "all" : text);
    const Result<RanksResult> result = runAllReduce(topology, 8, kElements, text);
    ASSERT_TRUE(result.ok()) << result.status().toString();
    for (const std::vector<std::int64_t>& group : groups) {
      std::vector<double> want(kElements, 0.0);
      for (const std::int64_t r : group) {
        const std::vector<float> v = wholeValues(r, kElements);
        for (std::size_t e = 0; e < want.size(); ++e) {
          want[e] += v[e];
        }
      }
      for (const std::int64_t r : group) {
        const std::vector<float> got =
            runtime::floatValues(result->ranks[static_cast<std::size_t>(r)].outputs[0]);
        for (std::size_t e = 0; e < want.size(); ++e) {
          ASSERT_EQ(static_cast<double>(got[e]), want[e]) << "rank " << r << " element " << e;
        }
      }
    }
    EXPECT_EQ(result->collectives.size(), groups.size());
    // Ranks sit on the first physical core of their logical core: 0, 2, 4, 6 of each chip.
    EXPECT_EQ(result->ranks[5].physicalCores, std::vector<int>{2});
  }
}

/// Multiples of 1/128 in [-1, 1): exact in bf16, so host and kernel start from the same bits.
std::vector<float> bf16Values(std::int64_t rank, std::int64_t count) {
  std::vector<float> v(static_cast<std::size_t>(count));
  for (std::size_t e = 0; e < v.size(); ++e) {
    v[e] = static_cast<float>((static_cast<std::int64_t>(e) * 37 + rank * 101) % 256 - 128) / 128;
  }
  return v;
}

// bf16, where the order of the additions shows in the bits: a kernel's all-reduce over the 8
// logical-core ranks of chips 0 and 1 gives, bit for bit, what the host-level collective gives by
// the same algorithm (whose documented order functional_collective_test reproduces), and is
// within its roundings of the float64 sum.
TEST(LogicalCoreRanks, ABf16AllReduceInAKernelFollowsTheDocumentedOrder) {
  const Topology topology = testing::systemTopology("trn2.48xlarge", 64);
  constexpr std::int64_t kRanks = 8;
  constexpr std::int64_t kElements = 512;
  const Session session = trn2Session();
  std::vector<NpyArray> xs;
  std::vector<std::vector<std::byte>> hostInputs;
  for (std::int64_t r = 0; r < kRanks; ++r) {
    const std::vector<float> v = bf16Values(r, kElements);
    xs.push_back(runtime::floatArray({1, kElements}, v));
    std::vector<std::byte> bytes(static_cast<std::size_t>(kElements) * 2);
    convertFromFloat(v, DType::kBf16, bytes);
    hostInputs.push_back(std::move(bytes));
  }
  const std::shared_ptr<const isa::Program> p = program(allReduceProgram(kElements, "", "bf16"));
  std::vector<RankProgram> ranks;
  for (std::size_t r = 0; r < xs.size(); ++r) {
    ranks.push_back({p, {{"x", &xs[r], "x"}}, {{"y", DType::kFp32}}});
  }
  const Result<RanksResult> result = session.runRanks(topology, ranks, RunOptions{});
  ASSERT_TRUE(result.ok()) << result.status().toString();
  ASSERT_TRUE(result->collectives[0].algorithm.has_value());
  const Algorithm algorithm = *result->collectives[0].algorithm;
  const CollectiveRequest request = testing::requestOver(
      CollectiveOp::kAllReduce, testing::consecutive(0, kRanks), kElements / kRanks, DType::kBf16);
  const Result<DataCollectiveResult> host = runCollectiveOnData(
      topology, testing::trn2Chip(), request, DType::kBf16, ReduceOp::kSum, hostInputs, algorithm);
  ASSERT_TRUE(host.ok()) << host.status().toString();
  for (std::size_t r = 0; r < kRanks; ++r) {
    const std::vector<float> got = runtime::floatValues(result->ranks[r].outputs[0]);
    for (std::int64_t e = 0; e < kElements; ++e) {
      double sum = 0;
      double magnitude = 0;
      for (std::int64_t q = 0; q < kRanks; ++q) {
        const float v = bf16Values(q, kElements)[static_cast<std::size_t>(e)];
        sum += v;
        magnitude += std::abs(v);
      }
      const float want = testing::elementAt(host->outputs[r], e, DType::kBf16);
      ASSERT_EQ(got[static_cast<std::size_t>(e)], want)
          << "rank " << r << " element " << e << " by " << algorithmName(algorithm);
      // Each rounding to bf16 is within 2^-8 of the partial; at most one per rank.
      ASSERT_LE(std::abs(static_cast<double>(want) - sum), kRanks * magnitude / 256)
          << "rank " << r << " element " << e;
    }
  }
}

// At LNC=1 a trn2 chip has 8 logical cores: 8 ranks are the cores of chip 0 and all-reduce among
// themselves.
TEST(LogicalCoreRanks, EightRanksAtLncOneAreTheCoresOfOneChip) {
  const Topology topology = testing::systemTopology("trn2.48xlarge", 128);
  ASSERT_EQ(topology.ranksPerChip(), 8);
  const Result<RanksResult> result = runAllReduce(topology, 8, 128, "");
  ASSERT_TRUE(result.ok()) << result.status().toString();
  std::vector<double> want(128, 0.0);
  for (std::int64_t r = 0; r < 8; ++r) {
    const std::vector<float> v = wholeValues(r, 128);
    for (std::size_t e = 0; e < want.size(); ++e) {
      want[e] += v[e];
    }
  }
  for (std::size_t r = 0; r < 8; ++r) {
    EXPECT_EQ(result->ranks[r].physicalCores, std::vector<int>{static_cast<int>(r)});
    const std::vector<float> got = runtime::floatValues(result->ranks[r].outputs[0]);
    for (std::size_t e = 0; e < want.size(); ++e) {
      ASSERT_EQ(static_cast<double>(got[e]), want[e]) << "rank " << r << " element " << e;
    }
  }
}

// Logical cores 0 and 1 of chip 0 (LNC=2) permute 1 MiB: each transfer goes out through one
// logical core's DMA and in through the other's (736 GB/s each), reading one HBM stack and
// writing the other (725 GB/s, two transfers on each: 362.5 GB/s apiece), on one collective
// core's share of the chip's DMA engines: 8 x 16 x 23 B/ns / 16 = 184 GB/s, the slowest. So
// 1,048,576 B / 0.184 B/ps = 5,698,783 ps, then the on-chip hop's latency, the DMA fixed cost of
// 1.3 us: 6,998,783 ps.
TEST(LogicalCoreRanks, APermuteBetweenTwoLogicalCoresOfAChipTakesOneStreamsRate) {
  const Topology topology = testing::systemTopology("trn2.48xlarge", 64);
  const Session session = trn2Session();
  const std::shared_ptr<const isa::Program> p = program(
      ".tensor x input fp32 [1, 262144]\n"
      ".tensor y output fp32 [1, 262144]\n"
      "pool: collective op=permute dst=hbm:y:fp32[[262144,1],[1,262144]] "
      "src=hbm:x:fp32[[262144,1],[1,262144]]\n");
  const std::vector<RankProgram> ranks = {{p, {}, {}}, {p, {}, {}}};
  const Result<RanksResult> result = session.runRanks(topology, ranks, timingOnly());
  ASSERT_TRUE(result.ok()) << result.status().toString();
  ASSERT_EQ(result->collectives.size(), 1U);
  EXPECT_EQ(result->collectives[0].algorithm, Algorithm::kMesh);
  EXPECT_NEAR(static_cast<double>(result->collectives[0].picoseconds), 6'998'783.0, 2);
}

}  // namespace
}  // namespace trn::fabric
