// System runs (Session::runRanks): programs on several chips whose `collective` instructions meet
// over the fabric. Data against a float64 reference, ranks of two cores (LNC=2), the collective's
// time against the fabric model's, communication overlapping other work, and the errors: a rank
// that never comes (a deadlock), ranks that disagree, a collective outside a system run, a race
// on its output.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "chip_test_programs.h"
#include "trn/fabric/collective.h"
#include "trn/kernel/kernel.h"
#include "trn/kernel/nisa.h"
#include "trn/spec/loader.h"
#include "trn/spec/system_loader.h"

namespace trn::runtime {
namespace {

using testing::kTensors;
using testing::program;
using testing::trn2;

/// Each rank stages x through SBUF into partial (its "compute"), then all-reduces partial into y.
const std::string kComputeThenAllReduce =
    ".tensor x input fp32 [128, 64]\n"
    ".tensor partial scratch fp32 [128, 64]\n"
    ".tensor y output fp32 [128, 64]\n"
    "sp: dma_copy dst=sbuf[0:128]:fp32[[1,64]] src=hbm:x:fp32[[64,128],[1,64]] signal(s0+=1)\n"
    "sp: dma_copy dst=hbm:partial:fp32[[64,128],[1,64]] src=sbuf[0:128]:fp32[[1,64]] "
    "wait(s0>=1) signal(s1+=1)\n"
    "pool: collective op=all_reduce reduce=add dst=hbm:y:fp32[[64,128],[1,64]] "
    "src=hbm:partial:fp32[[64,128],[1,64]] wait(s1>=1)\n";

std::vector<float> rankValues(int rank) {
  std::vector<float> v(128 * 64);
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<float>((static_cast<int>(i) * 7 + rank * 13) % 29) - 14.0f;
  }
  return v;
}

/// The float64 sum over ranks r < `ranks` of (r + 1) times rank r's values.
std::vector<double> scaledSum(int ranks) {
  std::vector<double> sum(128 * 64, 0.0);
  for (int q = 0; q < ranks; ++q) {
    const std::vector<float> v = rankValues(q);
    for (std::size_t i = 0; i < sum.size(); ++i) {
      sum[i] += (q + 1) * static_cast<double>(v[i]);
    }
  }
  return sum;
}

TEST(RankRun, SixteenChipsAllReduceWhatTheirKernelsComputed) {
  const Session session = trn2();
  const fabric::Topology topology = testing::trn2Instance();
  std::vector<NpyArray> inputs;
  for (int r = 0; r < 16; ++r) {
    inputs.push_back(floatArray({128, 64}, rankValues(r)));
  }
  std::vector<RankProgram> ranks;
  for (int r = 0; r < 16; ++r) {
    ranks.push_back({program(kComputeThenAllReduce),
                     {{"x", &inputs[static_cast<std::size_t>(r)], fmt::format("x of rank {}", r)}},
                     {{"y", std::nullopt}}});
  }
  std::vector<double> want(128 * 64, 0.0);
  for (int r = 0; r < 16; ++r) {
    const std::vector<float> v = rankValues(r);
    for (std::size_t i = 0; i < want.size(); ++i) {
      want[i] += v[i];
    }
  }
  RunOptions options;
  const Result<RanksResult> result = session.runRanks(topology, ranks, options);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  ASSERT_EQ(result->ranks.size(), 16U);
  for (int r = 0; r < 16; ++r) {
    const std::vector<float> got =
        floatValues(result->ranks[static_cast<std::size_t>(r)].outputs[0]);
    for (std::size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(static_cast<double>(got[i]), want[i]) << "rank " << r << " element " << i;
    }
  }
  ASSERT_EQ(result->collectives.size(), 1U);
  EXPECT_EQ(result->collectives[0].bytes, 128 * 64 * 4);
}

// The tile language: rank r scales its x by r + 1 on the Vector engine, stores it to HBM
// scratch and all-reduces it, so every rank gets sum over r of (r + 1) x_r. The kernel compiler
// orders the store before the collective and the collective before the kernel's end.
TEST(RankRun, ATileKernelScalesThenAllReducesOverEightChips) {
  const Session session = trn2();
  const fabric::Topology topology = testing::trn2Instance();
  constexpr int kRanks = 8;
  std::vector<std::shared_ptr<const kernel::CompiledKernel>> compiled;
  for (int r = 0; r < kRanks; ++r) {
    const kernel::KernelDef def =
        kernel::makeKernel("scale_all_reduce", [r](kernel::Kernel& k, kernel::Tensor x) {
          kernel::Tensor out = k.output("out", x.shape(), DType::kFp32);
          kernel::Tensor partial = k.hbmScratch("partial", x.shape(), DType::kFp32);
          kernel::Tensor tile = k.sbuf({128, 64}, DType::kFp32, "tile");
          kernel::nisa::dmaCopy(tile, x);
          kernel::nisa::tensorScalar(tile, tile, isa::AluOp::kMultiply, static_cast<float>(r + 1));
          kernel::nisa::dmaCopy(partial, tile);
          kernel::nisa::collective(isa::CollectiveOp::kAllReduce, out, partial);
          return out;
        });
    const std::vector<kernel::TensorSpec> specs = {{"x", {128, 64}, DType::kFp32}};
    Result<std::shared_ptr<const kernel::CompiledKernel>> c = session.compile(def, specs);
    ASSERT_TRUE(c.ok()) << c.status().toString();
    compiled.push_back(*c);
  }
  std::vector<NpyArray> inputs;
  std::vector<RankProgram> ranks;
  for (int r = 0; r < kRanks; ++r) {
    inputs.push_back(floatArray({128, 64}, rankValues(r)));
  }
  for (int r = 0; r < kRanks; ++r) {
    const auto& kernelOfRank = compiled[static_cast<std::size_t>(r)];
    ranks.push_back({std::shared_ptr<const isa::Program>(kernelOfRank, &kernelOfRank->program),
                     {{"x", &inputs[static_cast<std::size_t>(r)], "x"}},
                     {{"out", std::nullopt}}});
  }
  const Result<RanksResult> result = session.runRanks(topology, ranks, RunOptions{});
  ASSERT_TRUE(result.ok()) << result.status().toString();
  const std::vector<double> want = scaledSum(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    const std::vector<float> got =
        floatValues(result->ranks[static_cast<std::size_t>(r)].outputs[0]);
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(static_cast<double>(got[i]), want[i]) << "rank " << r << " element " << i;
    }
  }
  EXPECT_GT(result->stats.total.count(), result->collectives.at(0).picoseconds);
}

