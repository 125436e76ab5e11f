// Issue 17: `--json` on run, kernels bench and demo prints one JSON document on stdout (the
// schema of docs/cli.md) whose figures are the text report's; a failing command prints one with
// an "error" object and the same exit status.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "trnsim_cli.h"

namespace trn::runtime {
namespace {

/// Runs trnsim with stdout only and parses it; a failed parse fails the test.
nlohmann::json trnsimJson(const std::string& arguments, int expectedExit) {
  const testing::CliRun run = testing::runCommand(TRNSIM_BINARY, arguments, false);
  EXPECT_EQ(run.exitCode, expectedExit) << arguments << "\n" << run.output;
  nlohmann::json doc = nlohmann::json::parse(run.output, nullptr, false);
  EXPECT_FALSE(doc.is_discarded()) << "not JSON:\n" << run.output;
  if (!doc.is_discarded()) {
    EXPECT_EQ(doc["schema"], "trnsim");
    EXPECT_EQ(doc["schema_version"], 1);
    EXPECT_EQ(doc["trnsim_version"], "0.1.0");
    EXPECT_EQ(doc["exit_code"], expectedExit);
  }
  return doc;
}

const std::string kExample = std::string(TRN_SOURCE_DIR) + "/examples/matmul_gelu.tasm";

TEST(CliJson, KernelsBench) {
  const nlohmann::json doc =
      trnsimJson("kernels bench tensor_add --shape 130x70 --shape b=130x70 --json", 0);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["command"], "kernels bench");
  EXPECT_EQ(doc["status"], "ok");
  EXPECT_EQ(doc["chip"], "trn2");
  EXPECT_EQ(doc["mode"], "functional+timing");
  EXPECT_EQ(doc["lnc"], 1);
  EXPECT_TRUE(doc["trace"].is_null());
  EXPECT_TRUE(doc["chip_summary"].is_null());
  const nlohmann::json& result = doc["result"];
  EXPECT_EQ(result["kernel"], "tensor_add");
  ASSERT_EQ(result["inputs"].size(), 2u);
  EXPECT_EQ(result["inputs"][1]["name"], "b");
  EXPECT_EQ(result["inputs"][1]["shape"], nlohmann::json::array({130, 70}));
  EXPECT_EQ(result["inputs"][1]["dtype"], "fp32");
  EXPECT_TRUE(result["numerics"]["checked"].get<bool>());
  EXPECT_TRUE(result["numerics"]["pass"].get<bool>());
  const nlohmann::json& out = result["numerics"]["outputs"][0];
  EXPECT_EQ(out["name"], "out");
  EXPECT_EQ(out["elements"], 9100);
  EXPECT_EQ(out["failures"], 0);
  // One fp32 rounding of sums of magnitude below 2: at most half an ulp of 2.
  EXPECT_GT(out["max_abs_error"].get<double>(), 0.0);
  EXPECT_LE(out["max_abs_error"].get<double>(), 0x1p-23);
  EXPECT_GT(result["compiled"]["instructions"].get<int>(), 0);
  EXPECT_EQ(result["useful_flops"], 0.0);
  const nlohmann::json& report = result["report"];
  EXPECT_TRUE(report["timed"].get<bool>());
  EXPECT_GT(report["total_ps"].get<std::int64_t>(), 0);
  ASSERT_EQ(report["engines"].size(), 5u);
  EXPECT_EQ(report["engines"][0]["engine"], "pe");
  std::int64_t instructions = 0;
  for (const nlohmann::json& e : report["engines"]) {
    instructions += e["instructions"].get<std::int64_t>();
    // busy + waiting + idle = total for every engine.
    EXPECT_EQ(e["busy_ps"].get<std::int64_t>() + e["waiting_ps"].get<std::int64_t>() +
                  e["idle_ps"].get<std::int64_t>(),
              report["total_ps"].get<std::int64_t>());
  }
  EXPECT_EQ(instructions, report["instructions"].get<std::int64_t>());
  EXPECT_GT(report["dma"]["bytes"].get<std::int64_t>(), 3 * 9100 * 4 - 1);
}

TEST(CliJson, Run) {
  const nlohmann::json doc =
      trnsimJson(fmt::format("run {} --mode timing-only --json", kExample), 0);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["command"], "run");
  EXPECT_EQ(doc["mode"], "timing-only");
  ASSERT_EQ(doc["cores"].size(), 1u);
  const nlohmann::json& core = doc["cores"][0];
  EXPECT_EQ(core["program"], kExample);
  EXPECT_EQ(core["physical_core"], 0);
  EXPECT_EQ(core["instructions"], 5);
  EXPECT_EQ(core["engine_instructions"]["pe"], 1);
  EXPECT_EQ(core["engine_instructions"]["act"], 1);
  EXPECT_EQ(core["report"]["instructions"], 5);
  EXPECT_EQ(core["report"]["flops"], 2 * 128 * 128 * 512);
  EXPECT_TRUE(doc["outputs"].empty());
}

TEST(CliJson, DemoSmallOnOneCore) {
  const nlohmann::json doc = trnsimJson("demo --small --lnc 1 --trace '' --json", 0);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["command"], "demo");
  EXPECT_EQ(doc["lnc"], 1);
  EXPECT_EQ(doc["config"]["name"], "small");
  EXPECT_EQ(doc["config"]["hidden"], 256);
  EXPECT_TRUE(doc["pass"].get<bool>());
  EXPECT_TRUE(doc["logical_core"].is_null());
  const nlohmann::json& layer = doc["one_core"];
  ASSERT_GE(layer["steps"].size(), 5u);
  std::int64_t total = 0;
  for (const nlohmann::json& step : layer["steps"]) {
    EXPECT_TRUE(step["numerics"]["pass"].get<bool>()) << step["step"];
    total += step["report"]["total_ps"].get<std::int64_t>();
  }
  EXPECT_EQ(total, layer["total_ps"].get<std::int64_t>());  // the steps run one after another
}

TEST(CliJson, ErrorsAreDocumentsToo) {
  const nlohmann::json doc = trnsimJson("kernels bench no_such_kernel --json", 3);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["status"], "input-error");
  EXPECT_EQ(doc["error"]["category"], "not found");
  EXPECT_EQ(doc["error"]["message"],
            "no kernel 'no_such_kernel'; 'trnsim kernels list' shows them");
  const nlohmann::json run = trnsimJson("run /nonexistent.tasm --json", 3);
  ASSERT_FALSE(run.is_discarded());
  EXPECT_EQ(run["command"], "run");
  EXPECT_EQ(run["error"]["category"], "i/o error");
}

}  // namespace
}  // namespace trn::runtime
