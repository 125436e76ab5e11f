// The critical path of two cores of an LNC=2 pair run together, through their core_barrier and
// sendrecv: a hand-built program where the path must cross from one core to the other, checked
// instruction by instruction and against the chip file's barrier latency (docs/chip.md: the
// early core is released a DMA fixed cost plus its semaphore overhead after the last arrival).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "trn/isa/program_text.h"
#include "trn/profile/critical_path.h"
#include "trn/profile/page_data.h"
#include "trn/runtime/session.h"

namespace trn::profile {
namespace {

const std::string kTensors = ".tensor x input fp32 [128, 64]\n";

std::shared_ptr<const isa::Program> programOf(const std::string& text) {
  Result<isa::Program> p = isa::parseProgramText(kTensors + text, "pair.tasm");
  TRN_CHECK(p.ok()) << p.status().toString();
  return std::make_shared<const isa::Program>(std::move(*p));
}

struct PairRun {
  runtime::RunResult result;
  std::vector<std::shared_ptr<const isa::Program>> programs;
  spec::ChipSpec chip;
};

/// Runs `first` on core 0 and `second` on core 1 as one logical core (timing only, recorded).
PairRun runPair(const std::string& first, const std::string& second) {
  Result<runtime::Session> session = runtime::Session::open("trn2");
  TRN_CHECK(session.ok()) << session.status().toString();
  PairRun run;
  run.programs = {programOf(first), programOf(second)};
  run.chip = session->chip();
  runtime::RunOptions options;
  options.lnc = 2;
  options.mode = core::RunMode::kTimingOnly;
  options.poison = false;
  options.record = true;
  const std::vector<runtime::CoreProgram> cores = {{run.programs[0], 0}, {run.programs[1], 1}};
  Result<runtime::RunResult> r = session->runCores(cores, {}, {}, options);
  TRN_CHECK(r.ok()) << r.status().toString();
  run.result = std::move(*r);
  return run;
}

CriticalPath pathOf(const PairRun& run) {
  const std::vector<const isa::Program*> programs = {run.programs[0].get(),
                                                     run.programs[1].get()};
  const std::vector<const core::RunStats*> cores = {&run.result.cores[0], &run.result.cores[1]};
  Result<CriticalPath> path = findCriticalPath(programs, cores);
  EXPECT_TRUE(path.ok()) << path.status().toString();
  return std::move(*path);
}

/// "core.engine#record cause" per segment, to compare a path with the expected one.
std::vector<std::string> steps(const CriticalPath& path) {
  std::vector<std::string> out;
  for (const PathSegment& s : path.segments) {
    out.push_back(fmt::format("{}.{}#{} {}", s.core, isa::engineName(s.engine), s.record,
                              pathCauseName(s.cause)));
  }
  return out;
}

/// The semaphore overhead of an engine at `clock`, in ps (rounded up, as the model does).
std::int64_t semaphoreOverhead(const spec::ChipSpec& chip, Hertz clock) {
  return (chip.costs.semaphoreOverheadCycles * 1'000'000'000'000 + clock.count() - 1) /
         clock.count();
}

void expectTiling(const CriticalPath& path) {
  ASSERT_FALSE(path.segments.empty());
  EXPECT_EQ(path.segments.front().start.count(), 0);
  EXPECT_EQ(path.segments.back().end, path.length);
  for (std::size_t i = 1; i < path.segments.size(); ++i) {
    EXPECT_EQ(path.segments[i].start, path.segments[i - 1].end) << i;
  }
}

// Core 0 loads 32 KiB and then reaches the barrier; core 1 is at the barrier at once and runs an
// activation after it. The run ends with core 1's activation, but what it waited for is core 0's
// load: the path goes activation <- core 1's barrier <- (cross-core) core 0's barrier <- the
// load's transfer <- its trigger.
TEST(CrossCorePath, ABarrierLeadsThePathToTheLastCoreToArrive) {
  const PairRun run = runPair(
      "sp: dma_copy dst=sbuf[0:128]:fp32[[1,64]] src=hbm:x:fp32[[64,128],[1,64]] signal(s0+=1)\n"
      "pool: core_barrier wait(s0>=1)\n",
      "pool: core_barrier signal(s1+=1)\n"
      "act: activation dst=sbuf[0:128]+256:fp32[[1,64]] data=sbuf[0:128]:fp32[[1,64]] op=gelu "
      "wait(s1>=1)\n");
  const CriticalPath path = pathOf(run);
  expectTiling(path);
  const core::RunStats& late = run.result.cores[1];
  EXPECT_EQ(path.length, late.total);
  EXPECT_EQ(steps(path), (std::vector<std::string>{
                             "0.pe#-1 dispatch",     // before the trigger
                             "0.sp#0 dma issue",     // fixed cost and descriptors
                             "0.sp#0 dma data",      // the 32 KiB moving
                             "0.pool#1 semaphore",   // core 0's barrier sees s0 and arrives
                             "1.pool#0 cross-core",  // the remote semaphore write
                             "1.pool#0 compute",     // core 1's barrier
                             "1.pool#0 completion",
                             "1.act#1 semaphore",  // the activation sees s1
                             "1.act#1 compute",
                             "1.act#1 completion"}));
  EXPECT_EQ(path.crossings, 1);
  EXPECT_EQ(path.transfers, 1);
  // Core 0 arrives at its barrier when its wait holds; core 1 is released a DMA fixed cost plus
  // pool's semaphore overhead later.
  const core::InstructionRecord& arrival = run.result.cores[0].records[1];
  const core::InstructionRecord& released = late.records[0];
  EXPECT_EQ(path.crossCore.count(),
            run.chip.core.dma.fixedCost.count() +
                semaphoreOverhead(run.chip, run.chip.core.pool.clock));
  EXPECT_EQ(released.start - path.crossCore, arrival.start);
  EXPECT_EQ(arrival.start - run.result.cores[0].transfers[0].end,
            Picoseconds(semaphoreOverhead(run.chip, run.chip.core.pool.clock)));

  // Core 1's own path stops at its core: its barrier's wait is "dispatch" from time 0.
  Result<CriticalPath> alone = findCriticalPath(*run.programs[1], late);
  ASSERT_TRUE(alone.ok()) << alone.status().toString();
  EXPECT_EQ(alone->transfers, 0);
  EXPECT_EQ(alone->crossings, 0);
  EXPECT_EQ(alone->segments.front().cause, PathCause::kDispatch);
  EXPECT_EQ(alone->segments.front().end, released.start);
}

// The same hand-off through a sendrecv: core 0 arrives after its load, core 1 at once; both
// finish together a fixed cost and the tiles' crossing after core 0's arrival, and the path
// from core 1's activation crosses to core 0's load.
TEST(CrossCorePath, ASendrecvLeadsThePathToTheLaterCore) {
  const std::string exchange =
      "pool: sendrecv dst=sbuf[0:64]+512:fp32[[1,64]] src=sbuf[0:64]+768:fp32[[1,64]]";
  const PairRun run = runPair(
      "sp: dma_copy dst=sbuf[0:128]:fp32[[1,64]] src=hbm:x:fp32[[64,128],[1,64]] signal(s0+=1)\n" +
          exchange + " wait(s0>=1)\n",
      exchange + " signal(s1+=1)\n"
      "act: activation dst=sbuf[0:128]+256:fp32[[1,64]] data=sbuf[0:128]:fp32[[1,64]] op=gelu "
      "wait(s1>=1)\n");
  const CriticalPath path = pathOf(run);
  expectTiling(path);
  EXPECT_EQ(path.length, run.result.cores[1].total);
  EXPECT_EQ(steps(path), (std::vector<std::string>{
                             "0.pe#-1 dispatch", "0.sp#0 dma issue", "0.sp#0 dma data",
                             "1.pool#0 cross-core", "1.pool#0 compute", "1.pool#0 completion",
                             "1.act#1 semaphore", "1.act#1 compute", "1.act#1 completion"}));
  EXPECT_EQ(path.crossings, 1);
  // From core 0's load landing to core 1's release: core 0 seeing s0, the handshake, the
  // crossing and core 1 seeing the end (the records do not separate these).
  EXPECT_EQ(run.result.cores[1].records[0].start - path.crossCore,
            run.result.cores[0].transfers[0].end);
  EXPECT_GT(path.crossCore.count(), run.chip.core.dma.fixedCost.count() +
                                        2 * semaphoreOverhead(run.chip, run.chip.core.pool.clock));
}

// The report of the pair: core 0's load is outlined as critical though the run ends on core 1,
// and one red arrow goes from core 0's pool (its barrier's arrival) to core 1's pool (the
// release), one cross-core stretch later.
TEST(CrossCorePath, TheReportOutlinesThePathAcrossThePair) {
  const PairRun run = runPair(
      "sp: dma_copy dst=sbuf[0:128]:fp32[[1,64]] src=hbm:x:fp32[[64,128],[1,64]] signal(s0+=1)\n"
      "pool: core_barrier wait(s0>=1)\n",
      "pool: core_barrier signal(s1+=1)\n"
      "act: activation dst=sbuf[0:128]+256:fp32[[1,64]] data=sbuf[0:128]:fp32[[1,64]] op=gelu "
      "wait(s1>=1)\n");
  const std::vector<PageRun> runs = {
      {"core 0", "core 0", run.programs[0].get(), &run.result.cores[0], {}},
      {"core 1", "core 1", run.programs[1].get(), &run.result.cores[1], {}}};
  Result<nlohmann::ordered_json> page = makePageData(runs, run.chip);
  ASSERT_TRUE(page.ok()) << page.status().toString();
  const auto& tracks = (*page)["tracks"];
  auto trackNamed = [&](const std::string& name) {
    for (std::size_t t = 0; t < tracks.size(); ++t) {
      if (tracks[t]["name"] == name) {
        return static_cast<int>(t);
      }
    }
    ADD_FAILURE() << "no track " << name;
    return -1;
  };
  const auto& slices = (*page)["slices"];
  const int queue = trackNamed("core 0 \u00b7 dma q0");
  int criticalOnQueue = 0;
  for (std::size_t i = 0; i < slices["track"].size(); ++i) {
    criticalOnQueue += slices["track"][i] == queue && slices["critical"][i] == 1 ? 1 : 0;
  }
  EXPECT_EQ(criticalOnQueue, 1);
  const CriticalPath path = pathOf(run);
  int crossing = 0;
  for (const auto& arrow : (*page)["arrows"]) {
    if (arrow[0] == trackNamed("core 0 \u00b7 pool") && arrow[2] == trackNamed("core 1 \u00b7 pool")) {
      ++crossing;
      EXPECT_EQ(arrow[4], 1);
      EXPECT_NEAR(arrow[3].get<double>() - arrow[1].get<double>(),
                  static_cast<double>(path.crossCore.count()) / 1e3, 1e-3);
    }
  }
  EXPECT_EQ(crossing, 1);
}

TEST(CrossCorePath, MismatchedSpansAreAnError) {
  const std::vector<const isa::Program*> none;
  const core::RunStats stats;
  const std::vector<const core::RunStats*> one = {&stats};
  const Result<CriticalPath> path = findCriticalPath(none, one);
  ASSERT_FALSE(path.ok());
  EXPECT_EQ(path.status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace trn::profile