/// Per rank of a launch over the two cores of a logical core: core c scales its 64 rows of x by
/// (rank + 1) into HBM scratch; after a core barrier the first core all-reduces the scratch into
/// out over the ranks (or, with `collectiveOnEveryCore`, both cores try to).
std::shared_ptr<const CompiledLaunch> twoCoreRank(const Session& session, int rank,
                                                  bool collectiveOnEveryCore = false) {
  const kernel::KernelDef def = kernel::makeKernel(
      "halves_all_reduce", [rank, collectiveOnEveryCore](kernel::Kernel& k, kernel::Tensor x) {
        const std::int64_t c = k.programId(0);
        kernel::Tensor out = k.output("out", x.shape(), DType::kFp32);
        kernel::Tensor partial = k.hbmScratch("partial", x.shape(), DType::kFp32);
        kernel::Tensor tile = k.sbuf({64, 64}, DType::kFp32, "tile");
        kernel::nisa::dmaCopy(tile, x(kernel::ds(c * 64, 64), kernel::ds(0, 64)));
        kernel::nisa::tensorScalar(tile, tile, isa::AluOp::kMultiply, static_cast<float>(rank + 1));
        kernel::nisa::dmaCopy(partial(kernel::ds(c * 64, 64), kernel::ds(0, 64)), tile);
        kernel::nisa::coreBarrier(partial);
        if (c == 0 || collectiveOnEveryCore) {
          kernel::nisa::collective(isa::CollectiveOp::kAllReduce, out, partial);
        }
        kernel::nisa::coreBarrier(out);
        return out;
      });
  RunOptions options;
  options.lnc = 2;
  const std::vector<kernel::TensorSpec> specs = {{"x", {128, 64}, DType::kFp32}};
  Result<CompiledLaunch> launch = session.compileLaunch(def, specs, options);
  EXPECT_TRUE(launch.ok()) << launch.status().toString();
  return launch.ok() ? std::make_shared<const CompiledLaunch>(*launch) : nullptr;
}

