// Issue 17: trnsim's exit statuses (docs/cli.md, tools/trnsim/exit_codes.h): 0 success, 1 a
// kernel outside its float64 tolerance, 2 a bad command line, 3 bad input, 4 a broken hardware
// or tile-language rule, 5 a race or deadlock; and --version.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "scratch_dir.h"
#include "trnsim_cli.h"

namespace trn::runtime {
namespace {

testing::CliRun trnsim(const std::string& arguments) {
  return testing::runCommand(TRNSIM_BINARY, arguments);
}

class CliExitCodes : public ::testing::Test {
 protected:
  /// A program file holding `text`.
  std::string program(const std::string& name, const std::string& text) {
    const std::string file = scratch_.file(name);
    std::ofstream(file) << text;
    return file;
  }

  trn::testing::ScratchDir scratch_;
};

void expectExit(const testing::CliRun& run, int code, const std::string& fragment,
                const std::string& what) {
  EXPECT_EQ(run.exitCode, code) << what << "\n" << run.output;
  EXPECT_NE(run.output.find(fragment), std::string::npos) << what << "\n" << run.output;
}

TEST_F(CliExitCodes, VersionIsTheProjectVersion) {
  const auto run = trnsim("--version");
  EXPECT_EQ(run.exitCode, 0) << run.output;
  EXPECT_EQ(run.output.rfind("trnsim 0.1.0", 0), 0u) << run.output;
}

TEST_F(CliExitCodes, UsageErrorsExitTwo) {
  expectExit(trnsim("no_such_command"), 2, "trnsim: error:", "unknown command");
  expectExit(trnsim("kernels bench"), 2, "name is required", "missing argument");
  expectExit(trnsim("kernels bench tensor_add --lnc x"), 2, "--lnc", "bad integer");
  const std::string copy = program("copy.tasm", "sp: nop\n");
  expectExit(trnsim("run " + copy + " --poison --no-poison"), 2,
             "--poison and --no-poison contradict each other", "contradicting flags");
  expectExit(trnsim("run " + copy + " --mode functional-only --trace t.json"), 2,
             "--trace needs a timed mode", "trace without time");
}

TEST_F(CliExitCodes, InputErrorsExitThree) {
  expectExit(trnsim("spec show nosuchchip"), 3, "chip 'nosuchchip' not found", "unknown chip");
  expectExit(trnsim("kernels bench no_such_kernel"), 3, "no kernel 'no_such_kernel'",
             "unknown kernel");
  expectExit(trnsim("run /nonexistent.tasm"), 3, "/nonexistent.tasm: cannot open", "no file");
  expectExit(trnsim("run " + program("bad.tasm", "sp: no_such_instruction\n")), 3, "bad.tasm:1",
             "bad program text");
  expectExit(trnsim("kernels bench tensor_add --shape a=10x0"), 3, "expected positive extents",
             "bad shape");
}

TEST_F(CliExitCodes, RuleViolationsExitFour) {
  expectExit(trnsim("run " + program("sem.tasm", "sp: nop wait(s256>=1)\n")), 4,
             "semaphore s256 does not exist", "verifier");
  // The tile function refuses the shapes while the kernel is traced.
  expectExit(trnsim("kernels bench tensor_add --shape a=128x64"), 4,
             "tensor_add takes two 2-D tensors of one shape", "kernel trace");
}

TEST_F(CliExitCodes, RacesAndDeadlocksExitFive) {
  expectExit(trnsim("run " + program("race.tasm",
                                     "act: memset dst=sbuf[0:128]:fp32[[1,64]] value=1.0\n"
                                     "dve: memset dst=sbuf[0:128]:fp32[[1,64]] value=2.0\n")),
             5, "race", "race");
  expectExit(trnsim("run " + program("deadlock.tasm", "pe: nop wait(s1>=1)\n")), 5, "deadlock",
             "deadlock");
}

TEST_F(CliExitCodes, AKernelOutsideItsToleranceExitsOne) {
  const auto run =
      trnsim(std::string("kernels bench wrong_reference --plugin ") + TRN_TEST_PLUGIN_WRONG);
  EXPECT_EQ(run.exitCode, 1) << run.output;
  EXPECT_NE(run.output.find("FAIL"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace trn::runtime
