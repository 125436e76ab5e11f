// Dependencies and the critical path on hand-made records of a three-step chain: a load, a
// matmul waiting for it, an activation waiting for the matmul.
#include "trn/profile/critical_path.h"

#include <gtest/gtest.h>

#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "trn/isa/program_text.h"
#include "trn/profile/memory_use.h"

namespace trn::profile {
namespace {

constexpr std::string_view kChain = R"(
.tensor a input bf16 [128, 128]
sp:  dma_copy dst=sbuf[0:128]:bf16[[1,128]] src=hbm:a:bf16[[128,128],[1,128]] queue=0 signal(s0+=1) loc=k.cpp:10
pe:  nc_matmul dst=psum[0:128]:fp32[[1,128]] stationary=sbuf[0:128]:bf16[[1,128]] moving=sbuf[0:128]:bf16[[1,128]] wait(s0>=1) signal(s1+=1) loc=k.cpp:11
act: activation dst=sbuf[0:128]+256:fp32[[1,128]] data=psum[0:128]:fp32[[1,128]] op=gelu wait(s1>=1) loc=k.cpp:12
)";

Picoseconds ns(std::int64_t n) { return Picoseconds(n * 1000); }

core::InstructionRecord record(isa::Engine engine, std::int64_t start, std::int64_t end,
                               std::int64_t complete) {
  core::InstructionRecord r;
  r.engine = engine;
  r.ready = ns(0);
  r.start = ns(start);
  r.end = ns(end);
  r.complete = ns(complete);
  return r;
}

struct Fixture {
  isa::Program program;
  core::RunStats stats;
};

Fixture chain() {
  Result<isa::Program> program = isa::parseProgramText(kChain, "chain.tasm");
  TRN_CHECK(program.ok()) << program.status().toString();
  Fixture f{std::move(program).value(), {}};
  f.stats.mode = core::RunMode::kTimingOnly;
  f.stats.total = ns(2050);
  f.stats.records = {record(isa::Engine::kSp, 0, 10, 10),
                     record(isa::Engine::kPe, 1560, 1773, 1800),
                     record(isa::Engine::kAct, 1850, 2000, 2050)};
  core::TransferRecord t;
  t.instruction = 0;
  t.issued = ns(0);
  t.start = ns(1300);
  t.end = ns(1500);
  t.bytes = 32768;
  f.stats.transfers = {t};
  return f;
}

TEST(Dependencies, EachWaitIsReleasedByTheUpdateThatMadeItHold) {
  const Fixture f = chain();
  Result<std::vector<Dependency>> deps = findDependencies(f.program, f.stats);
  ASSERT_TRUE(deps.ok()) << deps.status().toString();
  ASSERT_EQ(deps->size(), 2U);
  // The load's update lands with its last byte (1500 ns), not when the trigger completed.
  EXPECT_EQ((*deps)[0].fromTransfer, 0);
  EXPECT_EQ((*deps)[0].fromRecord, 0);
  EXPECT_EQ((*deps)[0].to, 1);
  EXPECT_EQ((*deps)[0].signalled, ns(1500));
  EXPECT_TRUE((*deps)[0].blocked);
  EXPECT_EQ((*deps)[1].fromTransfer, -1);
  EXPECT_EQ((*deps)[1].fromRecord, 1);
  EXPECT_EQ((*deps)[1].to, 2);
  EXPECT_EQ((*deps)[1].signalled, ns(1800));
  EXPECT_EQ((*deps)[1].semaphore, 1);
}

TEST(CriticalPath, WalksBackThroughEveryHandOff) {
  const Fixture f = chain();
  Result<CriticalPath> path = findCriticalPath(f.program, f.stats);
  ASSERT_TRUE(path.ok()) << path.status().toString();
  // 0..1300 issue, ..1500 data, ..1560 semaphore, ..1773 pe, ..1800 completion, ..1850
  // semaphore, ..2000 act, ..2050 completion.
  ASSERT_EQ(path->segments.size(), 8U);
  EXPECT_EQ(path->length, ns(2050));
  EXPECT_EQ(path->dmaIssue, ns(1300));
  EXPECT_EQ(path->dmaData, ns(200));
  EXPECT_EQ(path->semaphore, ns(60 + 50));
  EXPECT_EQ(path->compute[0], ns(213));
  EXPECT_EQ(path->compute[1], ns(150));
  EXPECT_EQ(path->completion, ns(27 + 50));
  EXPECT_EQ(path->dispatch, ns(0));
  EXPECT_EQ(path->handoffs, 2);
  EXPECT_EQ(path->transfers, 1);
  EXPECT_EQ(path->segments.front().cause, PathCause::kDmaIssue);
  EXPECT_EQ(path->segments.back().cause, PathCause::kCompletion);
  EXPECT_EQ(path->segments.back().record, 2);
}

TEST(CriticalPath, AWaitThatAlreadyHeldFollowsTheEngine) {
  Fixture f = chain();
  // The activation reaches its wait at 1900, after the matmul's update: program order on ACT
  // (nothing before it) leaves the path at its start, after the dispatch gap from 0.
  f.stats.records[2].ready = ns(1900);
  f.stats.records[2].start = ns(1900);
  f.stats.records[2].end = ns(2000);
  Result<CriticalPath> path = findCriticalPath(f.program, f.stats);
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(path->handoffs, 0);
  EXPECT_EQ(path->compute[1], ns(100));
  EXPECT_EQ(path->dispatch, ns(1900));
}

TEST(CriticalPath, ARecordOutsideTheProgramIsAnError) {
  Fixture f = chain();
  f.stats.records[1].index = 7;
  const Result<CriticalPath> path = findCriticalPath(f.program, f.stats);
  ASSERT_FALSE(path.ok());
  EXPECT_NE(path.status().message().find("record 1"), std::string::npos);
}

// The load fills SBUF bytes 0..255 of 128 partitions while its data moves (1300 ns) and they
// stay in use until the matmul's last read (1773 ns); the matmul's PSUM tile (512 B x 128) is
// in use from its start (1560) to the GELU's end (2000), the GELU's output (512 B x 128) from
// 1850 to 2000.
TEST(MemoryUse, RegionsLiveFromWriteToLastUse) {
  const Fixture f = chain();
  Result<MemoryUse> use = memoryUse(f.program, f.stats);
  ASSERT_TRUE(use.ok()) << use.status().toString();
  const std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> expected = {
      {1300, 32768, 0}, {1560, 32768, 65536}, {1773, 0, 65536}, {1850, 65536, 65536},
      {2000, 0, 0}};
  ASSERT_EQ(use->samples.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(use->samples[i].time, ns(std::get<0>(expected[i]))) << i;
    EXPECT_EQ(use->samples[i].sbufBytes, std::get<1>(expected[i])) << i;
    EXPECT_EQ(use->samples[i].psumBytes, std::get<2>(expected[i])) << i;
  }
  EXPECT_EQ(use->sbufPeak, 65536);
  EXPECT_EQ(use->psumPeak, 65536);
  // Four bins of 512.5 ns: the largest use in each.
  const auto bins = peakPerBin(*use, ns(2050), 4);
  ASSERT_EQ(bins.size(), 4U);
  using Bin = std::pair<std::int64_t, std::int64_t>;
  EXPECT_EQ(bins[0], Bin(0, 0));
  EXPECT_EQ(bins[2], Bin(32768, 0));  // 1025..1537.5 ns: the load only
  EXPECT_EQ(bins[3], Bin(65536, 65536));
}

TEST(CriticalPath, NoRecordsGiveAnEmptyPath) {
  Fixture f = chain();
  f.stats.records.clear();
  f.stats.transfers.clear();
  Result<CriticalPath> path = findCriticalPath(f.program, f.stats);
  ASSERT_TRUE(path.ok());
  EXPECT_TRUE(path->segments.empty());
}

}  // namespace
}  // namespace trn::profile