RankProgram rankOfTwoCores(const CompiledLaunch& launch, const NpyArray* x) {
  RankProgram rank;
  rank.program = std::shared_ptr<const isa::Program>(launch.cores[0], &launch.cores[0]->program);
  rank.otherCores.emplace_back(launch.cores[1], &launch.cores[1]->program);
  if (x != nullptr) {
    rank.inputs = {{"x", x, "x"}};
    rank.outputs = {{"out", std::nullopt}};
  }
  return rank;
}

// Tensor parallelism on LNC=2 logical cores: each rank is the two cores of logical core 0 of its
// chip, which share its tensors; its collective is its first core's, on what both computed.
TEST(RankRun, RanksOfTwoCoresAllReduceWhatBothCoresComputed) {
  const Session session = trn2();
  const fabric::Topology topology = testing::trn2Instance();
  constexpr int kRanks = 4;
  std::vector<NpyArray> inputs;
  std::vector<std::shared_ptr<const CompiledLaunch>> launches;
  for (int r = 0; r < kRanks; ++r) {
    inputs.push_back(floatArray({128, 64}, rankValues(r)));
    launches.push_back(twoCoreRank(session, r));
    ASSERT_NE(launches.back(), nullptr);
  }
  std::vector<RankProgram> ranks;
  for (int r = 0; r < kRanks; ++r) {
    ranks.push_back(rankOfTwoCores(*launches[static_cast<std::size_t>(r)],
                                   &inputs[static_cast<std::size_t>(r)]));
  }
  const Result<RanksResult> result = session.runRanks(topology, ranks, RunOptions{});
  ASSERT_TRUE(result.ok()) << result.status().toString();
  const std::vector<double> want = scaledSum(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    const RunResult& rank = result->ranks[static_cast<std::size_t>(r)];
    EXPECT_EQ(rank.physicalCores, (std::vector<int>{0, 1}));
    ASSERT_EQ(rank.cores.size(), 2U);
    const std::vector<float> got = floatValues(rank.outputs[0]);
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(static_cast<double>(got[i]), want[i]) << "rank " << r << " element " << i;
    }
  }
  // One all-reduce of the whole [128, 64] fp32 tensor, the first cores' (not one per core).
  ASSERT_EQ(result->collectives.size(), 1U);
  EXPECT_EQ(result->collectives[0].bytes, 128 * 64 * 4);
  EXPECT_GT(result->stats.total.count(), result->collectives[0].picoseconds);

  // A collective on a rank's second core is refused, naming the core.
  std::vector<std::shared_ptr<const CompiledLaunch>> both;
  std::vector<RankProgram> everyCore;
  for (int r = 0; r < 2; ++r) {
    both.push_back(twoCoreRank(session, r, true));
    ASSERT_NE(both.back(), nullptr);
    everyCore.push_back(rankOfTwoCores(*both.back(), nullptr));
  }
  const Result<RanksResult> refused = session.runRanks(topology, everyCore, testing::timingOnly(1));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().toString().find(
                "a collective runs once per rank, from the rank's first core: physical core 1 "
                "of logical core"),
            std::string::npos)
      << refused.status().toString();
  EXPECT_NE(refused.status().toString().find("rank 0 core 1: pool#"), std::string::npos)
      << refused.status().toString();
  // More programs than a logical core has cores.
  RankProgram three = rankOfTwoCores(*launches[0], nullptr);
  three.otherCores.push_back(three.otherCores.front());
  const Result<RanksResult> tooMany =
      session.runRanks(topology, std::vector<RankProgram>{three, three}, testing::timingOnly(1));
  ASSERT_FALSE(tooMany.ok());
  EXPECT_NE(tooMany.status().toString().find("LNC=3 is not a logical-core size"), std::string::npos)
      << tooMany.status().toString();
}

