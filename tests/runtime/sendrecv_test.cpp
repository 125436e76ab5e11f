// sendrecv between the two cores of an LNC=2 pair: the tiles are swapped (in the data modes, in
// one coupled run), the exchange completes a DMA fixed cost plus the tiles' crossing time after
// the later core arrives (derived by hand), a partner that never comes is a deadlock that names
// the sendrecv, and a core without a partner, tiles outside SBUF or tiles that differ between
// the cores are errors.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "chip_test_programs.h"

namespace trn::runtime {
namespace {

using testing::kTensors;
using testing::program;
using testing::timingOnly;
using testing::trn2;

/// Loads rows [first, first + 64) of x into SBUF, sends them to the peer, and stores the tile it
/// receives into the same rows of y.
std::string swapRows(int first) {
  return fmt::format(
      "{0}sp: dma_copy dst=sbuf[0:64]:fp32[[1,64]] src=hbm:x+{1}:fp32[[64,64],[1,64]] "
      "signal(s0+=1)\n"
      "pool: sendrecv dst=sbuf[0:64]+256:fp32[[1,64]] src=sbuf[0:64]:fp32[[1,64]] wait(s0>=1) "
      "signal(s1+=1)\n"
      "sp: dma_copy dst=hbm:y+{1}:fp32[[64,64],[1,64]] src=sbuf[0:64]+256:fp32[[1,64]] "
      "wait(s1>=1)\n",
      kTensors, first * 64 * 4);
}

TEST(SendRecv, TheTwoCoresOfAPairSwapTheirTiles) {
  const Session session = trn2();
  std::vector<float> values(128 * 64);
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<float>(i) * 0.25f - 7.0f;
  }
  const NpyArray x = floatArray({128, 64}, values);
  // y holds x with its two halves of rows swapped.
  std::vector<float> swapped(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    swapped[i] = values[(i + values.size() / 2) % values.size()];
  }
  const NpyArray want = floatArray({128, 64}, swapped);
  const std::vector<CoreProgram> cores = {{program(swapRows(0)), 0}, {program(swapRows(64)), 1}};
  for (const core::RunMode mode :
       {core::RunMode::kFunctionalTiming, core::RunMode::kFunctionalOnly}) {
    RunOptions options;
    options.lnc = 2;
    options.mode = mode;
    const std::vector<TensorInput> in = {{"x", &x, "x"}};
    const std::vector<TensorOutput> out = {{"y", std::nullopt}};
    Result<RunResult> r = session.runCores(cores, in, out, options);
    ASSERT_TRUE(r.ok()) << r.status().toString();
    EXPECT_EQ(r->outputs[0].data, want.data) << core::runModeName(mode);
  }
}

TEST(SendRecv, CompletesAFixedDmaCostAndTheCrossingAfterTheLaterCoreArrives) {
  const Session session = trn2();
  const spec::ChipSpec& chip = session.chip();
  // Core 0's sendrecv is its first instruction: it arrives at 0. Core 1's waits for a load, so
  // core 1 arrives later, when it sees the load's semaphore.
  const std::string exchange =
      "pool: sendrecv dst=sbuf[0:64]+256:fp32[[1,64]] src=sbuf[0:64]:fp32[[1,64]]";
  const std::vector<CoreProgram> cores = {
      {program(kTensors + exchange + "\n"), 0},
      {program(kTensors +
               "sp: dma_copy dst=sbuf[0:64]:fp32[[1,64]] src=hbm:x:fp32[[64,64],[1,64]] "
               "signal(s0+=1)\n" +
               exchange + " wait(s0>=1)\n"),
       1}};
  RunOptions options = timingOnly(2);
  options.record = true;
  Result<RunResult> r = session.runCores(cores, {}, {}, options);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  auto exchangeStart = [](const core::RunStats& s) {
    for (const core::InstructionRecord& rec : s.records) {
      if (rec.engine == isa::Engine::kPool) {
        return rec.start.count();
      }
    }
    ADD_FAILURE() << "no sendrecv record";
    return std::int64_t{0};
  };
  const std::int64_t semaphore =
      (chip.costs.semaphoreOverheadCycles * 1'000'000'000'000 + chip.core.pool.clock.count() - 1) /
      chip.core.pool.clock.count();
  ASSERT_EQ(r->cores[1].transfers.size(), 1u);
  const std::int64_t lastArrival = r->cores[1].transfers[0].end.count() + semaphore;
  // Each 64-partition tile of 256 bytes per partition crosses as 64 descriptors on all 16 engines
  // of a core, each descriptor paying the overhead-bound size (dma_model.h).
  const double work =
      64.0 * 256 + 64.0 * static_cast<double>(chip.core.dma.efficiency.overheadBoundBelow.count());
  const double rate = 16.0 * static_cast<double>(chip.core.dma.engineBandwidth.count());
  const double crossing = std::ceil(work * 1e12 / rate);
  const double done = static_cast<double>(lastArrival + chip.core.dma.fixedCost.count()) + crossing;
  for (const core::RunStats& s : r->cores) {
    EXPECT_NEAR(static_cast<double>(exchangeStart(s)), done + static_cast<double>(semaphore), 1.0);
  }
}

TEST(SendRecv, APartnerThatNeverComesIsADeadlockNamingTheSendrecv) {
  const Session session = trn2();
  const RunOptions options = timingOnly(2);
  const std::vector<CoreProgram> cores = {
      {program(kTensors +
               "pool: sendrecv dst=sbuf[0:64]+256:fp32[[1,64]] src=sbuf[0:64]:fp32[[1,64]]\n"),
       0},
      {program(kTensors + "pool: nop\n"), 1}};
  Result<RunResult> r = session.runCores(cores, {}, {}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("deadlock"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(
                "waits at sendrecv 1 for the other core of its pair, which never reaches it"),
            std::string::npos)
      << r.status().message();
}

TEST(SendRecv, ACoreWithoutAPartnerTilesOutsideSbufAndMismatchedTilesAreErrors) {
  const Session session = trn2();
  RunOptions options = timingOnly(1);
  const std::string exchange =
      "pool: sendrecv dst=sbuf[0:64]+256:fp32[[1,64]] src=sbuf[0:64]:fp32[[1,64]]\n";
  Result<RunResult> alone = session.runCores(
      std::vector<CoreProgram>{{program(kTensors + exchange), 0}}, {}, {}, options);
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.status().message().find("sendrecv exchanges tiles with the other core of an "
                                          "LNC=2 pair, but this logical core runs 1 core(s) here"),
            std::string::npos)
      << alone.status().message();

  const auto hbm = program(
      kTensors + "pool: sendrecv dst=hbm:y:fp32[[64,64],[1,64]] src=sbuf[0:64]:fp32[[1,64]]\n");
  Result<RunResult> outside = session.runCores(std::vector<CoreProgram>{{hbm, 0}}, {}, {}, options);
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find("operand 'dst': the pool engine cannot access HBM"),
            std::string::npos)
      << outside.status().message();

  options.lnc = 2;
  const std::vector<CoreProgram> mismatched = {
      {program(kTensors + exchange), 0},
      {program(kTensors +
               "pool: sendrecv dst=sbuf[0:64]+256:fp32[[1,32]] src=sbuf[0:64]:fp32[[1,32]]\n"),
       1}};
  Result<RunResult> r = session.runCores(mismatched, {}, {}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("sendrecv tiles do not match between the cores: 4096 fp32 "
                                      "elements go to 2048 fp32 elements"),
            std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace trn::runtime
