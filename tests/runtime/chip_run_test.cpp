// Chip runs through the session: programs on several physical cores sharing device tensors by
// name, core barriers between the cores of a logical core (their timing derived by hand), races
// and deadlocks between cores, and the errors for bad launches.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chip_test_programs.h"

namespace trn::runtime {
namespace {

using testing::kTensors;
using testing::program;
using testing::trn2;

/// Copies rows [first, first + 64) of x to the same rows of y through SBUF.
/// `storeSync` is appended to the store (e.g. " signal(s1+=1)").
std::string copyRows(int first, const std::string& storeSync = "") {
  return fmt::format(
      "{0}sp: dma_copy dst=sbuf[0:64]:fp32[[1,64]] src=hbm:x+{1}:fp32[[64,64],[1,64]] "
      "signal(s0+=1)\n"
      "sp: dma_copy dst=hbm:y+{1}:fp32[[64,64],[1,64]] src=sbuf[0:64]:fp32[[1,64]] "
      "wait(s0>=1){2}\n",
      kTensors, first * 64 * 4, storeSync);
}

NpyArray iotaArray() {
  std::vector<float> values(128 * 64);
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<float>(i) * 0.5f;
  }
  return floatArray({128, 64}, values);
}

TEST(ChipRun, TwoCoresShareTheirInputAndOutputTensorsByName) {
  const Session session = trn2();
  const NpyArray x = iotaArray();
  const std::vector<CoreProgram> cores = {{program(copyRows(0)), 0}, {program(copyRows(64)), 1}};
  const std::vector<TensorInput> in = {{"x", &x, "x"}};
  const std::vector<TensorOutput> out = {{"y", std::nullopt}};
  RunOptions options;
  options.lnc = 2;
  Result<RunResult> r = session.runCores(cores, in, out, options);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  ASSERT_EQ(r->cores.size(), 2u);
  EXPECT_EQ(r->physicalCores, (std::vector<int>{0, 1}));
  EXPECT_EQ(r->outputs[0].data, x.data);  // each core wrote its half of the one tensor
  EXPECT_EQ(r->stats.cores, 2);
  EXPECT_EQ(r->stats.instructions, 4u);
  EXPECT_EQ(r->stats.total, std::max(r->cores[0].total, r->cores[1].total));
}

TEST(ChipRun, OneCoreWithoutTheOtherHalfLeavesPoisonThatTheReadReports) {
  const Session session = trn2();
  const NpyArray x = iotaArray();
  // y's rows 64..127 are never written: reading them back is not an error (outputs are bytes),
  // but a program that reads them is.
  const std::string reader = fmt::format(
      "{}sp: dma_copy dst=sbuf[0:64]+256:fp32[[1,64]] src=hbm:y+16384:fp32[[64,64],[1,64]]\n",
      copyRows(0));
  const std::vector<CoreProgram> cores = {{program(reader), 0}};
  const std::vector<TensorInput> in = {{"x", &x, "x"}};
  Result<RunResult> r = session.runCores(cores, in, {}, RunOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("poison"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("tensor 'y' byte 16384"), std::string::npos)
      << r.status().message();
}

TEST(ChipRun, WritesOfOneTensorFromTwoCoresWithoutABarrierAreARace) {
  const Session session = trn2();
  const NpyArray x = iotaArray();
  // Both cores write rows 0..63 of y.
  const std::vector<CoreProgram> cores = {{program(copyRows(0)), 0}, {program(copyRows(0)), 1}};
  const std::vector<TensorInput> in = {{"x", &x, "x"}};
  for (const core::RunMode mode : {core::RunMode::kFunctionalTiming, core::RunMode::kTimingOnly}) {
    RunOptions options;
    options.lnc = 2;
    options.mode = mode;
    options.poison = false;
    Result<RunResult> r = session.runCores(
        cores, mode == core::RunMode::kTimingOnly ? std::span<const TensorInput>() : std::span(in),
        {}, options);
    ASSERT_FALSE(r.ok()) << core::runModeName(mode);
    const std::string m = r.status().message();
    EXPECT_NE(m.find("race between cores"), std::string::npos) << m;
    EXPECT_NE(m.find("core 0: sp#1"), std::string::npos) << m;
    EXPECT_NE(m.find("core 1: sp#1"), std::string::npos) << m;
    EXPECT_NE(m.find("device bytes"), std::string::npos) << m;
  }
}

TEST(ChipRun, DisjointColumnsOfOneTensorDoNotRace) {
  const Session session = trn2();
  const NpyArray x = iotaArray();
  // Core 0 copies columns 0..31 of every row, core 1 columns 32..63: their byte ranges
  // interleave, their bytes do not meet.
  auto columns = [](int first) {
    return fmt::format(
        "{0}sp: dma_copy dst=sbuf[0:128]:fp32[[1,32]] src=hbm:x+{1}:fp32[[64,128],[1,32]] "
        "signal(s0+=1)\n"
        "sp: dma_copy dst=hbm:y+{1}:fp32[[64,128],[1,32]] src=sbuf[0:128]:fp32[[1,32]] "
        "wait(s0>=1)\n",
        kTensors, first * 4);
  };
  const std::vector<CoreProgram> cores = {{program(columns(0)), 0}, {program(columns(32)), 1}};
  const std::vector<TensorInput> in = {{"x", &x, "x"}};
  const std::vector<TensorOutput> out = {{"y", std::nullopt}};
  RunOptions options;
  options.lnc = 2;
  Result<RunResult> r = session.runCores(cores, in, out, options);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->outputs[0].data, x.data);
}

TEST(ChipRun, ARaceBetweenCoresWithAnAccessManyInstructionsBackComparesItsOwnElements) {
  const Session session = trn2();
  // Core 0 writes elements 0, 1, 8, 9, 16, 17, 24, 25 of y's rows 0..63 and then issues 300
  // loads, so that the scheduler no longer holds its store when core 1, after 3000 nops, writes
  // the same elements (a race) or the two after each pair (no race). The patterns are not rows:
  // the exact test compares their elements.
  auto store = [](int firstElement) {
    return fmt::format(
        "sp: dma_copy dst=hbm:y+{}:fp32[[64,64],[8,4],[1,2]] src=sbuf[0:64]:fp32[[1,8]]\n",
        firstElement * 4);
  };
  std::string first = fmt::format("{}{}", kTensors, store(0));
  std::string second = kTensors;
  for (int i = 0; i < 3000; ++i) {
    if (i < 300) {
      first += "sp: dma_copy dst=sbuf[0:64]+1024:fp32[[1,64]] src=hbm:x:fp32[[64,64],[1,64]]\n";
    }
    second += "sp: nop\n";
  }
  RunOptions options;
  options.lnc = 2;
  options.mode = core::RunMode::kTimingOnly;
  for (const int element : {0, 2}) {
    const std::vector<CoreProgram> cores = {{program(first), 0},
                                            {program(second + store(element)), 1}};
    Result<RunResult> r = session.runCores(cores, {}, {}, options);
    if (element == 2) {
      EXPECT_TRUE(r.ok()) << r.status().toString();
      continue;
    }
    ASSERT_FALSE(r.ok());
    const std::string m = r.status().message();
    EXPECT_NE(m.find("race between cores"), std::string::npos) << m;
    EXPECT_NE(m.find("core 0: sp#0"), std::string::npos) << m;
    EXPECT_NE(m.find("core 1: sp#3000"), std::string::npos) << m;
  }
}

/// Core 0 writes y rows 0..63 and then meets core 1 at a barrier; core 1 then reads those rows
/// back into rows 64..127 of y. With `barrier` false neither has one.
std::vector<CoreProgram> producerConsumer(bool barrier) {
  const std::string producer = fmt::format("{}{}", copyRows(0, " signal(s1+=1)"),
                                           barrier ? "pool: core_barrier wait(s1>=1)\n" : "");
  const std::string consumer = fmt::format(
      "{}{}sp: dma_copy dst=sbuf[0:64]:fp32[[1,64]] src=hbm:y:fp32[[64,64],[1,64]] {}"
      "signal(s0+=1)\n"
      "sp: dma_copy dst=hbm:y+16384:fp32[[64,64],[1,64]] src=sbuf[0:64]:fp32[[1,64]] "
      "wait(s0>=1)\n",
      kTensors, barrier ? "pool: core_barrier signal(s2+=1)\n" : "", barrier ? "wait(s2>=1) " : "");
  return {{program(producer), 0}, {program(consumer), 1}};
}

TEST(ChipRun, ACoreBarrierOrdersOneCoresWritesBeforeTheOthersReads) {
  const Session session = trn2();
  const NpyArray x = iotaArray();
  const std::vector<TensorInput> in = {{"x", &x, "x"}};
  const std::vector<TensorOutput> out = {{"y", std::nullopt}};
  RunOptions options;
  options.lnc = 2;
  Result<RunResult> r = session.runCores(producerConsumer(true), in, out, options);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  const std::vector<float> x0 = floatValues(x);
  const std::vector<float> y = floatValues(r->outputs[0]);
  for (std::size_t i = 0; i < 64 * 64; ++i) {
    ASSERT_EQ(y[i], x0[i]);
    ASSERT_EQ(y[64 * 64 + i], x0[i]);
  }
  // Without the barrier, core 1 reads rows 0..63 while core 0 writes them. On one host thread
  // poison reports the read (it comes before the write); with a thread per core, the timing pass
  // that comes first reports the race.
  options.parallel = false;
  Result<RunResult> poisoned = session.runCores(producerConsumer(false), in, out, options);
  ASSERT_FALSE(poisoned.ok());
  EXPECT_NE(poisoned.status().message().find("poison"), std::string::npos)
      << poisoned.status().message();
  options.parallel = true;
  for (const bool poison : {true, false}) {
    options.poison = poison;
    Result<RunResult> racy = session.runCores(producerConsumer(false), in, out, options);
    ASSERT_FALSE(racy.ok());
    EXPECT_NE(racy.status().message().find("race between cores"), std::string::npos)
        << racy.status().message();
  }
}

TEST(ChipRun, AThreadPerCoreGivesTheResultsAndFiguresOfOneThread) {
  const Session session = trn2();
  const NpyArray x = iotaArray();
  const std::vector<TensorInput> in = {{"x", &x, "x"}};
  const std::vector<TensorOutput> out = {{"y", std::nullopt}};
  for (const core::RunMode mode :
       {core::RunMode::kFunctionalTiming, core::RunMode::kFunctionalOnly}) {
    RunOptions options;
    options.lnc = 2;
    options.mode = mode;
    options.record = core::hasTiming(mode);
    options.parallel = false;
    Result<RunResult> one = session.runCores(producerConsumer(true), in, out, options);
    options.parallel = true;
    Result<RunResult> many = session.runCores(producerConsumer(true), in, out, options);
    ASSERT_TRUE(one.ok() && many.ok()) << one.status().toString() << many.status().toString();
    EXPECT_EQ(one->outputs[0].data, many->outputs[0].data);
    ASSERT_EQ(one->cores.size(), many->cores.size());
    for (std::size_t c = 0; c < one->cores.size(); ++c) {
      EXPECT_EQ(one->cores[c].mode, mode);
      EXPECT_EQ(many->cores[c].mode, mode);
      EXPECT_EQ(one->cores[c].total, many->cores[c].total);
      EXPECT_EQ(one->cores[c].instructions, many->cores[c].instructions);
      EXPECT_EQ(one->cores[c].records.size(), many->cores[c].records.size());
    }
  }
  // A poison read on one core's thread is reported with its core, and does not hang its partner
  // at the barrier.
  const std::string reader = fmt::format(
      "{}pool: core_barrier\n"
      "sp: dma_copy dst=sbuf[0:64]+256:fp32[[1,64]] src=hbm:y+16384:fp32[[64,64],[1,64]]\n",
      copyRows(0));
  const std::string partner = fmt::format("{}pool: core_barrier\n", kTensors);
  RunOptions options;
  options.lnc = 2;
  Result<RunResult> r = session.runCores(
      std::vector<CoreProgram>{{program(partner), 0}, {program(reader), 1}}, in, {}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("core 1: "), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("poison"), std::string::npos) << r.status().message();
}

TEST(ChipRun, ACoresBarriersComeFromOneEngine) {
  const Session session = trn2();
  RunOptions options;
  options.mode = core::RunMode::kTimingOnly;
  options.poison = false;
  Result<RunResult> r = session.runCores(
      std::vector<CoreProgram>{
          {program(fmt::format("{}pool: core_barrier\nact: core_barrier\n", kTensors)), 0}},
      {}, {}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("core_barrier at act#0 and at pool#0: a program issues its "
                                      "core_barrier instructions from one engine"),
            std::string::npos)
      << r.status().message();
}

TEST(ChipRun, TheBarrierReleasesTheEarlyCoreAFixedDmaCostAfterTheLastArrival) {
  const Session session = trn2();
  const spec::ChipSpec& chip = session.chip();
  // Core 1 runs a 1000-cycle-ish matmul-free wait: an iota on pool of known cost would need the
  // cost model; instead it arrives after its own DMA, and core 0 arrives at once.
  RunOptions options;
  options.lnc = 2;
  options.mode = core::RunMode::kTimingOnly;
  options.poison = false;
  options.record = true;
  Result<RunResult> r = session.runCores(producerConsumer(true), {}, {}, options);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  // Core 1's barrier is its first instruction: it arrives at 0. Core 0's barrier waits for its
  // store (s1), so it arrives last, at the store's completion, and passes at once; core 1 sees
  // the remote semaphore write core.dma.fixed_cost plus its semaphore overhead later.
  auto barrierRecord = [](const core::RunStats& s) {
    for (const core::InstructionRecord& rec : s.records) {
      if (rec.engine == isa::Engine::kPool) {
        return rec;
      }
    }
    ADD_FAILURE() << "no barrier record";
    return core::InstructionRecord{};
  };
  const core::InstructionRecord early = barrierRecord(r->cores[1]);
  const core::InstructionRecord last = barrierRecord(r->cores[0]);
  EXPECT_EQ(early.ready.count(), 0);
  const std::int64_t semaphore =
      (chip.costs.semaphoreOverheadCycles * 1'000'000'000'000 + chip.core.pool.clock.count() - 1) /
      chip.core.pool.clock.count();
  EXPECT_EQ(early.start.count(), last.start.count() + chip.core.dma.fixedCost.count() + semaphore);
  EXPECT_GT(last.start.count(), 0);
}

TEST(ChipRun, ACoreThatNeverReachesTheBarrierIsADeadlockNamingIt) {
  const Session session = trn2();
  RunOptions options;
  options.lnc = 2;
  options.mode = core::RunMode::kTimingOnly;
  options.poison = false;
  const std::vector<CoreProgram> cores = {
      {program(fmt::format("{}pool: core_barrier\n", kTensors)), 0},
      {program(fmt::format("{}pool: nop\n", kTensors)), 1}};
  Result<RunResult> r = session.runCores(cores, {}, {}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("deadlock"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("core 0: pool#0 'core_barrier' waits at core barrier 1 "
                                      "for core(s) 1"),
            std::string::npos)
      << r.status().message();
}

TEST(ChipRun, CoresOfDifferentLogicalCoresDoNotMeetAtBarriers) {
  const Session session = trn2();
  RunOptions options;
  options.mode = core::RunMode::kTimingOnly;
  options.poison = false;
  // At LNC=1 every core is its own logical core: the barrier passes at once.
  const std::vector<CoreProgram> cores = {
      {program(fmt::format("{}pool: core_barrier\n", kTensors)), 0},
      {program(fmt::format("{}pool: nop\n", kTensors)), 1}};
  Result<RunResult> r = session.runCores(cores, {}, {}, options);
  ASSERT_TRUE(r.ok()) << r.status().toString();
}

TEST(ChipRun, BadLaunchesAreClearErrors) {
  const Session session = trn2();
  RunOptions options;
  options.mode = core::RunMode::kTimingOnly;
  options.poison = false;
  auto message = [&](std::vector<CoreProgram> cores, RunOptions o) {
    Result<RunResult> r = session.runCores(cores, {}, {}, o);
    return r.ok() ? std::string("ok") : r.status().message();
  };
  const auto p = program(fmt::format("{}pool: nop\n", kTensors));
  EXPECT_NE(message({{p, 8}}, options).find("physical core 8 does not exist"), std::string::npos);
  EXPECT_NE(message({{p, 1}, {p, 1}}, options).find("two programs were given for physical core 1"),
            std::string::npos);
  RunOptions three = options;
  three.lnc = 3;
  EXPECT_NE(message({{p, 0}}, three).find("LNC=3 is not a logical-core size of chip 'trn2'"),
            std::string::npos);
  const auto other = program(".tensor x input bf16 [128, 64]\npool: nop\n");
  EXPECT_NE(message({{p, 0}, {other, 1}}, options)
                .find("tensor 'x' is [128, 64] fp32 in one core's program but [128, 64] bf16"),
            std::string::npos);
  Result<Session> trn1 = Session::open("trn1");
  ASSERT_TRUE(trn1.ok());
  RunOptions two = options;
  two.lnc = 2;
  Result<RunResult> r = trn1->runCores(std::vector<CoreProgram>{{p, 0}}, {}, {}, two);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("LNC=2 is not a logical-core size of chip 'trn1' (it has 1)"),
            std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace trn::runtime
