// Replica groups in system runs (Session::runRanks): each rank's collective runs with the other
// members of its group only, groups proceeding independently. Data against a float64 reference
// of each group's own members, list order as group order, the group's time against the fabric
// model's for the same chips, a group of one, and the errors: malformed groups when a kernel is
// traced, groups the ranks disagree on or that do not cover the run when it runs.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
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

/// Whole numbers, different per rank, so that sums are exact in fp32 in any order.
std::vector<float> rankValues(int rank) {
  std::vector<float> v(128 * 64);
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<float>((static_cast<int>(i) * 5 + rank * 17) % 31) - 15.0f;
  }
  return v;
}

/// A tile kernel per rank: stage x through SBUF to HBM scratch, all-reduce it within `groups`.
std::shared_ptr<const isa::Program> allReduceKernel(const Session& session,
                                                    const std::vector<std::vector<int>>& groups) {
  const kernel::KernelDef def =
      kernel::makeKernel("group_all_reduce", [groups](kernel::Kernel& k, kernel::Tensor x) {
        kernel::Tensor out = k.output("out", x.shape(), DType::kFp32);
        kernel::Tensor partial = k.hbmScratch("partial", x.shape(), DType::kFp32);
        kernel::Tensor tile = k.sbuf({128, 64}, DType::kFp32, "tile");
        kernel::nisa::dmaCopy(tile, x);
        kernel::nisa::dmaCopy(partial, tile);
        kernel::nisa::collective(isa::CollectiveOp::kAllReduce, out, partial, isa::AluOp::kAdd,
                                 isa::Engine::kPool, groups);
        return out;
      });
  const std::vector<kernel::TensorSpec> specs = {{"x", {128, 64}, DType::kFp32}};
  Result<std::shared_ptr<const kernel::CompiledKernel>> c = session.compile(def, specs);
  TRN_CHECK(c.ok()) << c.status().toString();
  return std::shared_ptr<const isa::Program>(*c, &(*c)->program);
}

/// Runs `ranks` copies of `prog`, rank r reading rankValues(r) as x, and returns each rank's out.
std::vector<std::vector<float>> runWithData(const std::shared_ptr<const isa::Program>& prog,
                                            int ranks, const std::string& out = "out") {
  const Session session = trn2();
  const fabric::Topology topology = testing::trn2Instance();
  std::vector<NpyArray> inputs;
  for (int r = 0; r < ranks; ++r) {
    inputs.push_back(floatArray({128, 64}, rankValues(r)));
  }
  std::vector<RankProgram> programs;
  for (int r = 0; r < ranks; ++r) {
    programs.push_back(
        {prog, {{"x", &inputs[static_cast<std::size_t>(r)], "x"}}, {{out, std::nullopt}}});
  }
  const Result<RanksResult> result = session.runRanks(topology, programs, RunOptions{});
  TRN_CHECK(result.ok()) << result.status().toString();
  std::vector<std::vector<float>> outputs;
  for (const RunResult& rank : result->ranks) {
    outputs.push_back(floatValues(rank.outputs[0]));
  }
  return outputs;
}

/// Checks that every member of each group holds the float64 sum over that group's members.
void expectGroupSums(const std::vector<std::vector<float>>& got,
                     const std::vector<std::vector<int>>& groups) {
  for (const std::vector<int>& group : groups) {
    std::vector<double> want(128 * 64, 0.0);
    for (const int q : group) {
      const std::vector<float> v = rankValues(q);
      for (std::size_t i = 0; i < want.size(); ++i) {
        want[i] += v[i];
      }
    }
    for (const int r : group) {
      for (std::size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(static_cast<double>(got[static_cast<std::size_t>(r)][i]), want[i])
            << "rank " << r << " element " << i;
      }
    }
  }
}

TEST(ReplicaGroupRun, EightChipsInTwoGroupsOfFourAllReduceTheirOwnData) {
  const std::vector<std::vector<int>> groups = {{0, 1, 2, 3}, {4, 5, 6, 7}};
  const auto got = runWithData(allReduceKernel(trn2(), groups), 8);
  expectGroupSums(got, groups);
  // The two groups' sums differ: neither saw the other's data.
  EXPECT_NE(got[0], got[4]);
}