// The collective ends the fabric model's time for the same request after the last rank
// arrives (plus the handshake a core barrier also pays), so the run is at least that long.
TEST(RankRun, TheCollectiveTakesTheFabricModelsTime) {
  const Session session = trn2();
  const fabric::Topology topology = testing::trn2Instance();
  const std::string text = kTensors +
                           "pool: collective op=all_gather dst=hbm:y:fp32[[64,128],[1,64]] "
                           "src=hbm:x:fp32[[64,8],[1,64]]\n";
  std::vector<RankProgram> ranks(16, RankProgram{program(text), {}, {}});
  const Result<RanksResult> result = session.runRanks(topology, ranks, testing::timingOnly(1));
  ASSERT_TRUE(result.ok()) << result.status().toString();
  fabric::CollectiveRequest request;
  request.op = fabric::CollectiveOp::kAllGather;
  request.group.resize(16);
  std::iota(request.group.begin(), request.group.end(), 0);
  request.bytes = 128 * 64 * 4;
  request.elementBytes = 4;
  const Result<fabric::CollectiveResult> model = fabric::runCollective(topology, request);
  ASSERT_TRUE(model.ok());
  ASSERT_EQ(result->collectives.size(), 1U);
  EXPECT_EQ(result->collectives[0].picoseconds, model->picoseconds);
  EXPECT_EQ(result->collectives[0].algorithm, std::optional(model->algorithm));
  const std::int64_t handshake = session.chip().core.dma.fixedCost.count();
  EXPECT_GE(result->stats.total.count(), model->picoseconds + handshake);
  EXPECT_LT(result->stats.total.count(), model->picoseconds + handshake + 1'000'000);
}

// A rank's DMA traffic on another engine runs while its collective is in flight: the run takes
// about the longer of the two, not their sum.
TEST(RankRun, OtherWorkOverlapsTheCollective) {
  const Session session = trn2();
  const fabric::Topology topology = testing::trn2Instance();
  const std::string tensors =
      kTensors + ".tensor a input fp32 [128, 8192]\n.tensor b output fp32 [128, 8192]\n";
  const std::string collective =
      "pool: collective op=all_reduce reduce=add dst=hbm:y:fp32[[64,128],[1,64]] "
      "src=hbm:x:fp32[[64,128],[1,64]]\n";
  const std::string copies =
      "sp: dma_copy dst=hbm:b:fp32[[8192,128],[1,8192]] src=hbm:a:fp32[[8192,128],[1,8192]]\n"
      "sp: dma_copy dst=hbm:b:fp32[[8192,128],[1,8192]] src=hbm:a:fp32[[8192,128],[1,8192]]\n";
  auto timeOf = [&](const std::string& text) {
    const std::vector<RankProgram> ranks(16, RankProgram{program(tensors + text), {}, {}});
    const Result<RanksResult> r = session.runRanks(topology, ranks, testing::timingOnly(1));
    EXPECT_TRUE(r.ok()) << r.status().toString();
    return r.ok() ? r->stats.total.count() : 0;
  };
  const std::int64_t alone = timeOf(collective);
  const std::int64_t dma = timeOf(copies);
  const std::int64_t both = timeOf(collective + copies);
  EXPECT_LT(both, alone + dma - std::min(alone, dma) / 2) << alone << " " << dma;
  EXPECT_GE(both, std::max(alone, dma));
}

