// Exact times for hand-derived micro-programs on trn2. Every expected value is computed here from
// the chip description's numbers and the published cost formulas (nki-reference §6.1), following
// the rules of docs/timing.md; none is copied from a run.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "timed_run.h"

namespace trn::core {
namespace {

using testing::ps;
using testing::runTimed;
using testing::trn2Unthrottled;

constexpr const char* kOnePerEngine = R"(
.tensor a input bf16 [128, 512]
pe:   nc_matmul dst=psum[0:128]:fp32[[1,512]] stationary=sbuf[0:128]:bf16[[1,128]] moving=sbuf[0:128]+256:bf16[[1,512]]
act:  activation dst=sbuf[0:128]+2048:bf16[[1,512]] data=sbuf[0:128]+4096:bf16[[1,512]] op=exp
dve:  tensor_tensor dst=sbuf[0:128]+8192:bf16[[1,512]] data0=sbuf[0:128]+12288:bf16[[1,512]] data1=sbuf[0:128]+16384:bf16[[1,512]] op=add
pool: iota dst=sbuf[0:128]+20480:int32[[1,512]] pattern=[[1,512]]
sp:   nop
)";

TEST(Timing, OneInstructionPerEngineCostsItsFormulaAtItsClock) {
  const auto chip = trn2Unthrottled();
  const spec::Core& core = chip->core;
  const std::int64_t minIi = chip->costs.minIi;
  // nki-reference §6.1: matmul max(min(64, N_stationary), N_moving); activation max(MIN_II, N);
  // bf16 add from SBUF with unit stride max(MIN_II, N); iota GPSIMD_START + N; a control
  // instruction occupies its sequencer for MIN_II.
  const std::int64_t pe =
      ps(std::max<std::int64_t>(std::min<std::int64_t>(64, 128), 512), core.pe.clock);
  const std::int64_t act = ps(std::max<std::int64_t>(minIi, 512), core.act.clock);
  const std::int64_t dve = ps(std::max<std::int64_t>(minIi, 512), core.dve.clock);
  const std::int64_t pool = ps(chip->costs.gpsimdStartCycles + 512, core.pool.clock);
  const std::int64_t sp = ps(minIi, core.sp.clock);
  const RunStats stats = runTimed(kOnePerEngine, chip);
  ASSERT_EQ(stats.records.size(), 5u);
  const std::array<std::int64_t, 5> expected = {pe, act, dve, pool, sp};
  const std::array<Hertz, 5> clocks = {core.pe.clock, core.act.clock, core.dve.clock,
                                       core.pool.clock, core.sp.clock};
  std::int64_t total = 0;
  for (const InstructionRecord& r : stats.records) {
    const auto e = static_cast<std::size_t>(r.engine);
    EXPECT_EQ(r.start.count(), 0) << isa::engineName(r.engine);
    EXPECT_EQ(r.end.count(), expected[e]) << isa::engineName(r.engine);
    const std::int64_t latency = ps(chip->costs.staticOverheadCycles, clocks[e]);
    EXPECT_EQ(r.complete.count(), expected[e] + latency) << isa::engineName(r.engine);
    EXPECT_EQ(stats.engines[e].busy.count(), expected[e]);
    EXPECT_EQ(stats.engines[e].waiting.count(), 0);
    total = std::max(total, expected[e] + latency);
  }
  EXPECT_EQ(stats.total.count(), total);
  EXPECT_EQ(stats.flops, 2 * 128 * 128 * 512);
}

TEST(Timing, TimingOnlyAndFunctionalTimingGiveIdenticalTimes) {
  const auto chip = testing::trn2();
  const RunStats timed = runTimed(kOnePerEngine, chip, RunMode::kTimingOnly);
  auto core = testing::makeCore(kOnePerEngine, chip, RunMode::kFunctionalTiming);
  std::vector<std::byte> zeros(128 * 512 * 2);
  ASSERT_TRUE(core->setTensor("a", zeros).ok());
  const Result<RunStats> functional = core->run();
  ASSERT_TRUE(functional.ok()) << functional.status().toString();
  EXPECT_EQ(functional->total, timed.total);
  ASSERT_EQ(functional->records.size(), timed.records.size());
  for (std::size_t i = 0; i < timed.records.size(); ++i) {
    EXPECT_EQ(functional->records[i].start, timed.records[i].start);
    EXPECT_EQ(functional->records[i].complete, timed.records[i].complete);
  }
  EXPECT_TRUE(core->tensorBytes("a").ok());
  auto timingOnly = testing::makeCore(kOnePerEngine, chip, RunMode::kTimingOnly);
  EXPECT_FALSE(timingOnly->tensorBytes("a").ok());
  const RunStats untimed = runTimed(kOnePerEngine, chip, RunMode::kFunctionalOnly);
  EXPECT_EQ(untimed.total.count(), 0);
  EXPECT_EQ(untimed.instructions, 5u);
}

// N8 (hardware-trn2.md §8): one-element ScalarE instructions chained through a semaphore reach
// an initiation interval of about 264 cycles = MIN_II + static overhead + semaphore overhead.
TEST(Timing, DependentChainThroughASemaphorePaysLatencyAndSemaphoreOverhead) {
  const auto chip = trn2Unthrottled();
  const RunStats stats = runTimed(R"(
act: activation dst=sbuf[0:128]:fp32[[1,1]] data=sbuf[0:128]+4:fp32[[1,1]] op=exp signal(s0+=1)
act: activation dst=sbuf[0:128]+8:fp32[[1,1]] data=sbuf[0:128]:fp32[[1,1]] op=exp wait(s0>=1) signal(s1+=1)
dve: tensor_copy dst=sbuf[0:128]+12:fp32[[1,1]] src=sbuf[0:128]+8:fp32[[1,1]] wait(s1>=1)
)",
                                  chip);
  const Hertz act = chip->core.act.clock;
  const Hertz dve = chip->core.dve.clock;
  const std::int64_t one = ps(chip->costs.minIi, act);
  const std::int64_t latency = ps(chip->costs.staticOverheadCycles, act);
  const std::int64_t actSees = ps(chip->costs.semaphoreOverheadCycles, act);
  const std::int64_t dveSees = ps(chip->costs.semaphoreOverheadCycles, dve);
  ASSERT_EQ(stats.records.size(), 3u);
  const std::int64_t second = one + latency + actSees;
  const auto& rec = stats.records;
  const auto find = [&](isa::Engine e, std::uint32_t index) {
    return *std::find_if(rec.begin(), rec.end(), [&](const InstructionRecord& r) {
      return r.engine == e && r.index == index;
    });
  };
  EXPECT_EQ(find(isa::Engine::kAct, 1).start.count(), second);
  // 264 ScalarE cycles, within the rounding of three separate cycle conversions.
  EXPECT_NEAR(static_cast<double>(second), 264.0 / 1.2e9 * 1e12, 3.0);
  const std::int64_t third = second + one + latency + dveSees;
  const InstructionRecord copy = find(isa::Engine::kDve, 0);
  EXPECT_EQ(copy.start.count(), third);
  EXPECT_EQ(stats.engines[static_cast<std::size_t>(isa::Engine::kDve)].waiting.count(), third);
  EXPECT_EQ(stats.total.count(), third + ps(std::max<std::int64_t>(chip->costs.minIi, 1), dve) +
                                     ps(chip->costs.staticOverheadCycles, dve));
}

