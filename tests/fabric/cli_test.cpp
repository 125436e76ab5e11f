// `trnsim system` and `trnsim collectives bench` from the command line.
#include <gtest/gtest.h>

#include <string>

#include "trnsim_cli.h"

namespace trn::fabric {
namespace {

trn::testing::CliRun trnsim(const std::string& arguments) {
  return trn::testing::runCommand(TRNSIM_BINARY, arguments);
}

TEST(CollectivesCli, BenchPrintsTheNccomTestTable) {
  const auto r = trnsim(
      "collectives bench --system trn2.48xlarge --op all_reduce --ranks 16 "
      "--sizes 8K:64K --dtype bf16");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  for (const char* expected :
       {"# trn2.48xlarge (16 chips of trn2)", "busbw(GB/s)", "8192", "65536", "bf16", "mesh"}) {
    EXPECT_NE(r.output.find(expected), std::string::npos) << expected << "\n" << r.output;
  }
}

TEST(CollectivesCli, JsonHasEveryAlgorithmsTime) {
  const auto r = trnsim("collectives bench --system trn2-ultraserver --sizes 64M --json");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  for (const char* expected :
       {"\"candidates_time_us\"", "\"torus\"", "\"rdh\"", "\"busbw_gbps\""}) {
    EXPECT_NE(r.output.find(expected), std::string::npos) << expected << "\n" << r.output;
  }
}

TEST(CollectivesCli, BadInputsAreErrorsNotCrashes) {
  for (const auto& [arguments, expected] :
       {std::pair{"collectives bench --system nosuch", "system 'nosuch' not found"},
        std::pair{"collectives bench --ranks 17", "17 ranks: the system has 16 chips"},
        std::pair{"collectives bench --op allreduce", "unknown collective 'allreduce'"},
        std::pair{"collectives bench --sizes 1Q", "unknown suffix 'Q'"},
        std::pair{"collectives bench --dtype fp8_e4m3", "reduces in fp32 or bf16"},
        std::pair{"collectives bench --ranks 3 --algorithm rdh", "power-of-two"}}) {
    const auto r = trnsim(arguments);
    EXPECT_EQ(r.exitCode, 1) << arguments << "\n" << r.output;
    EXPECT_NE(r.output.find(expected), std::string::npos) << arguments << "\n" << r.output;
  }
}

TEST(SystemCli, ShowPrintsTheTotalsAndTheSources) {
  const auto r = trnsim("system show trn2-ultraserver");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  for (const char* expected : {"chips: 64", "640GB/s per direction", "A3, R1"}) {
    EXPECT_NE(r.output.find(expected), std::string::npos) << expected << "\n" << r.output;
  }
}

}  // namespace
}  // namespace trn::fabric
