// The limits of a run (issue 13, docs/limits.md), each ending as a clean error or a correct run:
// simulated time past 2^62 ps, device memory committed only when touched, host memory checked up
// front, the instruction limit, and the record limit that bounds trace memory.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <fstream>
#include <string>

#include "timed_run.h"
#include "trn/core/host_memory.h"
#include "trn/runtime/session.h"

namespace trn::core {
namespace {

Result<RunStats> runText(std::string_view text, CoreOptions options) {
  Result<isa::Program> program = isa::parseProgramText(text, "limits.tasm");
  TRN_CHECK(program.ok()) << program.status().toString();
  TRN_ASSIGN_OR_RETURN(auto core, NeuronCore::create(std::move(*program), options));
  return core->run();
}

CoreOptions timed(RunMode mode, std::shared_ptr<const spec::ChipSpec> chip = testing::trn2()) {
  CoreOptions options;
  options.limits = runtime::coreLimits(*chip);
  options.chip = std::move(chip);
  options.mode = mode;
  return options;
}

/// The resident set of this process in bytes (Linux).
std::uint64_t residentBytes() {
  std::ifstream in("/proc/self/statm");
  std::uint64_t pages = 0;
  std::uint64_t resident = 0;
  in >> pages >> resident;
  return resident * 4096;
}

TEST(RunLimits, TimePastTheRepresentableRangeIsAnError) {
  // 64 MiB at 1 B/s: 6.7e7 s = 6.7e19 ps, past 2^62 ps = 4.6e18 ps. It used to wrap and print a
  // negative busy time.
  const auto slow = testing::trn2([](spec::ChipSpec& c) {
    c.hbm.bandwidth = BytesPerSecond(1);
    c.core.dma.engineBandwidth = BytesPerSecond(1);
  });
  const char* text = R"(
.tensor x input fp32 [16777216]
sp: dma_copy dst=sbuf[0:128]:fp32[[1,32768]] src=hbm:x:fp32[[32768,128],[1,32768]] queue=0
)";
  for (const RunMode mode : {RunMode::kFunctionalTiming, RunMode::kTimingOnly}) {
    CoreOptions options = timed(mode, slow);
    const Result<RunStats> r = runText(text, options);
    ASSERT_FALSE(r.ok()) << runModeName(mode);
    EXPECT_EQ(r.status().code(), ErrorCode::kOutOfRange);
    EXPECT_NE(r.status().message().find("simulated time would pass 4611686.018427387904s (53.4 "
                                        "days)"),
              std::string::npos)
        << r.status().message();
  }
}

TEST(RunLimits, TheInstructionThatCrossesTheRangeIsNamed) {
  // A 1 Hz Vector engine: each 57344-element memset costs about 57344 cycles = 5.7e16 ps, so the
  // 81st of the loop's 100 ends past 2^62 ps = 4.6e18 ps.
  const auto slow = testing::trn2([](spec::ChipSpec& c) { c.core.dve.clock = Hertz(1); });
  const char* text = R"(
dve: reg_set reg=0 value=100
dve: memset dst=sbuf[0:128]:fp32[[1,57344]] value=0
dve: reg_add reg=0 value=-1
dve: branch_nz reg=0 target=1
)";
  const Result<RunStats> r = runText(text, timed(RunMode::kTimingOnly, slow));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("dve#1 'memset", 0), 0) << r.status().message();
  EXPECT_NE(r.status().message().find("simulated time would pass"), std::string::npos)
      << r.status().message();
}

TEST(RunLimits, DeviceMemoryIsCommittedOnlyWhenTouched) {
  // A 90 GiB HBM scratch tensor (legal on trn2's 96 GiB) of which the program touches 16 KiB: the
  // run maps it lazily and its resident memory grows by far less than the tensor.
  const char* text = R"(
.tensor big scratch fp32 [24159191040]
.tensor y output fp32 [4096]
sp: dma_copy dst=hbm:big:fp32[[4096,1],[1,4096]] src=hbm:big+1024:fp32[[4096,1],[1,4096]] queue=0 signal(s0+=1)
sp: dma_copy dst=hbm:y:fp32[[4096,1],[1,4096]] src=hbm:big:fp32[[4096,1],[1,4096]] queue=0 wait(s0>=1)
)";
  const std::uint64_t before = residentBytes();
  CoreOptions options = timed(RunMode::kFunctionalTiming);
  options.detectRaces = false;
  const Result<RunStats> r = runText(text, options);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_LT(residentBytes() - std::min(before, residentBytes()), std::uint64_t{256} << 20);
}