TEST(Timing, AnUnrelatedSemaphoreUpdateDoesNotWakeAWaitingEngineEarly) {
  const auto chip = trn2Unthrottled();
  const spec::Core& core = chip->core;
  // POOL signals s1 (which nobody waits for) before VECTOR signals s0 (which ACT waits for).
  const RunStats stats = runTimed(R"(
pool: nop signal(s1+=1)
dve: nop signal(s0+=1)
act: nop wait(s0>=1)
)",
                                  chip);
  const std::int64_t minIi = chip->costs.minIi;
  const std::int64_t latency = chip->costs.staticOverheadCycles;
  const std::int64_t s1 = ps(minIi, core.pool.clock) + ps(latency, core.pool.clock);
  const std::int64_t s0 = ps(minIi, core.dve.clock) + ps(latency, core.dve.clock);
  const std::int64_t seen = ps(chip->costs.semaphoreOverheadCycles, core.act.clock);
  ASSERT_LT(s1, s0);
  ASSERT_LE(s0, s1 + seen);  // an early wake-up at s1 would already find s0 set
  const auto act =
      std::find_if(stats.records.begin(), stats.records.end(),
                   [](const InstructionRecord& r) { return r.engine == isa::Engine::kAct; });
  EXPECT_EQ(act->start.count(), s0 + seen);
}

