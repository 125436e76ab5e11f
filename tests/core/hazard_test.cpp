// Races and deadlocks are errors in every mode (architecture.md "Execution semantics"): racy
// programs are reported with both instructions and the overlapping bytes; the same programs
// ordered by a semaphore, or touching disjoint bytes, run cleanly.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "timed_run.h"

namespace trn::core {
namespace {

constexpr std::array<RunMode, 3> kModes = {RunMode::kFunctionalTiming, RunMode::kTimingOnly,
                                           RunMode::kFunctionalOnly};

Status runIn(std::string_view text, RunMode mode) {
  auto core = testing::makeCore(text, testing::trn2(), mode);
  return core->run().status();
}

TEST(Hazards, UnorderedWriteAndReadFromTwoEnginesIsARaceInEveryMode) {
  const char* text = R"(
act: memset dst=sbuf[0:128]+1024:fp32[[1,64]] value=1.0
dve: tensor_copy dst=sbuf[0:128]+4096:fp32[[1,64]] src=sbuf[0:128]+1152:fp32[[1,64]]
)";
  for (const RunMode mode : kModes) {
    const Status status = runIn(text, mode);
    ASSERT_FALSE(status.ok()) << runModeName(mode);
    const std::string message = status.toString();
    EXPECT_NE(message.find("race"), std::string::npos) << message;
    EXPECT_NE(message.find("act#0 'memset"), std::string::npos) << message;
    EXPECT_NE(message.find("dve#0 'tensor_copy"), std::string::npos) << message;
    // memset writes bytes 1024..1279 and the copy reads 1152..1407: they share 1152..1279.
    EXPECT_NE(message.find("writes sbuf partitions 0..127 bytes 1024..1279"), std::string::npos)
        << message;
    EXPECT_NE(message.find("reads sbuf partitions 0..127 bytes 1152..1407"), std::string::npos)
        << message;
    EXPECT_NE(message.find("overlap at sbuf partitions 0..127 bytes 1152..1279"), std::string::npos)
        << message;
  }
}

TEST(Hazards, ASemaphoreOrdersTheSameAccesses) {
  const char* text = R"(
act: memset dst=sbuf[0:128]+1024:fp32[[1,64]] value=1.0 signal(s0+=1)
dve: tensor_copy dst=sbuf[0:128]+4096:fp32[[1,64]] src=sbuf[0:128]+1152:fp32[[1,64]] wait(s0>=1)
)";
  for (const RunMode mode : kModes) {
    EXPECT_TRUE(runIn(text, mode).ok()) << runModeName(mode);
  }
}

TEST(Hazards, OrderingIsTransitiveThroughAThirdEngine) {
  const char* text = R"(
act: memset dst=sbuf[0:128]:fp32[[1,64]] value=1.0 signal(s0+=1)
pool: nop wait(s0>=1) signal(s1+=1)
dve: tensor_copy dst=sbuf[0:128]+4096:fp32[[1,64]] src=sbuf[0:128]:fp32[[1,64]] wait(s1>=1)
)";
  for (const RunMode mode : kModes) {
    EXPECT_TRUE(runIn(text, mode).ok()) << runModeName(mode);
  }
}

TEST(Hazards, InterleavedStridedWritesOfTwoEnginesDoNotRace) {
  // ACT writes the even fp32 elements, DVE the odd ones: the boxes overlap, the bytes do not.
  const char* text = R"(
act: memset dst=sbuf[0:128]:fp32[[2,32]] value=1.0
dve: memset dst=sbuf[0:128]+4:fp32[[2,32]] value=2.0
)";
  for (const RunMode mode : kModes) {
    EXPECT_TRUE(runIn(text, mode).ok()) << runModeName(mode);
  }
  const char* overlapping = R"(
act: memset dst=sbuf[0:128]:fp32[[2,32]] value=1.0
dve: memset dst=sbuf[0:128]+8:fp32[[2,32]] value=2.0
)";
  EXPECT_FALSE(runIn(overlapping, RunMode::kTimingOnly).ok());
}

TEST(Hazards, DisjointPartitionsDoNotRace) {
  const char* text = R"(
act: memset dst=sbuf[0:64]:fp32[[1,64]] value=1.0
dve: memset dst=sbuf[64:128]:fp32[[1,64]] value=2.0
)";
  EXPECT_TRUE(runIn(text, RunMode::kFunctionalTiming).ok());
}