TEST(ReplicaGroupRun, TensorParallelPairsAndStridedGroups) {
  const std::vector<std::vector<int>> pairs = {{0, 1}, {2, 3}, {4, 5}, {6, 7}};
  expectGroupSums(runWithData(allReduceKernel(trn2(), pairs), 8), pairs);
  const std::vector<std::vector<int>> strided = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  expectGroupSums(runWithData(allReduceKernel(trn2(), strided), 8), strided);
}

// An all-gather within groups: position i of a group is its i-th listed rank, so with
// [[3,2,1,0],[4,5,6,7]] rank 0's output holds rank 3's x first.
TEST(ReplicaGroupRun, AllGatherWithinGroupsInListOrder) {
  const std::string text =
      ".tensor x input fp32 [128, 64]\n.tensor y output fp32 [512, 64]\n"
      "pool: collective op=all_gather dst=hbm:y:fp32[[64,512],[1,64]] "
      "src=hbm:x:fp32[[64,128],[1,64]] groups=[[3,2,1,0],[4,5,6,7]]\n";
  const auto got = runWithData(program(text), 8, "y");
  const std::vector<std::vector<int>> groups = {{3, 2, 1, 0}, {4, 5, 6, 7}};
  for (const std::vector<int>& group : groups) {
    for (const int r : group) {
      for (std::size_t position = 0; position < group.size(); ++position) {
        const std::vector<float> want = rankValues(group[position]);
        for (std::size_t i = 0; i < want.size(); ++i) {
          ASSERT_EQ(got[static_cast<std::size_t>(r)][position * want.size() + i], want[i])
              << "rank " << r << " chunk " << position << " element " << i;
        }
      }
    }
  }
}

