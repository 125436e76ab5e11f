// `trnsim system` and `trnsim collectives bench|run` from the command line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
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
        std::pair{"collectives bench --ranks 17",
                  "17 ranks on 16 chips: more ranks than chips must be a whole number of logical "
                  "cores per chip"},
        std::pair{"collectives bench --ranks 48",
                  "3 ranks per chip: a trn2 chip runs one rank, or one per logical core: "
                  "8 (LNC=1), 4 (LNC=2)"},
        std::pair{"collectives bench --op allreduce", "unknown collective 'allreduce'"},
        std::pair{"collectives bench --sizes 1Q", "unknown suffix 'Q'"},
        std::pair{"collectives bench --dtype fp8_e4m3", "reduces in fp32 or bf16"},
        std::pair{"collectives bench --ranks 3 --algorithm rdh", "power-of-two"},
        std::pair{"collectives bench --sizes 8K:64K --trace /tmp/x.json",
                  "--trace traces one size"},
        std::pair{"collectives bench --sizes 8K:64K --report /tmp/x.html",
                  "--report reports one size"},
        std::pair{"collectives run --size 1G", "keeps every rank's data in host memory"},
        std::pair{"collectives run --reduce prod", "unknown reduction 'prod'"},
        std::pair{"collectives run --dtype fp8_e4m3", "reduce in fp32 or bf16, not fp8_e4m3"},
        std::pair{"collectives run --size 1000001 --dtype bf16",
                  "1000001 bytes is not a whole number of 2-byte elements"},
        std::pair{"collectives run --op all_to_allv", "all_to_allv needs --counts"},
        std::pair{"collectives run --op all_reduce --counts 1,2/3,4",
                  "--counts and --expected-counts are for --op all_to_allv, not all_reduce"},
        std::pair{"collectives run --op all_to_allv --counts 1,2/3,4 --expected-counts 1,3/2,5",
                  "rank 1 sends 4 elements to rank 1, but rank 1 expects 5 from rank 1"},
        std::pair{"collectives run --op all_to_allv --counts 1,2/3",
                  "rank 1 gives 1 counts, one per rank of its group of 2"},
        std::pair{"collectives bench --op all_to_allv --counts 1K,2K/3K,4K --sizes 8K",
                  "rank 1 sends 4096 elements to rank 1 at element 3072 of rank 1's buffer, "
                  "which holds 4096 elements"}}) {
    const auto r = trnsim(arguments);
    EXPECT_EQ(r.exitCode, 3) << arguments << "\n" << r.output;  // an input error (docs/cli.md)
    EXPECT_NE(r.output.find(expected), std::string::npos) << arguments << "\n" << r.output;
  }
}

TEST(CollectivesCli, SixtyFourRanksOnAnInstanceAreItsLogicalCores) {
  const auto r = trnsim("collectives bench --system trn2.48xlarge --ranks 64 --sizes 1M");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("trn2.48xlarge (16 chips of trn2, 4 ranks per chip)"),
            std::string::npos)
      << r.output;
  const auto run = trnsim("collectives run --system trn2.48xlarge --ranks 64 --size 64K");
  ASSERT_EQ(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("0 of"), std::string::npos) << run.output;
}

TEST(CollectivesCli, RunReducesDataAndMatchesFloat64) {
  const auto r = trnsim(
      "collectives run --system trn2.48xlarge --op all_reduce --ranks 16 --size 64K --dtype bf16");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  for (const char* expected :
       {"all_reduce over 16 ranks of trn2.48xlarge: 65536 bytes of bf16", "algorithm mesh",
        "0 of 524288 exact output elements differ", "max |error| / sum |x|"}) {
    EXPECT_NE(r.output.find(expected), std::string::npos) << expected << "\n" << r.output;
  }
  const auto gather = trnsim("collectives run --op all_gather --size 32K --dtype fp8_e4m3");
  ASSERT_EQ(gather.exitCode, 0) << gather.output;
  EXPECT_NE(gather.output.find("0 of 524288 exact output elements differ"), std::string::npos)
      << gather.output;
}