TEST(Timing, IndependentEnginesOverlap) {
  const auto chip = trn2Unthrottled();
  std::string text;
  for (int i = 0; i < 10; ++i) {
    text += fmt::format(
        "act: activation dst=sbuf[0:128]+{0}:bf16[[1,256]] data=sbuf[0:128]+{0}:bf16[[1,256]] "
        "op=exp\n",
        i * 512);
    text += fmt::format(
        "dve: tensor_scalar dst=sbuf[0:128]+{0}:fp32[[1,256]] data=sbuf[0:128]+{0}:fp32[[1,256]] "
        "op0=add operand0=1.0\n",
        65536 + i * 1024);
  }
  const RunStats stats = runTimed(text, chip);
  // ScalarE: max(MIN_II, 256) each; VectorE fp32 tensor_scalar: max(MIN_II, 256) at 0.96 GHz.
  const std::int64_t act = 10 * ps(256, chip->core.act.clock);
  const std::int64_t dve = 10 * ps(256, chip->core.dve.clock);
  EXPECT_EQ(stats.engines[1].busy.count(), act);
  EXPECT_EQ(stats.engines[2].busy.count(), dve);
  EXPECT_EQ(stats.total.count(),
            std::max(act + ps(chip->costs.staticOverheadCycles, chip->core.act.clock),
                     dve + ps(chip->costs.staticOverheadCycles, chip->core.dve.clock)));
}

TEST(Timing, VectorPerformanceModesFollowOperandPlacement) {
  const auto chip = trn2Unthrottled();
  const spec::VectorEngine& dve = chip->core.dve;
  // bf16 SBUF->SBUF contiguous: 4x; the same with a PSUM source: 2x; fp32: 1x.
  const RunStats fast = runTimed(
      "dve: tensor_copy dst=sbuf[0:128]:bf16[[1,2048]] src=sbuf[0:128]+4096:bf16[[1,2048]]\n",
      chip);
  const RunStats psum = runTimed(
      "dve: tensor_copy dst=sbuf[0:128]:bf16[[1,1024]] src=psum[0:128]:bf16[[1,1024]]\n", chip);
  const RunStats fp32 = runTimed(
      "dve: tensor_copy dst=sbuf[0:128]:fp32[[1,1024]] src=sbuf[0:128]+8192:fp32[[1,1024]]\n",
      chip);
  EXPECT_EQ(fast.records[0].end.count(), ps(2048 / dve.perfMode.fastFactor, dve.clock));
  EXPECT_EQ(fast.records[0].variant, "perf_4x");
  EXPECT_EQ(psum.records[0].end.count(), ps(1024 / dve.perfMode.factor, dve.clock));
  EXPECT_EQ(fp32.records[0].end.count(), ps(1024, dve.clock));
}

TEST(Timing, Fp8DoubleRowMatmulTakesTheBf16TimeForTwiceTheWork) {
  const auto chip = trn2Unthrottled();
  const RunStats bf16 = runTimed(
      "pe: nc_matmul dst=psum[0:128]:fp32[[1,512]] stationary=sbuf[0:128]:bf16[[1,128]] "
      "moving=sbuf[0:128]+256:bf16[[1,512]]\n",
      chip);
  const RunStats fp8 = runTimed(
      "pe: nc_matmul dst=psum[0:128]:fp32[[1,512]] "
      "stationary=sbuf[0:128]:fp8_e4m3[[128,2],[1,128]] "
      "moving=sbuf[0:128]+256:fp8_e4m3[[512,2],[1,512]] perf_mode=double_row\n",
      chip);
  const RunStats fp32 = runTimed(
      "pe: nc_matmul dst=psum[0:128]:fp32[[1,512]] stationary=sbuf[0:128]:fp32[[1,128]] "
      "moving=sbuf[0:128]+512:fp32[[1,512]]\n",
      chip);
  EXPECT_EQ(bf16.records[0].end.count(), ps(512, chip->core.pe.clock));
  EXPECT_EQ(fp8.records[0].end, bf16.records[0].end);
  EXPECT_EQ(fp8.flops, 2 * bf16.flops);
  EXPECT_EQ(fp32.records[0].end.count(),
            ps(chip->core.pe.fp32CostFactor * 512, chip->core.pe.clock));
}

}  // namespace
}  // namespace trn::core
