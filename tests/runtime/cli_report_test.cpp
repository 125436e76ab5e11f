// `--report FILE` on run, kernels bench and demo: the page is written, each run's verdict is
// printed, and user errors (an untimed mode, a path that cannot be written) exit 1 with a
// message. The page itself is tested in tests/profile (data, escaping, a real browser).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "scratch_dir.h"
#include "trnsim_cli.h"

namespace trn::runtime {
namespace {

testing::CliRun trnsim(const std::string& arguments) {
  return testing::runCommand(TRNSIM_BINARY, arguments);
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

const std::string kExample = std::string(TRN_SOURCE_DIR) + "/examples/matmul_gelu.tasm";

TEST(CliReport, RunWritesThePageAndPrintsTheVerdict) {
  const trn::testing::ScratchDir scratch;
  const std::string page = scratch.file("sub/dir/report.html");  // directories are created
  const auto run = trnsim("run " + kExample + " --mode timing-only --report " + page);
  ASSERT_EQ(run.exitCode, 0) << run.output;
  // Two loads, a matmul waiting for both, a GELU, a store: 5 instructions and 3 transfers.
  EXPECT_NE(run.output.find("verdict: latency-bound on DMA"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("report: " + page), std::string::npos);
  EXPECT_NE(run.output.find("8 timeline slices"), std::string::npos);
  const std::string html = readFile(page);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0U);
  EXPECT_NE(html.find("id=\"trn-data\""), std::string::npos);
}

TEST(CliReport, UntimedRunsAndUnwritablePathsAreErrors) {
  const trn::testing::ScratchDir scratch;
  const auto untimed =
      trnsim("run " + kExample + " --mode functional-only --report " + scratch.file("r.html"));
  EXPECT_EQ(untimed.exitCode, 3);  // bad input (docs/cli.md)
  EXPECT_NE(untimed.output.find("--report needs a timed mode"), std::string::npos)
      << untimed.output;
  const auto bench = trnsim("kernels bench matmul_basic --mode functional-only --no-check "
                            "--report " + scratch.file("b.html"));
  EXPECT_EQ(bench.exitCode, 3);
  EXPECT_NE(bench.output.find("--report needs a timed mode"), std::string::npos);
  const auto unwritable =
      trnsim("run " + kExample + " --mode timing-only --report /proc/no-such/report.html");
  EXPECT_EQ(unwritable.exitCode, 3);
  EXPECT_NE(unwritable.output.find("cannot open report file '/proc/no-such/report.html'"),
            std::string::npos)
      << unwritable.output;
}

TEST(CliReport, KernelBenchOnTwoCoresGivesAVerdictPerCore) {
  const trn::testing::ScratchDir scratch;
  const auto bench = trnsim("kernels bench matmul_basic --mode timing-only --no-check --lnc 2 "
                            "--report " + scratch.file("b.html"));
  ASSERT_EQ(bench.exitCode, 0) << bench.output;
  EXPECT_EQ(count(bench.output, "verdict (core "), 2U) << bench.output;
}

// The small layer: 8 kernels on the two cores of an LNC=2 pair, one verdict each.
TEST(CliReport, DemoReportsEveryKernelOnEveryCore) {
  const trn::testing::ScratchDir scratch;
  const std::string page = scratch.file("layer.html");
  const auto demo =
      trnsim("demo --small --mode timing-only --no-check --trace '' --report " + page);
  ASSERT_EQ(demo.exitCode, 0) << demo.output;
  EXPECT_EQ(count(demo.output, "verdict ("), 16U) << demo.output;
  EXPECT_NE(readFile(page).find("trnsim demo: one decoder layer"), std::string::npos);
}

}  // namespace
}  // namespace trn::runtime