// MoE-like skew over 4 chips: every element lands where the packed counts say, checked against
// the exchange rebuilt from the inputs.
TEST(CollectivesCli, AllToAllVMovesTheCountsGivenAndMatchesTheReference) {
  const auto r = trnsim(
      "collectives run --system trn2.48xlarge --op all_to_allv --dtype bf16 "
      "--counts 0,1K,3K,0/512,512,512,512/4K,0,0,0/100,200,300,400");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  // Buffers of the largest extent: rank 0 receives 512 + 4K + 100 = 4708 elements.
  for (const char* expected : {"all_to_allv over 4 ranks of trn2.48xlarge: 9416 bytes of bf16",
                               "algorithm mesh", "0 of 18832 exact output elements differ"}) {
    EXPECT_NE(r.output.find(expected), std::string::npos) << expected << "\n" << r.output;
  }
  const auto bench = trnsim(
      "collectives bench --system trn2.48xlarge --op all_to_allv --dtype bf16 "
      "--counts 0,1K,3K,0/512,512,512,512/4K,0,0,0/100,200,300,400 --json");
  ASSERT_EQ(bench.exitCode, 0) << bench.output;
  const nlohmann::json j = nlohmann::json::parse(bench.output);
  EXPECT_EQ(j["op"], "all_to_allv");
  EXPECT_EQ(j["rows"][0]["size_bytes"], 9416);
  EXPECT_EQ(j["rows"][0]["algorithm"], "mesh");
}

TEST(CollectivesCli, TraceShowsChipsAsProcessesAndLinksAsTracks) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "trnsim_collective_trace.json").string();
  const auto r = trnsim("collectives bench --system trn2.48xlarge --sizes 1M --trace " + path);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::ifstream in(path);
  const nlohmann::json trace = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(trace.is_discarded()) << "the trace is not JSON";
  std::set<std::string> processes;
  std::set<std::string> tracks;
  int transfers = 0;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") {
      processes.insert(e["args"]["name"].get<std::string>());
    } else if (e["ph"] == "M" && e["name"] == "thread_name") {
      tracks.insert(e["args"]["name"].get<std::string>());
    } else if (e["ph"] == "X") {
      ++transfers;
    }
  }
  EXPECT_EQ(processes.size(), 16U);
  EXPECT_TRUE(processes.contains("chip 5 (rank 5)"));
  EXPECT_TRUE(tracks.contains("x+") && tracks.contains("y-") && tracks.contains("HBM"));
  EXPECT_GT(transfers, 16 * 15);
  EXPECT_EQ(trace["otherData"]["algorithm"], "mesh");
  std::filesystem::remove(path);
}

TEST(SystemCli, DiffPrintsTheValuesThatDiffer) {
  const auto r = trnsim("system diff trn2.48xlarge trn2-ultraserver");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  for (const char* expected : {"trn2.48xlarge (", "vs trn2-ultraserver (", "values differ",
                               "dimensions[2].name", "(absent)"}) {
    EXPECT_NE(r.output.find(expected), std::string::npos) << expected << "\n" << r.output;
  }
  const auto same = trnsim("system diff trn2.48xlarge trn2.48xlarge");
  EXPECT_NE(same.output.find("0 values differ"), std::string::npos) << same.output;
  const auto bad = trnsim("system diff trn2.48xlarge nosuch");
  EXPECT_EQ(bad.exitCode, 3);
  EXPECT_NE(bad.output.find("system 'nosuch' not found"), std::string::npos) << bad.output;
}

TEST(SystemCli, ShowPrintsTheTotalsAndTheSources) {
  const auto r = trnsim("system show trn2-ultraserver");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  for (const char* expected : {"chips: 64", "640GB/s per direction", "A3, R1"}) {
    EXPECT_NE(r.output.find(expected), std::string::npos) << expected << "\n" << r.output;
  }
}

// The two rings of a ring all-reduce over 16 chips send 1/32 of the buffer per message: 32 KiB
// (256 ns at 128 GB/s) against 1.5 us per hop is latency-bound; 8 MiB (65.5 us) is
// bandwidth-bound. The report holds 2 x 30 x 16 messages on 3 resources each and 2 x 15 x 16
// reductions: 3,360 slices.
TEST(CollectivesCli, ReportWritesThePageAndPrintsTheVerdict) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "trnsim_cli_collective_report.html").string();
  const auto small =
      trnsim("collectives bench --sizes 1M --algorithm ring --report " + path);
  ASSERT_EQ(small.exitCode, 0) << small.output;
  EXPECT_NE(small.output.find("verdict: latency-bound by per-hop latency"), std::string::npos)
      << small.output;
  EXPECT_NE(small.output.find("3360 timeline slices, 16 of 16 chips"), std::string::npos)
      << small.output;
  std::ifstream page(path);
  std::string first;
  std::getline(page, first);
  EXPECT_EQ(first, "<!DOCTYPE html>");
  const auto large =
      trnsim("collectives bench --sizes 256M --algorithm ring --report " + path);
  ASSERT_EQ(large.exitCode, 0) << large.output;
  EXPECT_NE(large.output.find("verdict: bandwidth-bound on neuronlink links"), std::string::npos)
      << large.output;
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace trn::fabric
