// DMA timing on trn2, derived from the chip description (docs/timing.md "DMA"): a transfer joins
// its queue after the fixed cost and descriptor generation, spreads over min(rows, 16) engines at
// the per-engine bandwidth, pays one overhead-bound buffer size per descriptor, shares engines
// with the heads of other queues, and shares the HBM stack its bytes lie in with every core that
// reaches it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "timed_run.h"
#include "trn/core/device_memory.h"

namespace trn::core {
namespace {

using testing::ps;
using testing::trn2Unthrottled;

/// A 128-partition HBM->SBUF load of `bytesPerPartition` bytes per partition (bf16).
std::string load(const std::string& engine, std::int64_t bytesPerPartition, int queue,
                 const std::string& tensor, std::int64_t sbufOffset) {
  const std::int64_t n = bytesPerPartition / 2;
  return fmt::format(
      "{}: dma_copy dst=sbuf[0:128]+{}:bf16[[1,{}]] src=hbm:{}:bf16[[{},128],[1,{}]] "
      "queue={}\n",
      engine, sbufOffset, n, tensor, n, n, queue);
}

std::string tensors(std::int64_t bytesPerPartition) {
  return fmt::format(".tensor a input bf16 [128, {0}]\n.tensor b input bf16 [128, {0}]\n",
                     bytesPerPartition / 2);
}

struct DmaNumbers {
  std::int64_t dispatch;  ///< SP/ACT trigger time (MIN_II at 1.2 GHz)
  std::int64_t queued;    ///< issue + fixed cost (descriptor generation finishes earlier)
  double engineBandwidth;
  double overhead;
};

DmaNumbers numbers(const spec::ChipSpec& chip) {
  DmaNumbers n;
  n.dispatch = ps(chip.costs.minIi, chip.core.sp.clock);
  const std::int64_t dge = n.dispatch + chip.core.dma.dge.instructionCost.count();
  n.queued = std::max(n.dispatch + chip.core.dma.fixedCost.count(), dge);
  n.engineBandwidth = static_cast<double>(chip.core.dma.engineBandwidth.count());
  n.overhead = static_cast<double>(chip.core.dma.efficiency.overheadBoundBelow.count());
  return n;
}

/// Picoseconds to move `work` engine-bytes at `rate` bytes/s, rounded up.
std::int64_t moveTime(double work, double rate) {
  return static_cast<std::int64_t>(std::ceil(work * 1e12 / rate - 1e-6));
}

TEST(DmaTiming, OneLoadUsesAllSixteenEnginesAfterTheFixedCost) {
  const auto chip = trn2Unthrottled();
  const DmaNumbers n = numbers(*chip);
  const RunStats stats = testing::runTimed(tensors(4096) + load("sp", 4096, 0, "a", 0), chip);
  ASSERT_EQ(stats.transfers.size(), 1u);
  const TransferRecord& t = stats.transfers[0];
  // 128 partitions of 4 KiB: one buffer per partition, 16 engines of 8 partitions each.
  const double work = 128.0 * 4096 + 128 * n.overhead;
  EXPECT_EQ(t.issued.count(), n.dispatch);
  EXPECT_EQ(t.start.count(), n.queued);
  EXPECT_EQ(t.engines, 16);
  EXPECT_EQ(t.descriptors, 128);
  EXPECT_EQ(t.bytes, 128 * 4096);
  EXPECT_EQ(t.hbmBytes, 128 * 4096);
  EXPECT_EQ(t.end.count(), n.queued + moveTime(work, 16 * n.engineBandwidth));
  EXPECT_EQ(stats.total, t.end);
  EXPECT_EQ(stats.dma.busy.count(), t.end.count() - t.start.count());
  EXPECT_NEAR(t.efficiency, 4096.0 / (4096.0 + n.overhead), 1e-12);
}

TEST(DmaTiming, TransfersOnOneQueueRunInOrderAndOnTwoQueuesShareTheEngines) {
  const auto chip = trn2Unthrottled();
  const DmaNumbers n = numbers(*chip);
  const double work = 128.0 * 8192 + 128 * n.overhead;
  const std::int64_t alone = moveTime(work, 16 * n.engineBandwidth);
  // SP and ACT trigger at the same time (both 1.2 GHz), so both transfers queue together.
  const RunStats fifo = testing::runTimed(
      tensors(8192) + load("sp", 8192, 3, "a", 0) + load("act", 8192, 3, "b", 16384), chip);
  ASSERT_EQ(fifo.transfers.size(), 2u);
  std::vector<std::int64_t> ends = {fifo.transfers[0].end.count(), fifo.transfers[1].end.count()};
  std::sort(ends.begin(), ends.end());
  EXPECT_EQ(ends[0], n.queued + alone);
  EXPECT_EQ(ends[1], n.queued + alone + alone);
  const RunStats shared = testing::runTimed(
      tensors(8192) + load("sp", 8192, 3, "a", 0) + load("act", 8192, 4, "b", 16384), chip);
  ASSERT_EQ(shared.transfers.size(), 2u);
  const std::int64_t half = moveTime(work, 8 * n.engineBandwidth);
  EXPECT_EQ(shared.transfers[0].end.count(), n.queued + half);
  EXPECT_EQ(shared.transfers[1].end.count(), n.queued + half);
}

TEST(DmaTiming, SmallTransfersAreOverheadBound) {
  const auto chip = trn2Unthrottled();
  const DmaNumbers n = numbers(*chip);
  // 64 B per partition: every buffer carries a 256 B overhead.
  const RunStats stats = testing::runTimed(tensors(64) + load("sp", 64, 0, "a", 0), chip);
  const double work = 128.0 * 64 + 128 * n.overhead;
  EXPECT_EQ(stats.transfers[0].end.count(), n.queued + moveTime(work, 16 * n.engineBandwidth));
  EXPECT_NEAR(stats.transfers[0].efficiency, 64.0 / (64.0 + n.overhead), 1e-12);
}

TEST(DmaTiming, TransposeRunsAtItsPublishedFractionOfCopyThroughput) {
  const auto chip = trn2Unthrottled();
  const DmaNumbers n = numbers(*chip);
  const RunStats stats = testing::runTimed(
      ".tensor a input bf16 [128, 128]\n"
      "sp: dma_transpose dst=sbuf[0:128]:bf16[[1,128]] src=hbm:a:bf16[[128,128],[1,128]]\n",
      chip);
  ASSERT_EQ(stats.transfers.size(), 1u);
  // 128 partitions of 256 B written; the HBM side is one contiguous run.
  const double efficiency = chip->core.dma.transpose.hbmToSbufEfficiency.toDouble();
  const double work = 128.0 * 256 / efficiency + 128 * n.overhead;
  EXPECT_EQ(stats.transfers[0].descriptors, 128);
  EXPECT_EQ(stats.transfers[0].end.count(), n.queued + moveTime(work, 16 * n.engineBandwidth));
}

/// One core's 4 MiB load of tensor 'a' at the full rate of its 16 engines, and the rate of each
/// of two such loads on one HBM stack, which together ask it for more than it has and so slow
/// down in proportion.
struct StackShare {
  std::int64_t tensorBytes = 0;
  std::string text;
  double work = 0;
  double coreRate = 0;
  double sharedRate = 0;
};

StackShare twoLoadsOnOneStack(const spec::ChipSpec& chip, const DmaNumbers& n) {
  StackShare s;
  const std::int64_t perPartition = 32768;
  s.tensorBytes = 128 * perPartition;
  s.text = tensors(perPartition) + load("sp", perPartition, 0, "a", 0);
  s.work = 128.0 * perPartition + 128 * n.overhead;
  s.coreRate = 16 * n.engineBandwidth;
  const double stack = static_cast<double>(chip.hbm.bandwidth.count()) / chip.hbm.stacks;
  const double demand = 2 * s.coreRate * (128.0 * perPartition / s.work);
  TRN_CHECK(demand > stack) << "two loads no longer oversubscribe a stack";
  s.sharedRate = s.coreRate * stack / demand;
  return s;
}

TEST(DmaTiming, TheTwoCoresOfAPairShareTheirHbmStack) {
  const auto chip = trn2Unthrottled();
  const DmaNumbers n = numbers(*chip);
  const StackShare share = twoLoadsOnOneStack(*chip, n);
  const std::string& text = share.text;
  const double work = share.work;
  const double coreRate = share.coreRate;
  const double sharedRate = share.sharedRate;
  auto runPair = [&](int first, int second) {
    auto a = testing::makeCore(text, chip, RunMode::kTimingOnly, first);
    auto b = testing::makeCore(text, chip, RunMode::kTimingOnly, second);
    Result<std::vector<RunStats>> stats = runTogether({a.get(), b.get()});
    TRN_CHECK(stats.ok()) << stats.status().toString();
    return std::move(*stats);
  };
  // Physical cores 0 and 1 share stack 0 (hbm.stack_of_core); 0 and 2 do not.
  const std::vector<RunStats> pair = runPair(0, 1);
  for (const RunStats& s : pair) {
    EXPECT_NEAR(static_cast<double>(s.transfers[0].end.count()),
                static_cast<double>(n.queued + moveTime(work, sharedRate)), 1.0);
  }
  const std::vector<RunStats> apart = runPair(0, 2);
  for (const RunStats& s : apart) {
    EXPECT_EQ(s.transfers[0].end.count(), n.queued + moveTime(work, coreRate));
  }
}

TEST(DmaTiming, ATransferIsChargedToTheStackItsTensorLiesIn) {
  const auto chip = trn2Unthrottled();
  const DmaNumbers n = numbers(*chip);
  const StackShare share = twoLoadsOnOneStack(*chip, n);
  const std::int64_t tensorBytes = share.tensorBytes;
  const std::string& text = share.text;
  const double work = share.work;
  const double coreRate = share.coreRate;
  const double sharedRate = share.sharedRate;
  // Cores 0 and 2 sit on stacks 0 and 1; each loads its own tensor 'a', placed in `stackOfA[c]`
  // of one chip-shaped device memory.
  auto run = [&](std::array<std::int64_t, 2> stackOfA) {
    auto device =
        DeviceMemory::create(chip->hbm.stackCapacity.count(), chip->hbm.stacks, false, false);
    TRN_CHECK(device.ok()) << device.status().toString();
    std::vector<std::unique_ptr<NeuronCore>> cores;
    for (int c = 0; c < 2; ++c) {
      Result<isa::Program> program = isa::parseProgramText(text, "remote.tasm");
      TRN_CHECK(program.ok()) << program.status().toString();
      CoreOptions options;
      options.limits = runtime::coreLimits(*chip);
      options.chip = chip;
      options.mode = RunMode::kTimingOnly;
      options.record = true;
      options.physicalCore = 2 * c;
      options.device = *device;
      for (const std::int64_t stackOfTensor : {stackOfA[static_cast<std::size_t>(c)], 2L}) {
        Result<std::int64_t> address = (*device)->allocate(tensorBytes, stackOfTensor, "a or b");
        TRN_CHECK(address.ok()) << address.status().toString();
        options.tensorAddresses.push_back(*address);
      }
      Result<std::unique_ptr<NeuronCore>> core = NeuronCore::create(std::move(*program), options);
      TRN_CHECK(core.ok()) << core.status().toString();
      cores.push_back(std::move(*core));
    }
    Result<std::vector<RunStats>> stats = runTogether({cores[0].get(), cores[1].get()});
    TRN_CHECK(stats.ok()) << stats.status().toString();
    return std::move(*stats);
  };
  // Core 2 reads stack 0: the two loads share it as the two cores of a pair would.
  const std::vector<RunStats> remote = run({0, 0});
  for (const RunStats& s : remote) {
    EXPECT_NEAR(static_cast<double>(s.transfers[0].end.count()),
                static_cast<double>(n.queued + moveTime(work, sharedRate)), 1.0);
    EXPECT_EQ(s.dma.hbmBytesByStack, (std::vector<std::int64_t>{tensorBytes, 0, 0, 0}));
  }
  // Each reads its own stack: both at the full rate.
  const std::vector<RunStats> own = run({0, 1});
  for (const RunStats& s : own) {
    EXPECT_EQ(s.transfers[0].end.count(), n.queued + moveTime(work, coreRate));
  }
  EXPECT_EQ(own[1].dma.hbmBytesByStack, (std::vector<std::int64_t>{0, tensorBytes, 0, 0}));
  // Core 0 reads the stack of core 2's pair: core 2, alone on its own stack, is not slowed.
  const std::vector<RunStats> crossed = run({1, 0});
  for (const RunStats& s : crossed) {
    EXPECT_EQ(s.transfers[0].end.count(), n.queued + moveTime(work, coreRate));
  }
}

TEST(DmaTiming, TransferCompletionReleasesTheWaitingEngine) {
  const auto chip = trn2Unthrottled();
  const DmaNumbers n = numbers(*chip);
  const RunStats stats = testing::runTimed(
      tensors(4096) +
          "sp: dma_copy dst=sbuf[0:128]:bf16[[1,2048]] src=hbm:a:bf16[[2048,128],[1,2048]] "
          "signal(s0+=1)\n"
          "dve: tensor_copy dst=sbuf[0:128]+8192:bf16[[1,2048]] src=sbuf[0:128]:bf16[[1,2048]] "
          "wait(s0>=1)\n",
      chip);
  const double work = 128.0 * 4096 + 128 * n.overhead;
  const std::int64_t landed = n.queued + moveTime(work, 16 * n.engineBandwidth);
  const auto copy =
      std::find_if(stats.records.begin(), stats.records.end(),
                   [](const InstructionRecord& r) { return r.engine == isa::Engine::kDve; });
  EXPECT_EQ(copy->start.count(),
            landed + ps(chip->costs.semaphoreOverheadCycles, chip->core.dve.clock));
}

TEST(DmaTiming, PowerThrottleStartsAtHalfSpeedRampsAndRearmsAfterIdle) {
  const auto throttled = testing::trn2();
  const spec::PowerThrottle& pt = throttled->core.pe.powerThrottle;
  ASSERT_TRUE(pt.enabled);
  std::string text;
  const int count = 40;
  for (int i = 0; i < count; ++i) {
    text += fmt::format(
        "pe: nc_matmul dst=psum[0:128]+{}:fp32[[1,512]] stationary=sbuf[0:128]:bf16[[1,128]] "
        "moving=sbuf[0:128]+256:bf16[[1,512]]\n",
        (i % 8) * 2048);
  }
  const std::int64_t base = ps(512, throttled->core.pe.clock);
  // Each matmul runs at the limit in force when it starts: start + (1 - start) * elapsed / ramp.
  std::int64_t now = 0;
  for (int i = 0; i < count; ++i) {
    const double elapsed = std::min(1.0, static_cast<double>(now) / pt.rampTime.count());
    const double limit = pt.startFraction.toDouble() + (1 - pt.startFraction.toDouble()) * elapsed;
    now += static_cast<std::int64_t>(std::ceil(static_cast<double>(base) / limit));
  }
  const RunStats on = testing::runTimed(text, throttled);
  EXPECT_EQ(on.engines[0].busy.count(), now);
  EXPECT_DOUBLE_EQ(on.records.front().throttle, pt.startFraction.toDouble());
  EXPECT_DOUBLE_EQ(on.records.back().throttle, 1.0);
  const RunStats off = testing::runTimed(text, trn2Unthrottled());
  EXPECT_EQ(off.engines[0].busy.count(), count * base);
  // An idle gap longer than window * (1 - threshold) re-arms the throttle.
  const std::int64_t gapCycles =
      (pt.rearmWindow.count() * 12 / 10) * throttled->core.act.clock.count() / 1'000'000'000'000;
  const std::string idle = fmt::format(
      "pe: nc_matmul dst=psum[0:128]:fp32[[1,512]] stationary=sbuf[0:128]:bf16[[1,128]] "
      "moving=sbuf[0:128]+256:bf16[[1,512]]\n"
      "act: activation dst=sbuf[0:128]+8192:fp32[[1,{}]] data=sbuf[0:128]+8192:fp32[[1,{}]] op=exp "
      "signal(s0+=1)\n"
      "pe: nc_matmul dst=psum[0:128]+2048:fp32[[1,512]] stationary=sbuf[0:128]:bf16[[1,128]] "
      "moving=sbuf[0:128]+256:bf16[[1,512]] wait(s0>=1)\n",
      gapCycles, gapCycles);
  const RunStats rearmed = testing::runTimed(idle, throttled);
  ASSERT_EQ(rearmed.records.size(), 3u);
  EXPECT_DOUBLE_EQ(rearmed.records.back().throttle, pt.startFraction.toDouble());
}

}  // namespace
}  // namespace trn::core
