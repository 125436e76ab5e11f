// `trnsim kernels list|compile|bench` end to end: the library is listed, a kernel compiles with an
// IR dump after a chosen pass, the saved Program runs under `trnsim run`, bench checks numerics
// and reports speed at default and given shapes and dtypes, and bad requests exit with the
// status of their kind (docs/cli.md: 2 usage, 3 input, 4 a kernel refusing its shapes).
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
  // The kernels that split over SPMD program instances are marked.
  const auto lineOf = [&](const std::string& name) {
    const std::size_t at = run.output.find("\n" + name + " ");
    return at == std::string::npos ? std::string()
                                   : run.output.substr(at + 1, run.output.find('\n', at + 1) - at);
  };
  EXPECT_NE(lineOf("rmsnorm").find("[spmd]"), std::string::npos) << run.output;
  EXPECT_EQ(lineOf("tensor_add").find("[spmd]"), std::string::npos) << run.output;
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

TEST(CliKernels, CompileTakesShapesAndDtypesLikeBench) {
  // Two 128-row tiles of bf16 instead of the default 1024x2048 fp32 (32 instructions).
  auto run = trnsim("kernels compile tensor_add --shape 256x512 --shape b=256x512 --dtype bf16");
  ASSERT_EQ(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("compiled tensor_add for trn2: 8 instructions"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("SBUF 4096 B"), std::string::npos) << run.output;  // 2 x 2 x 1 KiB
  run = trnsim("kernels compile tensor_add --shape a=256x512");
  EXPECT_EQ(run.exitCode, 4) << run.output;  // the kernel refuses operands of two shapes
  EXPECT_NE(run.output.find("tensor_add takes two 2-D tensors of one shape"), std::string::npos)
      << run.output;
}

TEST(CliKernels, BadRequestsExitWithAnError) {
  auto run = trnsim("kernels compile no_such_kernel");
  EXPECT_EQ(run.exitCode, 3);
  EXPECT_NE(run.output.find("no kernel 'no_such_kernel'"), std::string::npos) << run.output;
  run = trnsim("kernels compile tensor_add --dump-after no_such_pass");
  EXPECT_EQ(run.exitCode, 3);
  EXPECT_NE(run.output.find("no pass 'no_such_pass'"), std::string::npos) << run.output;
}

TEST(CliKernels, BenchChecksNumericsAndReportsSpeed) {
  const std::string trace =
      (std::filesystem::temp_directory_path() / "trnsim_cli_kernels_bench.json").string();
  const auto run = trnsim("kernels bench matmul_basic --trace " + trace);
  ASSERT_EQ(run.exitCode, 0) << run.output;
  for (const char* expected :
       {"matmul_basic on trn2 (functional+timing): lhsT[128x128] bf16, rhs[128x512] bf16",
        "result[128x512]: max abs error", "0 of 65536 outside: PASS", "simulated time",
        "0.01678 GFLOP", "MFU", "verdict        latency-bound", "remedy", "critical",
        "trace: "}) {
    EXPECT_NE(run.output.find(expected), std::string::npos) << expected << "\n" << run.output;
  }
  ASSERT_TRUE(std::filesystem::exists(trace));
  EXPECT_GT(std::filesystem::file_size(trace), 1000u);
  std::filesystem::remove(trace);
}

TEST(CliKernels, BenchTakesShapesAndDtypesByPositionOrName) {
  auto run = trnsim("kernels bench tensor_add --shape 130x70 --shape b=130x70 --dtype bf16");
  ASSERT_EQ(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("a[130x70] bf16, b[130x70] bf16"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("0 of 9100 outside: PASS"), std::string::npos) << run.output;
  run = trnsim(
      "kernels bench matmul_tiled --shape lhsT=512x256 --shape rhs=512x1024 --mode "
      "timing-only");
  ASSERT_EQ(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("not checked: timing-only"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("0.2684 GFLOP"), std::string::npos) << run.output;
}

TEST(CliKernels, BenchAutoCastsFp32MatrixProductsToBf16OrSaysWhyNot) {
  auto run = trnsim(
      "kernels bench linear --shape x=130x200 --shape w=200x300 --dtype fp32 --auto-cast matmult");
  ASSERT_EQ(run.exitCode, 0) << run.output;
  // Judged as bf16 products (the bf16 tolerance), against the bf16-rounded reference.
  EXPECT_NE(run.output.find("x[130x200] fp32, w[200x300] fp32"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("<= 0.001 + 0.00390625 |ref|"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("0 of 39000 outside: PASS"), std::string::npos) << run.output;
  run = trnsim("kernels bench matmul_basic --auto-cast matmult");
  EXPECT_EQ(run.exitCode, 3);
  EXPECT_NE(run.output.find("'matmul_basic' does not auto-cast"), std::string::npos) << run.output;
  run = trnsim("kernels compile flash_attention --auto-cast matmult");
  EXPECT_EQ(run.exitCode, 3);
  EXPECT_NE(run.output.find("'flash_attention' does not auto-cast"), std::string::npos)
      << run.output;
  run = trnsim("kernels bench linear --auto-cast fp8");
  EXPECT_EQ(run.exitCode, 2);
  EXPECT_NE(run.output.find("--auto-cast: fp8 not in {none,matmult}"), std::string::npos)
      << run.output;
}

TEST(CliKernels, FidelityPrintsThePublishedAgainstTheSimulatedTimes) {
  auto run = trnsim("fidelity");
  ASSERT_EQ(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("| `matmul_optimised` (fully optimised) | trn1 |"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("| 6.97 ms |"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("Calibration set: 4 measurements; of the 4 simulated, mean |error|"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("| `mamba_v3` (scaling table) | trn1 |"), std::string::npos)
      << run.output;
}

TEST(CliKernels, BenchRejectsBadShapesDtypesAndNames) {
  auto run = trnsim("kernels bench tensor_add --shape a=10x0");
  EXPECT_EQ(run.exitCode, 3);
  EXPECT_NE(run.output.find("--shape '10x0': expected positive extents"), std::string::npos)
      << run.output;
  run = trnsim("kernels bench tensor_add --dtype c=bf16");
  EXPECT_EQ(run.exitCode, 3);
  EXPECT_NE(run.output.find("no input 'c' (inputs: a, b)"), std::string::npos) << run.output;
  run = trnsim("kernels bench tensor_add --shape a=128x64");
  EXPECT_EQ(run.exitCode, 4);
  EXPECT_NE(run.output.find("tensor_add takes two 2-D tensors of one shape"), std::string::npos)
      << run.output;
  run = trnsim("kernels bench tensor_add --dtype fp99");
  EXPECT_EQ(run.exitCode, 3);
  EXPECT_NE(run.output.find("fp99"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace trn::runtime