TEST(RunLimits, AnInputLargerThanTheHostIsRefusedUpFrontWithItsSize) {
  // A 90 GiB input must be filled in full before the run: more than any test host has free.
  const std::optional<std::uint64_t> available = availableHostMemory();
  if (!available || *available > (std::uint64_t{80} << 30)) {
    GTEST_SKIP() << "the host has more than 80 GiB available";
  }
  const char* text = ".tensor big input fp32 [24159191040]\n"
                     "sp: nop\n";
  const Result<RunStats> r = runText(text, timed(RunMode::kFunctionalOnly));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kOutOfRange);
  EXPECT_NE(r.status().message().find("needs up to 90 GiB of host memory (HBM tensors 90 GiB"),
            std::string::npos)
      << r.status().message();
  // Timing-only mode keeps no values and runs.
  EXPECT_TRUE(runText(text, timed(RunMode::kTimingOnly)).ok());
}

TEST(RunLimits, TheHostMemoryEstimateCountsWhatARunTouches) {
  Result<isa::Program> program = isa::parseProgramText(R"(
.tensor x input fp32 [1048576]
.tensor s scratch fp32 [1048576]
.tensor y output fp32 [1024]
sp: dma_copy dst=hbm:s:fp32[[1024,1],[1,1024]] src=hbm:x:fp32[[1024,1],[1,1024]] queue=0
)",
                                                       "estimate.tasm");
  ASSERT_TRUE(program.ok());
  const HostMemoryNeed need = hostMemoryNeeded(*program, isa::CoreLimits{}, false);
  // Input x in full (4 MiB), output y in full (4 KiB), 4 KiB of scratch s plus a page.
  EXPECT_EQ(need.hbm, 4u * 1048576 + 4096 + 8192);
  EXPECT_EQ(need.onChip, 0u);
  EXPECT_EQ(need.shadow, 0u);
  EXPECT_EQ(need.staging, 2u * 1024 * 4);
  EXPECT_EQ(hostMemoryNeeded(*program, isa::CoreLimits{}, true).shadow, need.hbm);
}

TEST(RunLimits, AnEndlessLoopStopsAtTheInstructionLimit) {
  const char* text = "sp: reg_set reg=0 value=1\nsp: branch_nz reg=0 target=1\n";
  CoreOptions options = timed(RunMode::kTimingOnly);
  options.maxInstructions = 10000;
  const Result<RunStats> r = runText(text, options);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("stopped after 10000 instructions (the limit)"),
            std::string::npos)
      << r.status().message();
}

TEST(RunLimits, RecordsStopAtTheLimitAndTheRestAreCounted) {
  const char* text = "sp: reg_set reg=0 value=100\n"
                     "sp: reg_add reg=0 value=-1\n"
                     "sp: branch_nz reg=0 target=1\n";
  CoreOptions options = timed(RunMode::kTimingOnly);
  options.record = true;
  options.maxRecords = 50;
  const Result<RunStats> r = runText(text, options);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->instructions, 201u);  // reg_set, then 100 x (reg_add, branch_nz)
  EXPECT_EQ(r->records.size(), 50u);
  EXPECT_EQ(r->unrecorded, 151u);
}

TEST(RunLimits, PoisonWithoutDataIsRefused) {
  CoreOptions options = timed(RunMode::kTimingOnly);
  options.poison = true;
  const Result<RunStats> r = runText("sp: nop\n", options);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("poison detection needs data values"), std::string::npos);
}

}  // namespace
}  // namespace trn::core
