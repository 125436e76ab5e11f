// Issue 17: `trnsim kernels list|compile|bench --plugin lib.so` adds user kernels from a shared
// library (kernels/plugin.h). The plugin here is examples/user_kernel's: its kernel is listed,
// checked against its float64 reference, dumped after a pass and traced exactly like a built-in
// one; libraries that are no plugin, missing files and refused kernels are clear errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "scratch_dir.h"
#include "trnsim_cli.h"

namespace trn::runtime {
namespace {

testing::CliRun trnsim(const std::string& arguments) {
  return testing::runCommand(TRNSIM_BINARY, arguments);
}

const std::string kPlugin = std::string(" --plugin ") + TRN_TEST_PLUGIN;

TEST(CliPlugin, ListsTheUserKernelAfterTheReferenceKernels) {
  const auto run = trnsim("kernels list" + kPlugin);
  ASSERT_EQ(run.exitCode, 0) << run.output;
  const std::size_t user = run.output.find("\nscaled_relu_linear ");
  ASSERT_NE(user, std::string::npos) << run.output;
  EXPECT_GT(user, run.output.find("\ntensor_add "));
  EXPECT_NE(run.output.find("x[200x192] fp32, w[192x320] fp32)  [plugin]"), std::string::npos)
      << run.output;
  // Without --plugin the kernel is unknown.
  EXPECT_EQ(trnsim("kernels list").output.find("scaled_relu_linear"), std::string::npos);
}

TEST(CliPlugin, BenchChecksTheUserKernelAndWritesItsTrace) {
  trn::testing::ScratchDir scratch;
  const std::string trace = scratch.file("user.json");
  const auto run = trnsim("kernels bench scaled_relu_linear --trace " + trace + kPlugin);
  ASSERT_EQ(run.exitCode, 0) << run.output;
  for (const char* expected :
       {"scaled_relu_linear on trn2 (functional+timing): x[200x192] fp32, w[192x320] fp32",
        "out[200x320]: max abs error", "0 of 64000 outside: PASS", "0.02458 GFLOP", "MFU",
        "critical", "trace: "}) {
    EXPECT_NE(run.output.find(expected), std::string::npos) << expected << "\n" << run.output;
  }
  std::ifstream in(trace);
  const nlohmann::json events = nlohmann::json::parse(in);
  EXPECT_GT(events["traceEvents"].size(), 20u);

  // Other shapes, as for the built-in kernels.
  const auto shaped =
      trnsim("kernels bench scaled_relu_linear --shape x=64x300 --shape w=300x96" + kPlugin);
  ASSERT_EQ(shaped.exitCode, 0) << shaped.output;
  EXPECT_NE(shaped.output.find("0 of 6144 outside: PASS"), std::string::npos) << shaped.output;
}

TEST(CliPlugin, CompileDumpsTheUserKernelAfterAPass) {
  const auto run = trnsim(
      "kernels compile scaled_relu_linear --shape x=128x128 --shape w=128x64 "
      "--dump-after allocate" +
      kPlugin);
  ASSERT_EQ(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("// after pass 'allocate'"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("scaled_relu_linear.cpp:"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("compiled scaled_relu_linear for trn2:"), std::string::npos)
      << run.output;
}

TEST(CliPlugin, BadPluginsAreClearErrors) {
  struct Case {
    std::string plugin;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"/nonexistent/libnone.so", "plugin /nonexistent/libnone.so: no such file"},
      {TRNSIM_BINARY, "cannot load it"},
      {TRN_TEST_PLUGIN_WITHOUT_ENTRY_POINT, "it exports no function 'trnsim_register_kernels'"},
      {TRN_TEST_PLUGIN_REFUSING, "user kernel 'tensor_add' has no kernel body"},
  };
  for (const Case& c : cases) {
    for (const std::string command :
         {"kernels list", "kernels bench tensor_add", "kernels compile tensor_add"}) {
      const auto run = trnsim(command + " --plugin " + c.plugin);
      EXPECT_EQ(run.exitCode, 3) << command << " " << c.plugin << "\n" << run.output;
      EXPECT_NE(run.output.find("trnsim: error: "), std::string::npos) << run.output;
      EXPECT_NE(run.output.find(c.expected), std::string::npos)
          << command << " " << c.plugin << "\n"
          << run.output;
    }
  }
}

}  // namespace
}  // namespace trn::runtime