// Each group's collective takes the fabric model's time for a request over the group's chips;
// with one chunk of 32 KiB per chip, hand-checkable with `trnsim collectives bench`.
TEST(ReplicaGroupRun, AGroupTakesTheFabricModelsTimeForItsChips) {
  const Session session = trn2();
  const fabric::Topology topology = testing::trn2Instance();
  const std::string text = kTensors +
                           "pool: collective op=all_reduce reduce=add "
                           "dst=hbm:y:fp32[[64,128],[1,64]] src=hbm:x:fp32[[64,128],[1,64]] "
                           "groups=[[0,1,2,3],[4,5,6,7]]\n";
  const std::vector<RankProgram> ranks(8, RankProgram{program(text), {}, {}});
  const Result<RanksResult> result = session.runRanks(topology, ranks, testing::timingOnly(1));
  ASSERT_TRUE(result.ok()) << result.status().toString();
  ASSERT_EQ(result->collectives.size(), 2U);
  std::int64_t longest = 0;
  for (const fabric::CollectiveRecord& record : result->collectives) {
    fabric::CollectiveRequest request;
    request.op = fabric::CollectiveOp::kAllReduce;
    request.group = record.group;
    request.bytes = 128 * 64 * 4;
    request.elementBytes = 4;
    const Result<fabric::CollectiveResult> model = fabric::runCollective(topology, request);
    ASSERT_TRUE(model.ok());
    EXPECT_EQ(record.picoseconds, model->picoseconds);
    EXPECT_EQ(record.algorithm, std::optional(model->algorithm));
    longest = std::max(longest, model->picoseconds);
  }
  EXPECT_EQ(result->collectives[0].group, (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(result->collectives[1].group, (std::vector<std::int64_t>{4, 5, 6, 7}));
  const std::int64_t handshake = session.chip().core.dma.fixedCost.count();
  EXPECT_GE(result->stats.total.count(), longest + handshake);
  EXPECT_LT(result->stats.total.count(), longest + handshake + 1'000'000);
}

// Groups of one: the collective is a copy that completes at once.
TEST(ReplicaGroupRun, AGroupOfOneIsACopyAtOnce) {
  const std::string text =
      ".tensor x input fp32 [128, 64]\n.tensor y output fp32 [128, 64]\n"
      "pool: collective op=all_reduce reduce=add dst=hbm:y:fp32[[64,128],[1,64]] "
      "src=hbm:x:fp32[[64,128],[1,64]] groups=[[0],[1]]\n";
  const auto got = runWithData(program(text), 2, "y");
  EXPECT_EQ(got[0], rankValues(0));
  EXPECT_EQ(got[1], rankValues(1));
  const Session session = trn2();
  const std::vector<RankProgram> ranks(2, RankProgram{program(text), {}, {}});
  const Result<RanksResult> result = session.runRanks(testing::trn2Instance(), ranks, testing::timingOnly(1));
  ASSERT_TRUE(result.ok()) << result.status().toString();
  ASSERT_EQ(result->collectives.size(), 2U);
  EXPECT_EQ(result->collectives[0].picoseconds, 0);
  EXPECT_FALSE(result->collectives[0].algorithm.has_value());
}

TEST(ReplicaGroupRun, MalformedGroupsAreErrorsWhenTheKernelIsTraced) {
  const Session session = trn2();
  auto traceError = [&](const std::vector<std::vector<int>>& groups) {
    const kernel::KernelDef def =
        kernel::makeKernel("bad_groups", [groups](kernel::Kernel& k, kernel::Tensor x) {
          kernel::Tensor out = k.output("out", x.shape(), DType::kFp32);
          kernel::nisa::collective(isa::CollectiveOp::kAllReduce, out, x, isa::AluOp::kAdd,
                                   isa::Engine::kPool, groups);
          return out;
        });
    const std::vector<kernel::TensorSpec> specs = {{"x", {128, 64}, DType::kFp32}};
    const auto c = session.compile(def, specs);
    EXPECT_FALSE(c.ok());
    return c.ok() ? std::string() : c.status().toString();
  };
  const std::string twice = traceError({{0, 1}, {1, 2}});
  EXPECT_NE(twice.find("rank 1 is in replica groups 0 and 1"), std::string::npos) << twice;
  EXPECT_NE(twice.find("replica_group_test.cpp"), std::string::npos) << twice;
  const std::string sizes = traceError({{0, 1}, {2}});
  EXPECT_NE(sizes.find("replica group 1 has 1 ranks and group 0 has 2"), std::string::npos)
      << sizes;
}

TEST(ReplicaGroupRun, GroupsTheRanksDisagreeOnOrThatMissRanksAreRunErrors) {
  const Session session = trn2();
  const fabric::Topology topology = testing::trn2Instance();
  auto line = [](const std::string& groups) {
    return kTensors +
           "pool: collective op=all_reduce reduce=add dst=hbm:y:fp32[[64,128],[1,64]] "
           "src=hbm:x:fp32[[64,128],[1,64]] groups=" +
           groups + "\n";
  };
  auto message = [&](const std::vector<RankProgram>& ranks) {
    const Result<RanksResult> r = session.runRanks(topology, ranks, testing::timingOnly(1));
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : r.status().toString();
  };
  std::vector<RankProgram> disagree(4, RankProgram{program(line("[[0,1],[2,3]]")), {}, {}});
  disagree[2].program = program(line("[[0,2],[1,3]]"));
  const std::string differ = message(disagree);
  EXPECT_NE(differ.find("ranks 0 and 2 disagree on the replica groups of their collective 1: "
                        "[[0,1],[2,3]] and [[0,2],[1,3]]"),
            std::string::npos)
      << differ;
  const std::vector<RankProgram> outside(3, RankProgram{program(line("[[0,1],[2,3]]")), {}, {}});
  const std::string beyond = message(outside);
  EXPECT_NE(beyond.find("replica group 1 names rank 3, but the run has 3 ranks"), std::string::npos)
      << beyond;
  const std::vector<RankProgram> more(6, RankProgram{program(line("[[0,1],[2,3]]")), {}, {}});
  const std::string missing = message(more);
  EXPECT_NE(missing.find("rank 4 is in no replica group"), std::string::npos) << missing;
  // A member that never comes: the deadlock names it, not the other group's ranks.
  std::vector<RankProgram> absent(4, RankProgram{program(line("[[0,1],[2,3]]")), {}, {}});
  absent[3].program = program(kTensors + "sp: nop\n");
  const std::string never = message(absent);
  EXPECT_NE(never.find("waits at collective 1 for rank(s) 3, which never reach it"),
            std::string::npos)
      << never;
}

}  // namespace
}  // namespace trn::runtime
