// Races on semaphore conditions (wait_race_detector.h): a wait whose outcome depends on timing is
// one verdict, a race, in every mode; a protocol that orders the update after the wait runs in
// every mode; counting semaphores with >= waits are never tracked. Before, the first program below
// completed in the timed modes and deadlocked in functional-only mode.
#include <gtest/gtest.h>

#include "timed_run.h"

namespace trn::core {
namespace {

constexpr std::array<RunMode, 3> kModes = {RunMode::kFunctionalTiming, RunMode::kTimingOnly,
                                           RunMode::kFunctionalOnly};

Result<RunStats> runWith(std::string_view text, RunMode mode, bool detectRaces) {
  Result<isa::Program> program = isa::parseProgramText(text, "wait.tasm");
  TRN_CHECK(program.ok()) << program.status().toString();
  CoreOptions options;
  options.chip = testing::trn2();
  options.limits = runtime::coreLimits(*options.chip);
  options.mode = mode;
  options.detectRaces = detectRaces;
  Result<std::unique_ptr<NeuronCore>> core = NeuronCore::create(std::move(*program), options);
  TRN_CHECK(core.ok()) << core.status().toString();
  return (*core)->run();
}

Status runIn(std::string_view text, RunMode mode) { return runWith(text, mode, true).status(); }

// s0 is 1 from dve#0 until the long memset dve#1 completes; nothing orders dve#1 after act's wait.
constexpr const char* kTransientWindow = R"(
dve: nop signal(s0+=1)
dve: memset dst=sbuf[0:128]:fp32[[1,8192]] value=0 signal(s0+=1)
act: nop wait(s0==1)
)";

TEST(WaitRaces, AnEqualityWaitOnATransientValueIsARaceInEveryMode) {
  for (const RunMode mode : kModes) {
    const Status status = runIn(kTransientWindow, mode);
    ASSERT_FALSE(status.ok()) << runModeName(mode);
    const std::string& message = status.message();
    EXPECT_EQ(message.rfind("race on semaphore s0: act#0 'nop wait(s0==1)'", 0), 0) << message;
    EXPECT_NE(message.find("dve#1 'memset"), std::string::npos) << message;
    EXPECT_NE(message.find("depends on timing"), std::string::npos) << message;
  }
}

TEST(WaitRaces, TheSameProtocolOrderedByASecondSemaphoreRunsInEveryMode) {
  // act acknowledges on s1; dve moves s0 on only after the acknowledgement.
  const char* text = R"(
dve: nop signal(s0+=1)
act: nop wait(s0==1) signal(s1+=1)
dve: memset dst=sbuf[0:128]:fp32[[1,8192]] value=0 wait(s1>=1) signal(s0+=1)
act: nop wait(s0==2)
)";
  for (const RunMode mode : kModes) {
    EXPECT_TRUE(runIn(text, mode).ok()) << runModeName(mode) << ": " << runIn(text, mode).toString();
  }
}

TEST(WaitRaces, AWaitThatMissesAnEarlierWindowIsARace) {
  // pool's wait for s0 == 1 comes after a long memset: the window closed by dve#1 is long gone in
  // the timed modes, but nothing orders it before pool's wait, so another timing would pass.
  const char* text = R"(
dve: nop signal(s0+=1)
dve: nop signal(s0+=1)
pool: memset dst=sbuf[0:128]:fp32[[1,8192]] value=0
pool: nop wait(s0==1)
)";
  for (const RunMode mode : kModes) {
    const Status status = runIn(text, mode);
    ASSERT_FALSE(status.ok()) << runModeName(mode);
    EXPECT_NE(status.message().find("race on semaphore s0: pool#1 'nop wait(s0==1)' waits for "
                                    "s0 == 1, which held until dve#1"),
              std::string::npos)
        << status.message();
  }
}

TEST(WaitRaces, ACreditTakenByTwoConsumersIsARace) {
  // One credit (s0 = 1), two consumers that each take it with a subtraction.
  const char* text = R"(
sp: nop signal(s0=1)
act: nop wait(s0>=1) signal(s0-=1)
dve: nop wait(s0>=1) signal(s0-=1)
)";
  for (const RunMode mode : kModes) {
    const Status status = runIn(text, mode);
    ASSERT_FALSE(status.ok()) << runModeName(mode);
    EXPECT_NE(status.message().find("race on semaphore s0"), std::string::npos)
        << status.message();
  }
}

TEST(WaitRaces, ACreditReturnedBeforeTheNextConsumerIsNotARace) {
  // The first consumer hands the credit on explicitly (s1), so the second's wait is ordered after
  // the subtraction that ended the first window.
  const char* text = R"(
sp: nop signal(s0=1)
act: nop wait(s0>=1) signal(s0-=1)
act: nop signal(s1+=1)
act: nop signal(s0+=1)
dve: nop wait(s1>=1)
dve: nop wait(s0>=1) signal(s0-=1)
)";
  for (const RunMode mode : kModes) {
    EXPECT_TRUE(runIn(text, mode).ok()) << runModeName(mode) << ": " << runIn(text, mode).toString();
  }
}

TEST(WaitRaces, WithoutRaceDetectionTheScheduleDecides) {
  // --allow-races: no check, so the timed run passes the window and the untimed one misses it.
  EXPECT_TRUE(runWith(kTransientWindow, RunMode::kFunctionalTiming, false).ok());
  const Result<RunStats> r = runWith(kTransientWindow, RunMode::kFunctionalOnly, false);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("deadlock"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace trn::core
