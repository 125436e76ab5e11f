// `trnsim kernels list|compile` end to end: the library is listed, a kernel compiles with an IR
// dump after a chosen pass, the saved Program runs under `trnsim run`, and bad requests exit 1.
#include <gtest/gtest.h>

#include <filesystem>

#include "trnsim_cli.h"

namespace trn::runtime {
namespace {

testing::CliRun trnsim(const std::string& arguments) {
  return testing::runCommand(TRNSIM_BINARY, arguments);
}

TEST(CliKernels, ListNamesTheReferenceKernels) {
  const auto run = trnsim("kernels list");
  EXPECT_EQ(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("tensor_add"), std::string::npos) << run.output;
}

TEST(CliKernels, CompileDumpsTheIrAfterAPassAndSavesARunnableProgram) {
  const std::string program =
      (std::filesystem::temp_directory_path() / "trnsim_cli_kernels_add.trnb").string();
  const auto run = trnsim("kernels compile tensor_add --dump-after synchronise -o " + program);
  ASSERT_EQ(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("// after pass 'synchronise'"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("wait(s"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("elementwise.cpp:"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("compiled tensor_add for trn2: 32 instructions"), std::string::npos)
      << run.output;
  const auto timed = trnsim("run " + program + " --mode timing-only");
  EXPECT_EQ(timed.exitCode, 0) << timed.output;
  EXPECT_NE(timed.output.find("critical"), std::string::npos) << timed.output;
  std::filesystem::remove(program);
}

TEST(CliKernels, BadRequestsExitWithAnError) {
  auto run = trnsim("kernels compile no_such_kernel");
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_NE(run.output.find("no kernel 'no_such_kernel'"), std::string::npos) << run.output;
  run = trnsim("kernels compile tensor_add --dump-after no_such_pass");
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_NE(run.output.find("no pass 'no_such_pass'"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace trn::runtime
