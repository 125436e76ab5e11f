// The command line against hostile input (issue 13): each reproducer from the review ends as a
// clean error ("trnsim: error:" naming the option, file, instruction and operand, with the exit
// status of its kind: docs/cli.md) or as a correct run, never a crash, an abort, a hang or a
// silent wrong figure.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "scratch_dir.h"
#include "trnsim_cli.h"

namespace trn::runtime {
namespace {

testing::CliRun trnsim(const std::string& arguments) {
  return testing::runCommand(TRNSIM_BINARY, arguments);
}

class CliHostileInputTest : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) const {
    return scratch_.write(name, text);
  }
  [[nodiscard]] std::string file(const std::string& name) const { return scratch_.file(name); }

  trn::testing::ScratchDir scratch_;
};

/// Exit statuses (tools/trnsim/exit_codes.h).
constexpr int kUsage = 2;
constexpr int kInput = 3;
constexpr int kRule = 4;
constexpr int kRaceOrDeadlock = 5;

void expectError(int exitCode, const testing::CliRun& run,
                 std::initializer_list<std::string_view> fragments) {
  EXPECT_EQ(run.exitCode, exitCode) << run.output;
  EXPECT_NE(run.output.find("trnsim: error: "), std::string::npos) << run.output;
  for (const std::string_view f : fragments) {
    EXPECT_NE(run.output.find(f), std::string::npos) << "missing '" << f << "' in:\n" << run.output;
  }
}

TEST_F(CliHostileInputTest, SeedsOutOfRangeAreRejectedNotSaturated) {
  const std::string program = write("p.tasm", "sp: nop\n");
  for (const std::string seed :
       {"-1", "18446744073709551616", "100000000000000000000000", "1e3", "0x10", ""}) {
    expectError(
        kUsage, trnsim(fmt::format("run {} --mode timing-only --seed '{}'", program, seed)),
        {fmt::format("--seed: '{}' is not a decimal integer in 0..18446744073709551615", seed)});
  }
  EXPECT_EQ(trnsim(fmt::format("run {} --mode timing-only --seed 18446744073709551615", program))
                .exitCode,
            0);
  expectError(kUsage, trnsim("kernels bench tensor_add --seed -1"), {"--seed: '-1' is not"});
  expectError(kUsage, trnsim("demo --small --seed 2e9"), {"--seed: '2e9' is not"});
}

TEST_F(CliHostileInputTest, AnEndlessLoopStopsAtMaxInstructions) {
  const std::string program =
      write("loop.tasm", "sp: reg_set reg=0 value=1\nsp: branch_nz reg=0 target=1\n");
  expectError(kRule, trnsim(fmt::format("run {} --max-instructions 100000", program)),
              {"stopped after 100000 instructions (the limit); a dynamic loop may not terminate"});
  // With a trace the records stop at their limit; the loop still ends at the instruction limit.
  expectError(
      kRule,
      trnsim(fmt::format("run {} --max-instructions 200000 --trace {}", program, file("t.json"))),
      {"stopped after 200000 instructions"});
  expectError(kUsage, trnsim(fmt::format("run {} --max-instructions 0", program)),
              {"--max-instructions: '0' is not a decimal integer in 1.."});
}

TEST_F(CliHostileInputTest, PoisonWithoutDataIsAnError) {
  const std::string program = write("p.tasm", "sp: nop\n");
  expectError(kUsage, trnsim(fmt::format("run {} --poison --mode timing-only", program)),
              {"--poison needs data values: timing-only mode computes none"});
}

TEST_F(CliHostileInputTest, PoisonNamesTheByteActuallyRead) {
  // The copy reads bytes 0..7 of partition 0; only 0..3 were written. It used to name byte 0.
  const std::string program = write("p.tasm",
                                    ".tensor y output fp32 [2]\n"
                                    "act: memset dst=sbuf[0:1]:fp32[[1,1]] value=1 signal(s0+=1)\n"
                                    "sp: dma_copy dst=hbm:y:fp32[[2,1],[1,2]] "
                                    "src=sbuf[0:1]:fp32[[1,2]] queue=0 wait(s0>=1)\n");
  expectError(kRule, trnsim(fmt::format("run {} --poison", program)),
              {"sp#0 'dma_copy", "poison: reads never-written memory at sbuf partition 0 byte 4"});
}