TEST(Hazards, TwoDmaQueuesWritingOneHbmRangeRace) {
  const char* text = R"(
.tensor c output fp32 [128, 64]
act: memset dst=sbuf[0:128]:fp32[[1,64]] value=1.0 signal(s0+=1)
sp: dma_copy dst=hbm:c:fp32[[64,128],[1,64]] src=sbuf[0:128]:fp32[[1,64]] queue=1 wait(s0>=1)
sp: dma_copy dst=hbm:c:fp32[[64,64],[1,64]] src=sbuf[0:64]:fp32[[1,64]] queue=2
)";
  for (const RunMode mode : kModes) {
    const Status status = runIn(text, mode);
    ASSERT_FALSE(status.ok()) << runModeName(mode);
    EXPECT_NE(status.toString().find("hbm tensor 'c' bytes 0..16383"), std::string::npos)
        << status.toString();
  }
  // On one queue the transfers are ordered (FIFO).
  std::string sameQueue = text;
  sameQueue.replace(sameQueue.find("queue=2"), 7, "queue=1");
  EXPECT_TRUE(runIn(sameQueue, RunMode::kTimingOnly).ok());
}

TEST(Hazards, EightQueuesLoadingDisjointColumnsOfOneCellDoNotRaceAndAnOverlapWithOneDoes) {
  // Eight loads, unordered, write neighbouring 32-byte columns of one 512-byte granule: more
  // agents with live accesses than a cell keeps slots for. An engine write over queue 6's
  // columns, unordered too, races with that load alone.
  std::string text = ".tensor a input fp32 [128, 64]\n";
  for (int q = 0; q < 8; ++q) {
    text += fmt::format(
        "sp: dma_copy dst=sbuf[0:128]+{}:fp32[[1,8]] src=hbm:a:fp32[[64,128],[1,8]] queue={}\n",
        32 * q, q);
  }
  EXPECT_TRUE(runIn(text, RunMode::kTimingOnly).ok());
  const std::string overlapping = text + "act: memset dst=sbuf[0:128]+200:fp32[[1,4]] value=1.0\n";
  for (const RunMode mode : kModes) {
    const Status status = runIn(overlapping, mode);
    ASSERT_FALSE(status.ok()) << runModeName(mode);
    const std::string message = status.toString();
    EXPECT_NE(message.find("sp#6 'dma_copy"), std::string::npos) << message;
    EXPECT_NE(message.find("overlap at sbuf partitions 0..127 bytes 200..215"), std::string::npos)
        << message;
  }
}

TEST(Hazards, ACellFullOfAccessesEveryEngineHasSeenStillCatchesANewRace) {
  // Six loads fill the slots of one granule's cell; both engines then wait for them, and ACT's
  // 40 writes elsewhere let the detector learn that every engine has seen them. A seventh load
  // and an ACT write over its columns, unordered, race; the same write beside them does not.
  std::string text = ".tensor a input fp32 [128, 64]\n";
  for (int q = 0; q < 6; ++q) {
    text += fmt::format(
        "sp: dma_copy dst=sbuf[0:128]+{}:fp32[[1,8]] src=hbm:a:fp32[[64,128],[1,8]] queue={} "
        "signal(s0+=1)\n",
        32 * q, q);
  }
  text += "act: memset dst=sbuf[0:128]+8192:fp32[[1,4]] value=1.0 wait(s0>=6)\n";
  for (int i = 0; i < 40; ++i) {
    text += "act: memset dst=sbuf[0:128]+8192:fp32[[1,4]] value=1.0\n";
  }
  text +=
      "sp: dma_copy dst=sbuf[0:128]+192:fp32[[1,8]] src=hbm:a:fp32[[64,128],[1,8]] queue=6 "
      "wait(s0>=6)\n";
  EXPECT_TRUE(
      runIn(text + "act: memset dst=sbuf[0:128]+224:fp32[[1,4]] value=1.0\n", RunMode::kTimingOnly)
          .ok());
  const Status status =
      runIn(text + "act: memset dst=sbuf[0:128]+200:fp32[[1,4]] value=1.0\n", RunMode::kTimingOnly);
  ASSERT_FALSE(status.ok());
  const std::string message = status.toString();
  EXPECT_NE(message.find("sp#6 'dma_copy"), std::string::npos) << message;
  EXPECT_NE(message.find("act#41 'memset"), std::string::npos) << message;
  EXPECT_NE(message.find("overlap at sbuf partitions 0..127 bytes 200..215"), std::string::npos)
      << message;
}

