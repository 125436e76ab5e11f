// The HTML report's data and page, on hand-made records of a small program: tracks, slices,
// arrows, hot lines, bandwidth, aggregation past the slice cap, relative source paths, and a
// page that holds everything it needs (no network) with the data safely inside its script.
#include "trn/profile/html_report.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "trn/isa/program_text.h"
#include "trn/profile/source_paths.h"
#include "trn/spec/chip_spec.h"
#include "trn/spec/loader.h"

namespace trn::profile {
namespace {

using Json = nlohmann::ordered_json;

// The load lands, the matmul waits for it, the activation for the matmul.
constexpr std::string_view kProgram = R"(
.tensor a input bf16 [128, 128]
sp:  dma_copy dst=sbuf[0:128]:bf16[[1,128]] src=hbm:a:bf16[[128,128],[1,128]] queue=2 signal(s0+=1) loc=/proj/src/k.cpp:10
pe:  nc_matmul dst=psum[0:128]:fp32[[1,128]] stationary=sbuf[0:128]:bf16[[1,128]] moving=sbuf[0:128]:bf16[[1,128]] wait(s0>=1) signal(s1+=1) loc=/proj/src/k.cpp:11
act: activation dst=sbuf[0:128]+256:fp32[[1,128]] data=psum[0:128]:fp32[[1,128]] op=gelu wait(s1>=1) loc=/proj/src/k.cpp:12
)";

Picoseconds ns(std::int64_t n) { return Picoseconds(n * 1000); }

core::InstructionRecord record(isa::Engine engine, std::int64_t start, std::int64_t end) {
  core::InstructionRecord r;
  r.engine = engine;
  r.start = ns(start);
  r.end = ns(end);
  r.complete = ns(end + 20);
  r.cycles = 100;
  return r;
}

struct Fixture {
  isa::Program program;
  core::RunStats stats;
  spec::ChipSpec chip;
};

Fixture fixture() {
  Result<isa::Program> program = isa::parseProgramText(kProgram, "k.tasm");
  TRN_CHECK(program.ok()) << program.status().toString();
  Result<spec::ChipSpec> chip = spec::loadChip("trn2");
  TRN_CHECK(chip.ok()) << chip.status().toString();
  Fixture f{std::move(program).value(), {}, std::move(chip).value()};
  f.stats.mode = core::RunMode::kTimingOnly;
  f.stats.instructions = 3;
  f.stats.total = ns(2000);
  f.stats.records = {record(isa::Engine::kSp, 0, 50), record(isa::Engine::kPe, 1600, 1800),
                     record(isa::Engine::kAct, 1850, 1960)};
  core::TransferRecord t;
  t.queue = 2;
  t.issued = ns(0);
  t.start = ns(1300);
  t.end = ns(1500);
  t.bytes = 200 * 1000;  // 1000 B/ns = 1000 GB/s over 200 ns
  t.descriptors = 128;
  t.efficiency = 1;
  f.stats.transfers = {t};
  f.stats.dma.transfers = 1;
  f.stats.dma.bytes = t.bytes;
  f.stats.dma.descriptors = 128;
  return f;
}

TEST(PageData, TracksSlicesArrowsAndLines) {
  const Fixture f = fixture();
  PageSummary summary;
  Result<Json> page =
      makePageData({{"core 0", "", &f.program, &f.stats, {}}}, f.chip, {}, &summary);
  ASSERT_TRUE(page.ok()) << page.status().toString();
  const Json& p = *page;
  // Engines that ran, in engine order, then the queue.
  ASSERT_EQ(p["tracks"].size(), 4U);
  EXPECT_EQ(p["tracks"][0]["name"], "pe");
  EXPECT_EQ(p["tracks"][1]["name"], "act");
  EXPECT_EQ(p["tracks"][2]["name"], "sp");
  EXPECT_EQ(p["tracks"][3]["name"], "dma q2");
  // Three instructions and one transfer, none merged.
  EXPECT_EQ(summary.slices, 4U);
  EXPECT_EQ(summary.aggregated, 0U);
  EXPECT_EQ(p["slices"]["track"].size(), 4U);
  // Two hand-offs: the transfer to the matmul, the matmul to the activation; both on the path.
  ASSERT_EQ(p["arrows"].size(), 2U);
  EXPECT_EQ(p["arrows"][0], Json::array({3, 1500.0, 0, 1600.0, 1}));
  EXPECT_EQ(p["arrows"][1], Json::array({0, 1820.0, 1, 1850.0, 1}));
  // Source lines relative to the common directory (no .git above /proj), busiest first: the
  // load's line holds its 200 ns of data movement and its 50 ns trigger.
  ASSERT_EQ(p["lines"].size(), 3U);
  EXPECT_EQ(p["source_root"], "/proj/src/");
  EXPECT_EQ(p["lines"][0]["location"], "k.cpp:10");
  EXPECT_DOUBLE_EQ(p["lines"][0]["total_ns"].get<double>(), 250.0);
  EXPECT_EQ(p["lines"][1]["location"], "k.cpp:11");
  EXPECT_DOUBLE_EQ(p["lines"][1]["share"].get<double>(), 200.0 / 560.0);
  // The instruction table follows the slices, PE track first.
  EXPECT_EQ(p["instrs"][0][4], "k.cpp:11");
  // 240 bins of 2000/240 ns; the transfer's 1000 GB/s fills the bins inside 1300..1500 ns.
  const Json& bw = p["bandwidth"];
  EXPECT_EQ(bw["gbps"].size(), 240U);
  EXPECT_DOUBLE_EQ(bw["gbps"][170].get<double>(), 1000.0);
  EXPECT_DOUBLE_EQ(bw["gbps"][100].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(bw["peak_gbps"].get<double>(), 368.0);
  ASSERT_EQ(summary.verdicts.size(), 1U);
  EXPECT_EQ(p["runs"][0]["verdict"]["bound"], "latency-bound");
  EXPECT_EQ(p["runs"][0]["path"]["handoffs"], 2);
}

TEST(PageData, PastTheCapSlicesMerge) {
  Fixture f = fixture();
  f.stats.records.clear();
  f.stats.transfers.clear();
  // 1000 ACT instructions of 1 ns, one every 2 ns.
  for (int i = 0; i < 1000; ++i) {
    core::InstructionRecord r = record(isa::Engine::kAct, 2 * i, 2 * i + 1);
    r.index = 0;
    f.stats.records.push_back(r);
  }
  f.stats.records.front().engine = isa::Engine::kAct;
  f.stats.total = ns(2000);
  f.stats.instructions = 1000;
  PageOptions options;
  options.maxSlices = 100;
  PageSummary summary;
  // The activation's wait never holds in these records; the page still draws them.
  Result<Json> page =
      makePageData({{"core 0", "", &f.program, &f.stats, {}}}, f.chip, options, &summary);
  ASSERT_TRUE(page.ok()) << page.status().toString();
  // One track: slices merge while their stretch is under 2000 ns x 1 / 100 = 20 ns, so 10 per
  // slice (the 10th ends at 19 ns from the first's start).
  EXPECT_EQ(summary.slices, 100U);
  EXPECT_EQ(summary.aggregated, 100U);
  EXPECT_EQ((*page)["slices"]["count"][0], 10);
  EXPECT_EQ((*page)["slices"]["instr"][0], -1);
  EXPECT_DOUBLE_EQ((*page)["slices"]["waited"][0].get<double>(), 10.0);  // busy of the ten
  // The hot-line table still counts every execution.
  EXPECT_EQ((*page)["lines"][0]["executions"], 1000);
}

TEST(PageData, UnrecordedOrUntimedRunsAreErrors) {
  Fixture f = fixture();
  f.stats.records.clear();
  Result<Json> page = makePageData({{"core 0", "", &f.program, &f.stats, {}}}, f.chip);
  ASSERT_FALSE(page.ok());
  EXPECT_NE(page.status().message().find("kept no records"), std::string::npos);
  f = fixture();
  f.stats.mode = core::RunMode::kFunctionalOnly;
  page = makePageData({{"core 0", "", &f.program, &f.stats, {}}}, f.chip);
  ASSERT_FALSE(page.ok());
  EXPECT_NE(page.status().message().find("timed run"), std::string::npos);
  EXPECT_FALSE(makePageData({}, f.chip).ok());
}

TEST(SourcePaths, RelativeToTheProject) {
  const std::vector<std::string> files = {"/x/proj/src/a.cpp", "/x/proj/src/kernels/b.cpp",
                                          "../../src/kernels/c.cpp", ""};
  const SourcePaths paths(files);
  EXPECT_EQ(paths.root(), "/x/proj/src/");  // no .git above: the common directory
  EXPECT_EQ(paths.relative("/x/proj/src/kernels/b.cpp"), "kernels/b.cpp");
  EXPECT_EQ(paths.relative("../../src/kernels/c.cpp"), "src/kernels/c.cpp");
  EXPECT_EQ(paths.relative("/elsewhere/d.cpp"), "/elsewhere/d.cpp");
  // A checkout: its .git marks the project.
  const SourcePaths here(std::vector<std::string>{TRN_SOURCE_DIR "/src/kernels/matmul.cpp"});
  EXPECT_EQ(here.relative(TRN_SOURCE_DIR "/src/kernels/matmul.cpp"), "src/kernels/matmul.cpp");
}

TEST(HtmlReport, OneSelfContainedPage) {
  const Fixture f = fixture();
  PageOptions options;
  options.title = "a </script> <b>title</b>";
  std::ostringstream out;
  ASSERT_TRUE(
      writeHtmlReport(out, {{"core 0", "", &f.program, &f.stats, {}}}, f.chip, options).ok());
  const std::string page = out.str();
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0U);
  EXPECT_NE(page.find("<title>a &lt;/script&gt; &lt;b&gt;title&lt;/b&gt;</title>"),
            std::string::npos);
  // The data's "</script>" cannot close its element early.
  EXPECT_NE(page.find(R"("title":"a <\/script> <b>title<\/b>")"), std::string::npos);
  // Scripts are inline: nothing is fetched.
  EXPECT_EQ(page.find("src=\"http"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_NE(page.find("echarts"), std::string::npos);
  EXPECT_NE(page.find("data-status"), std::string::npos);
}

TEST(HtmlReport, AFileThatCannotBeWrittenIsAnError) {
  const Fixture f = fixture();
  const Status status = writeHtmlReportFile("/proc/no/such/dir/report.html",
                                            {{"core 0", "", &f.program, &f.stats, {}}}, f.chip);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("/proc/no/such/dir/report.html"), std::string::npos);
}

}  // namespace
}  // namespace trn::profile