TEST_F(CliHostileInputTest, AnOutputNothingWritesIsReported) {
  const std::string program = write("p.tasm", ".tensor y output fp32 [4]\nsp: nop\n");
  const testing::CliRun run = trnsim(fmt::format("run {} --out y={}", program, file("y.npy")));
  EXPECT_EQ(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("trnsim: warning: " + program +
                            ": output tensor 'y' is never written by the program; it reads back "
                            "as zeros"),
            std::string::npos)
      << run.output;
}

TEST_F(CliHostileInputTest, DeadlocksNameTheInstructionAndSourceLine) {
  const std::string program =
      write("d.tasm", "act: nop wait(s0>=1) loc=attention.py:41\ndve: nop wait(s1==2)\n");
  expectError(kRaceOrDeadlock, trnsim(fmt::format("run {}", program)),
              {"deadlock: no engine can proceed",
               "act#0 'nop wait(s0>=1)' at attention.py:41 waits for s0 >= 1 "
               "(s0 = 0)",
               "dve#0 'nop wait(s1==2)' waits for s1 == 2 (s1 = 0)"});
}

TEST_F(CliHostileInputTest, HeapOverflowReproducersAreLocatedErrors) {
  // The review's access-pattern reproducers; each used to corrupt the heap or crash.
  const std::string stride =
      write("stride.tasm",
            ".tensor x input fp32 [2048]\n"
            "sp: dma_copy dst=sbuf[0:4]:fp32[[1,4]] src=hbm:x:fp32[[4611686018427387906,4],[1,4]] "
            "queue=0\n");
  expectError(kRule, trnsim(fmt::format("run {} --mode timing-only", stride)),
              {"sp#0 'dma_copy", "operand 'src': its size overflows 64-bit arithmetic"});
  const std::string rows = write("rows.tasm",
                                 ".tensor x input fp32 [2048]\n.tensor y output fp32 [2048]\n"
                                 "sp: dma_copy dst=hbm:y:fp32[[0,1152921504606846977],[1,1]] "
                                 "src=hbm:x:fp32[[0,1152921504606846977],[1,1]] queue=0\n");
  expectError(kRule, trnsim(fmt::format("run {} --mode timing-only", rows)),
              {"operand 'dst': writes 1152921504606846977 fp32 elements into tensor 'y', which "
               "holds 2048"});
}

TEST_F(CliHostileInputTest, KernelShapesBeyondTheChipAreRefusedBeforeTracing) {
  expectError(kRule,
              trnsim("kernels bench tensor_add --shape a=1099511627776x1 --shape "
                     "b=1099511627776x1"),
              {"hbm tensor 'a' [1099511627776x1] fp32 needs 4398046511104 bytes; the core's HBM "
               "has 103079215104 bytes"});
  expectError(kRule,
              trnsim("kernels bench tensor_add --shape a=9223372036854775807x4 --shape "
                     "b=9223372036854775807x4 --mode timing-only"),
              {"needs more than 2^63 bytes"});
  expectError(kInput, trnsim("kernels bench tensor_add --shape a=0x4"),
              {"--shape '0x4': expected"});
}

TEST_F(CliHostileInputTest, DmaTransposeKernelsRunOnTrn1) {
  // Trn1 has no DMA transpose: flash attention transposes on the tensor engine there, and the
  // report's figures are sane (it used to show DMA efficiency 133.3 %).
  const testing::CliRun run = trnsim(
      "kernels bench flash_attention --chip trn1 --shape q=2x256x64 --shape k=1x256x64 --shape "
      "v=1x256x64");
  EXPECT_EQ(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("PASS"), std::string::npos) << run.output;
  const std::size_t efficiency = run.output.find("efficiency ");
  ASSERT_NE(efficiency, std::string::npos) << run.output;
  EXPECT_LT(std::stod(run.output.substr(efficiency + 11)), 100.0) << run.output;
}

}  // namespace
}  // namespace trn::runtime