TEST(Hazards, AnEngineReadingDmaDataBeforeItLandsRaces) {
  const char* text = R"(
.tensor a input fp32 [128, 64]
sp: dma_copy dst=sbuf[0:128]:fp32[[1,64]] src=hbm:a:fp32[[64,128],[1,64]] signal(s0+=1)
dve: tensor_copy dst=sbuf[0:128]+4096:fp32[[1,64]] src=sbuf[0:128]:fp32[[1,64]]
)";
  const Status status = runIn(text, RunMode::kTimingOnly);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.toString().find("sp#0 'dma_copy"), std::string::npos) << status.toString();
}

TEST(Hazards, AnUnorderedWriteBehindAnOrderedOneInTheSameCellIsStillARace) {
  // DVE waits for Pool's write but not for ACT's, a few bytes before it.
  const char* text = R"(
act: memset dst=sbuf[0:128]+64:fp32[[1,16]] value=1.0
pool: memset dst=sbuf[0:128]+128:fp32[[1,16]] value=2.0 signal(s0+=1)
dve: tensor_copy dst=sbuf[0:128]+8192:fp32[[1,48]] src=sbuf[0:128]+64:fp32[[1,48]] wait(s0>=1)
)";
  for (const RunMode mode : kModes) {
    const Status status = runIn(text, mode);
    ASSERT_FALSE(status.ok()) << runModeName(mode);
    const std::string message = status.toString();
    EXPECT_NE(message.find("act#0 'memset"), std::string::npos) << message;
    EXPECT_NE(message.find("overlap at sbuf partitions 0..127 bytes 64..127"), std::string::npos)
        << message;
  }
}

TEST(Hazards, ManyDisjointWritesInOneRegionDoNotRaceAndAnOverlapAmongThemDoes) {
  // Four engines write neighbouring 32-byte columns of partitions 0..31 and 96..127, unordered.
  const char* text = R"(
act: memset dst=sbuf[0:32]+0:fp32[[1,8]] value=1.0
dve: memset dst=sbuf[0:32]+32:fp32[[1,8]] value=1.0
pool: memset dst=sbuf[96:128]+64:fp32[[1,8]] value=1.0
act: memset dst=sbuf[96:128]+96:fp32[[1,8]] value=1.0
dve: memset dst=sbuf[0:32]+128:fp32[[1,8]] value=1.0
)";
  EXPECT_TRUE(runIn(text, RunMode::kTimingOnly).ok());
  std::string overlapping = text;
  overlapping += "pool: tensor_copy dst=sbuf[32:64]:fp32[[1,4]] src=sbuf[96:128]+112:fp32[[1,4]]\n";
  const Status status = runIn(overlapping, RunMode::kTimingOnly);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.toString().find("act#1 'memset"), std::string::npos) << status.toString();
  EXPECT_NE(status.toString().find("overlap at sbuf partitions 96..127 bytes 112..127"),
            std::string::npos)
      << status.toString();
}

TEST(Hazards, InterleavedHbmColumnsOfTwoQueuesDoNotRace) {
  // Queue 1 writes columns 0..15 of every row, queue 2 columns 16..31: no byte is shared.
  const char* text = R"(
.tensor c output fp32 [64, 32]
act: memset dst=sbuf[0:64]:fp32[[1,32]] value=1.0 signal(s0+=1)
sp: dma_copy dst=hbm:c:fp32[[32,64],[1,16]] src=sbuf[0:64]:fp32[[1,16]] queue=1 wait(s0>=1)
sp: dma_copy dst=hbm:c+64:fp32[[32,64],[1,16]] src=sbuf[0:64]+64:fp32[[1,16]] queue=2
)";
  EXPECT_TRUE(runIn(text, RunMode::kTimingOnly).ok());
  std::string overlapping = text;
  overlapping.replace(overlapping.find("hbm:c+64"), 8, "hbm:c+60");
  const Status status = runIn(overlapping, RunMode::kTimingOnly);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.toString().find("overlap at hbm tensor 'c' bytes 60..63"), std::string::npos)
      << status.toString();
}

