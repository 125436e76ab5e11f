// A kernel's own DMA and the DMA work of its collectives share the rank's DMA engines and HBM stack
// (core::CollectiveService::lastLoads, FabricCollectives): an all-gather overlapped with a
// DMA-heavy kernel makes the kernel slower than it is alone, by a time derived by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../runtime/chip_test_programs.h"
#include "trn/fabric/kernel_collectives.h"

namespace trn::runtime {
namespace {

using testing::program;
using testing::timingOnly;
using testing::trn2;

// Each rank all-gathers 2 MiB into 4 MiB (pool) while copying 4 MiB HBM to HBM twice (sp).
const std::string kTensors =
    ".tensor x input fp32 [128, 4096]\n.tensor y output fp32 [256, 4096]\n"
    ".tensor a input fp32 [128, 8192]\n.tensor b output fp32 [128, 8192]\n";
const std::string kAllGather =
    "pool: collective op=all_gather dst=hbm:y:fp32[[4096,256],[1,4096]] "
    "src=hbm:x:fp32[[4096,128],[1,4096]]\n";
const std::string kCopies =
    "sp: dma_copy dst=hbm:b:fp32[[8192,128],[1,8192]] src=hbm:a:fp32[[8192,128],[1,8192]]\n"
    "sp: dma_copy dst=hbm:b:fp32[[8192,128],[1,8192]] src=hbm:a:fp32[[8192,128],[1,8192]]\n";

std::int64_t runTime(const Session& session, const fabric::Topology& topology,
                     const std::string& text) {
  const std::vector<RankProgram> ranks(2, RankProgram{program(kTensors + text), {}, {}});
  const Result<RanksResult> r = session.runRanks(topology, ranks, timingOnly(1));
  EXPECT_TRUE(r.ok()) << r.status().toString();
  return r.ok() ? r->stats.total.count() : 0;
}

// Two chips of a trn2.48xlarge. Alone, the copies are bound by the HBM stack of the rank's core
// (725 GB/s: 16 engines x 23 GB/s = 368 GB/s of copy is 736 GB/s read plus written): they end
// 16 MiB of HBM traffic at 725 GB/s after they start, the DMA's fixed cost of 1.3 us (in which
// descriptor generation, 0.6 us, is hidden) after sp issues the first. The all-gather reads the
// 2 MiB a chip sends and writes the 2 MiB it receives in that stack: 4 MiB. Its streams start
// when the handshake (1.3 us) after its issue at time 0 is over, over all 16 engines, and from
// then on the stack is saturated by the two until the copies end: at 1.3 us plus 16 MiB + 4 MiB
// at 725 GB/s. The collective alone ends earlier (its links take 2 MiB at 128 GB/s).
TEST(KernelDmaSharing, AnAllGatherSlowsTheKernelsOwnDmaByItsHbmTraffic) {
  const Session session = trn2();
  const fabric::Topology topology = testing::trn2Instance();
  const std::int64_t copies = runTime(session, topology, kCopies);
  const std::int64_t collective = runTime(session, topology, kAllGather);
  const std::int64_t both = runTime(session, topology, kAllGather + kCopies);
  constexpr double kStackBytesPerPs = 0.725;
  constexpr double kMiB = 1024.0 * 1024.0;
  const double handshake = 1'300'000;
  // Alone, the copies start after the fixed cost and the issue of sp's first instruction.
  EXPECT_GE(static_cast<double>(copies), handshake + 16 * kMiB / kStackBytesPerPs);
  EXPECT_LT(static_cast<double>(copies), handshake + 100'000 + 16 * kMiB / kStackBytesPerPs);
  // Both: each operation's end is rounded up to the ps.
  EXPECT_NEAR(static_cast<double>(both), handshake + 20 * kMiB / kStackBytesPerPs, 10)
      << "copies " << copies << " collective " << collective << " both " << both;
  EXPECT_GT(both, std::max(copies, collective) + 5'000'000);
}

// The load the fabric reports for that all-gather: per chip, the 2 MiB it sends through its DMA
// engines, an eighth of it on each of the chip's 8 NeuronCores, and 4 MiB of its HBM.
TEST(KernelDmaSharing, TheFabricReportsEachRanksDmaAndHbmBytes) {
  const fabric::Topology topology = testing::trn2Instance();
  fabric::FabricCollectives service(topology);
  const Result<isa::Program> parsed = isa::parseProgramText(kTensors + kAllGather, "ag.tasm");
  ASSERT_TRUE(parsed.ok()) << parsed.status().toString();
  isa::InstructionBody body;
  parsed->stream(isa::Engine::kPool).decodeBody(0, body);
  const auto& instr = std::get<isa::Collective>(body);
  std::vector<core::CollectiveCall> calls(2);
  for (std::size_t r = 0; r < 2; ++r) {
    calls[r].instr = &instr;
    calls[r].rank = static_cast<std::int64_t>(r);
    calls[r].srcBytes = 2 * 1024 * 1024;
    calls[r].dstBytes = 4 * 1024 * 1024;
  }
  const Result<std::int64_t> time = service.run(calls, false);
  ASSERT_TRUE(time.ok()) << time.status().toString();
  const std::vector<core::CollectiveChipLoad> loads = service.lastLoads();
  ASSERT_EQ(loads.size(), 2U);
  for (const core::CollectiveChipLoad& load : loads) {
    EXPECT_DOUBLE_EQ(load.engineBytes, 2.0 * 1024 * 1024 / 8);
    EXPECT_DOUBLE_EQ(load.hbmBytes, 4.0 * 1024 * 1024);
  }
}

}  // namespace
}  // namespace trn::runtime