TEST(RankRun, BadRunsGetErrorsThatNameTheProblem) {
  const Session session = trn2();
  const fabric::Topology topology = testing::trn2Instance();
  const std::string& tensors = kTensors;
  const std::string allReduce =
      "pool: collective op=all_reduce reduce=add dst=hbm:y:fp32[[64,128],[1,64]] "
      "src=hbm:x:fp32[[64,128],[1,64]]\n";
  auto message = [&](const std::vector<RankProgram>& ranks) {
    const Result<RanksResult> r = session.runRanks(topology, ranks, testing::timingOnly(1));
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : r.status().toString();
  };
  // Rank 1 never reaches the collective.
  std::vector<RankProgram> absent = {{program(tensors + allReduce), {}, {}},
                                     {program(tensors + "sp: nop\n"), {}, {}}};
  EXPECT_NE(message(absent).find(
                "rank 0: pool#0 'collective op=all_reduce reduce=add dst=hbm:y:fp32[[64,128],"
                "[1,64]] src=hbm:x:fp32[[64,128],[1,64]]' waits at collective "
                "1 for rank(s) 1, which never reach it"),
            std::string::npos)
      << message(absent);
  // Rank 1 all-reduces half as much.
  const std::string half =
      "pool: collective op=all_reduce reduce=add dst=hbm:y:fp32[[64,64],[1,64]] "
      "src=hbm:x:fp32[[64,64],[1,64]]\n";
  std::vector<RankProgram> sizes = {{program(tensors + allReduce), {}, {}},
                                    {program(tensors + half), {}, {}}};
  EXPECT_NE(message(sizes).find("rank 1's all_reduce is of 16384 bytes, rank 0's of 32768"),
            std::string::npos)
      << message(sizes);
  std::vector<RankProgram> many(17, RankProgram{program(tensors + allReduce), {}, {}});
  EXPECT_NE(message(many).find("17 ranks, but the system has 16 chips"), std::string::npos);
  // A collective in a run without a fabric.
  const Result<RunResult> alone =
      session.run(program(tensors + allReduce), {}, {}, testing::timingOnly(1));
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.status().toString().find("runs over the ranks of a system run"),
            std::string::npos)
      << alone.status().toString();
  // The verifier: reductions in fp32 or bf16 over HBM ranges only.
  const Result<isa::Program> fp8 = isa::parseProgramText(
      ".tensor x input fp8_e4m3 [128, 64]\n.tensor y output fp8_e4m3 [128, 64]\n"
      "pool: collective op=all_reduce reduce=add dst=hbm:y:fp8_e4m3[[64,128],[1,64]] "
      "src=hbm:x:fp8_e4m3[[64,128],[1,64]]\n",
      "fp8.tasm");
  const std::string fp8Error =
      fp8.ok()
          ? session.run(std::make_shared<const isa::Program>(*fp8), {}, {}, testing::timingOnly(1))
                .status()
                .toString()
          : fp8.status().toString();
  EXPECT_NE(fp8Error.find("reduce in fp32 or bf16, not fp8_e4m3"), std::string::npos) << fp8Error;
}

// Reading the collective's output on another engine without waiting for it is a race.
TEST(RankRun, ReadingTheOutputBeforeTheCollectiveEndsIsARace) {
  const Session session = trn2();
  const fabric::Topology topology = testing::trn2Instance();
  const std::string text =
      kTensors +
      "pool: collective op=all_reduce reduce=add dst=hbm:y:fp32[[64,128],[1,64]] "
      "src=hbm:x:fp32[[64,128],[1,64]]\n"
      "sp: dma_copy dst=sbuf[0:128]:fp32[[1,64]] src=hbm:y:fp32[[64,128],[1,64]]\n";
  const std::vector<RankProgram> ranks(2, RankProgram{program(text), {}, {}});
  const Result<RanksResult> r = session.runRanks(topology, ranks, testing::timingOnly(1));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().toString().find(
                "race: rank 0: sp#0 'dma_copy dst=sbuf[0:128]:fp32[[1,64]] src=hbm:y"),
            std::string::npos)
      << r.status().toString();
  EXPECT_NE(r.status().toString().find("and rank 0: pool#0 'collective op=all_reduce"),
            std::string::npos)
      << r.status().toString();
}

}  // namespace
}  // namespace trn::runtime