TEST(Hazards, ARaceWithAnAccessManyInstructionsBackIsFoundWithItsOwnFootprint) {
  // ACT writes bytes 1024..1279 and then 300 disjoint columns while DVE is still busy with a
  // long memset; DVE's unordered read of 1152..1407 then races with ACT's first write, which the
  // scheduler planned (and decoded) long before.
  std::string text = "act: memset dst=sbuf[0:128]+1024:fp32[[1,64]] value=1.0\n";
  for (int k = 0; k < 300; ++k) {
    text += fmt::format("act: memset dst=sbuf[0:128]+{}:fp32[[1,64]] value=1.0\n", 16384 + 256 * (k % 100));
  }
  text += "dve: memset dst=sbuf[0:128]+65536:fp32[[1,16384]] value=0.0\n";
  text += "dve: tensor_copy dst=sbuf[0:128]+4096:fp32[[1,64]] src=sbuf[0:128]+1152:fp32[[1,64]]\n";
  for (const RunMode mode : {RunMode::kFunctionalTiming, RunMode::kTimingOnly}) {
    const Status status = runIn(text, mode);
    ASSERT_FALSE(status.ok()) << runModeName(mode);
    const std::string message = status.toString();
    EXPECT_NE(message.find("act#0 'memset"), std::string::npos) << message;
    EXPECT_NE(message.find("writes sbuf partitions 0..127 bytes 1024..1279"), std::string::npos)
        << message;
    EXPECT_NE(message.find("overlap at sbuf partitions 0..127 bytes 1152..1279"), std::string::npos)
        << message;
  }
}

TEST(Hazards, RaceDetectionCanBeSwitchedOff) {
  auto core = testing::makeCore(R"(
act: memset dst=sbuf[0:128]:fp32[[1,64]] value=1.0
dve: memset dst=sbuf[0:128]:fp32[[1,64]] value=2.0
)",
                                testing::trn2(), RunMode::kTimingOnly);
  EXPECT_FALSE(core->run().ok());
  CoreOptions lenient = core->options();
  lenient.detectRaces = false;
  auto again = NeuronCore::create(core->program(), lenient);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE((*again)->run().ok());
}

TEST(Hazards, ImpossibleConfigurationsAreErrors) {
  Result<isa::Program> program = isa::parseProgramText("sp: nop\n", "t.tasm");
  ASSERT_TRUE(program.ok());
  const auto chip = testing::trn2();
  CoreOptions options;
  options.limits = runtime::coreLimits(*chip);
  options.chip = chip;
  options.mode = RunMode::kTimingOnly;
  options.physicalCore = 8;
  const auto noCore = NeuronCore::create(*program, options);
  ASSERT_FALSE(noCore.ok());
  EXPECT_NE(noCore.status().toString().find("physical core 8 does not exist"), std::string::npos);
  options.physicalCore = 0;
  options.limits.dmaQueues = 64;
  const auto tooManyQueues = NeuronCore::create(*program, options);
  ASSERT_FALSE(tooManyQueues.ok());
  EXPECT_NE(tooManyQueues.status().toString().find("--allow-races"), std::string::npos);
  options.detectRaces = false;
  EXPECT_TRUE(NeuronCore::create(*program, options).ok());
  options.chip = nullptr;
  const auto noChip = NeuronCore::create(*program, options);
  ASSERT_FALSE(noChip.ok());
  EXPECT_NE(noChip.status().toString().find("needs a chip description"), std::string::npos);
}

TEST(Hazards, DeadlockListsEveryPendingWaitInEveryMode) {
  const char* text = R"(
act: nop wait(s0>=1) signal(s1+=1)
dve: nop wait(s1>=1) signal(s0+=1)
pe: nop
)";
  for (const RunMode mode : kModes) {
    const Status status = runIn(text, mode);
    ASSERT_FALSE(status.ok()) << runModeName(mode);
    const std::string message = status.toString();
    EXPECT_NE(message.find("deadlock"), std::string::npos) << message;
    EXPECT_NE(message.find("act#0 'nop wait(s0>=1) signal(s1+=1)' waits for s0 >= 1 (s0 = 0)"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("dve#0 'nop wait(s1>=1) signal(s0+=1)' waits for s1 >= 1 (s1 = 0)"),
              std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace trn::core
