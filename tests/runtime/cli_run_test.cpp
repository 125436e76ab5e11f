// `trnsim run`, `asm`, `disasm` and `isa` end to end: .npy files in, program on the core, .npy
// files out, checked against a float64 reference; and every user error exits with a message and
// the status of its kind (docs/cli.md).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "scratch_dir.h"
#include "trn/numerics/convert.h"
#include "trn/runtime/npy.h"
#include "trn/runtime/session.h"
#include "trnsim_cli.h"

namespace trn::runtime {
namespace {

namespace fs = std::filesystem;

testing::CliRun trnsim(const std::string& arguments) {
  return testing::runCommand(TRNSIM_BINARY, arguments);
}

class CliRunTest : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return scratch_.file(name); }

  void writeFloats(const std::string& name, std::vector<std::int64_t> shape,
                   const std::vector<float>& values) {
    NpyArray a{NpyType::kFloat32, std::move(shape), {}};
    a.data.resize(values.size() * 4);
    std::memcpy(a.data.data(), values.data(), a.data.size());
    ASSERT_TRUE(writeNpy(path(name), a).ok());
  }

  trn::testing::ScratchDir scratch_;
  const fs::path& dir_ = scratch_.path();
};

const std::string kExample = std::string(TRN_SOURCE_DIR) + "/examples/matmul_gelu.tasm";

TEST_F(CliRunTest, RunsTheExampleAgainstAFloat64Reference) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> lhsT(128 * 128);
  std::vector<float> rhs(128 * 512);
  for (float& v : lhsT) {
    v = dist(rng);
  }
  for (float& v : rhs) {
    v = dist(rng);
  }
  writeFloats("lhsT.npy", {128, 128}, lhsT);
  writeFloats("rhs.npy", {128, 512}, rhs);
  const auto run = trnsim(fmt::format("run {} --in lhsT={} --in rhs={} --out c={}", kExample,
                                      path("lhsT.npy"), path("rhs.npy"), path("c.npy")));
  ASSERT_EQ(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("5 instructions"), std::string::npos) << run.output;

  const NpyArray c = readNpy(path("c.npy")).value();
  ASSERT_EQ(c.type, NpyType::kFloat32);
  ASSERT_EQ(c.shape, (std::vector<std::int64_t>{128, 512}));
  std::vector<float> out(128 * 512);
  std::memcpy(out.data(), c.data.data(), c.data.size());
  for (int m = 0; m < 128; ++m) {
    for (int n = 0; n < 512; ++n) {
      double sum = 0;
      double magnitude = 0;
      for (int k = 0; k < 128; ++k) {
        // Inputs were rounded to bf16 on load.
        const double p = double{quantize(lhsT[k * 128 + m], DType::kBf16)} *
                         double{quantize(rhs[k * 512 + n], DType::kBf16)};
        sum += p;
        magnitude += std::fabs(p);
      }
      const double gelu = 0.5 * sum * (1.0 + std::erf(sum / std::sqrt(2.0)));
      ASSERT_NEAR(out[m * 512 + n], gelu, 1.2 * (128 * 0x1p-24 * magnitude) + 1e-6)
          << m << "," << n;
    }
  }
}

TEST_F(CliRunTest, TimingOnlyRunPrintsAReportAndWritesATrace) {
  const std::string example = std::string(TRN_SOURCE_DIR) + "/examples/matmul_gelu.tasm";
  const testing::CliRun run =
      trnsim(fmt::format("run {} --mode timing-only --trace {}", example, path("t.json")));
  ASSERT_EQ(run.exitCode, 0) << run.output;
  for (const char* expected : {"(timing-only): 5 instructions", "total time", "critical",
                               "PE utilisation", "HBM", "trace:"}) {
    EXPECT_NE(run.output.find(expected), std::string::npos) << expected << "\n" << run.output;
  }
  std::ifstream in(path("t.json"));
  const nlohmann::json trace = nlohmann::json::parse(in);
  int slices = 0;
  int dma = 0;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] == "X") {
      ++slices;
      dma += event["tid"].get<int>() >= 100 ? 1 : 0;
    }
  }
  EXPECT_EQ(slices, 5 + 3);  // five instructions and three transfers
  EXPECT_EQ(dma, 3);
  const testing::CliRun functionalTrace =
      trnsim(fmt::format("run {} --mode functional-only --trace {}", example, path("u.json")));
  EXPECT_EQ(functionalTrace.exitCode, 2);
  EXPECT_NE(functionalTrace.output.find("--trace needs a timed mode"), std::string::npos);
}

TEST_F(CliRunTest, AsmDisasmRoundTrip) {
  ASSERT_EQ(trnsim(fmt::format("asm {} -o {}", kExample, path("p.tprog"))).exitCode, 0);
  const auto text1 = trnsim(fmt::format("disasm {}", path("p.tprog")));
  ASSERT_EQ(text1.exitCode, 0) << text1.output;
  ASSERT_EQ(trnsim(fmt::format("disasm {} -o {}", path("p.tprog"), path("p.tasm"))).exitCode, 0);
  ASSERT_EQ(trnsim(fmt::format("asm {} -o {}", path("p.tasm"), path("q.tprog"))).exitCode, 0);
  EXPECT_EQ(trnsim(fmt::format("disasm {}", path("q.tprog"))).output, text1.output);
  EXPECT_NE(text1.output.find("pe: nc_matmul dst=psum[0:128]:fp32[[1,512]]"), std::string::npos);
}

TEST_F(CliRunTest, AsmWritesEitherFormatVersionAndDisasmReadsBoth) {
  ASSERT_EQ(trnsim(fmt::format("asm {} -o {}", kExample, path("compact.tprog"))).exitCode, 0);
  ASSERT_EQ(trnsim(fmt::format("asm {} --format-version 1 -o {}", kExample, path("fixed.tprog")))
                .exitCode,
            0);
  EXPECT_LT(std::filesystem::file_size(path("compact.tprog")) * 2,
            std::filesystem::file_size(path("fixed.tprog")));
  const auto compact = trnsim(fmt::format("disasm {}", path("compact.tprog")));
  const auto fixed = trnsim(fmt::format("disasm {}", path("fixed.tprog")));
  ASSERT_EQ(compact.exitCode, 0) << compact.output;
  EXPECT_EQ(compact.output, fixed.output);
  const auto two =
      trnsim(fmt::format("asm {} --format-version 2 -o {}", kExample, path("x.tprog")));
  EXPECT_EQ(two.exitCode, 2);  // 2 is the multi-core container, not a program format
  EXPECT_NE(two.output.find("--format-version"), std::string::npos) << two.output;
}

TEST_F(CliRunTest, DemoRunsTheDecoderLayerOnOneCoreAndOnAPairChecksItAndWritesATrace) {
  const std::string trace = path("layer.json");
  const auto demo = trnsim("demo --small --trace " + trace);
  ASSERT_EQ(demo.exitCode, 0) << demo.output;
  EXPECT_NE(demo.output.find("per-core dense BF16 peak: 78.64 TFLOPS"), std::string::npos)
      << demo.output;
  for (const char* step :
       {"attention rmsnorm", "qkv projection", "rope q", "rope k", "causal attention",
        "output projection + residual", "mlp rmsnorm", "swiglu mlp + residual", "1 core", "2 cores",
        "layer on 1 core:", "layer on 2 cores (LNC=2):",
        "layer output on 2 cores is bit-identical to the one-core output"}) {
    EXPECT_NE(demo.output.find(step), std::string::npos) << step << "\n" << demo.output;
  }
  EXPECT_EQ(demo.output.find("FAIL"), std::string::npos) << demo.output;
  std::ifstream in(trace);
  const auto json = nlohmann::json::parse(in);
  // Eight kernels, each on the two cores of the pair; a step lasts as long as its longer core.
  const auto& runs = json["otherData"]["runs"];
  ASSERT_EQ(runs.size(), 16u);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < runs.size(); i += 2) {
    EXPECT_NE(runs[i]["name"].get<std::string>().find("core 0"), std::string::npos);
    EXPECT_NE(runs[i + 1]["name"].get<std::string>().find("core 1"), std::string::npos);
    total += std::max(runs[i]["total_ps"].get<std::int64_t>(),
                      runs[i + 1]["total_ps"].get<std::int64_t>());
  }
  EXPECT_EQ(json["otherData"]["total_ps"].get<std::int64_t>(), total);

  const auto single = trnsim("demo --small --lnc 1 --trace " + trace);
  ASSERT_EQ(single.exitCode, 0) << single.output;
  EXPECT_EQ(single.output.find("2 cores"), std::string::npos) << single.output;
  std::ifstream again(trace);
  EXPECT_EQ(nlohmann::json::parse(again)["otherData"]["runs"].size(), 8u);
  const auto trn1 = trnsim("demo --small --chip trn1 --no-check");
  ASSERT_EQ(trn1.exitCode, 0) << trn1.output;  // trn1 has no LNC=2: one core only
  EXPECT_NE(trn1.output.find("on one NeuronCore of trn1"), std::string::npos) << trn1.output;
}

TEST_F(CliRunTest, APairOfProgramsRunsTogetherFromFilesOrAsOneChipProgram) {
  // Each core copies its half of x to y; the halves meet in the one device tensor.
  auto half = [](int first) {
    return fmt::format(
        ".tensor x input fp32 [128, 64]\n"
        ".tensor y output fp32 [128, 64]\n"
        "sp: dma_copy dst=sbuf[0:64]:fp32[[1,64]] src=hbm:x+{0}:fp32[[64,64],[1,64]] "
        "signal(s0+=1)\n"
        "sp: dma_copy dst=hbm:y+{0}:fp32[[64,64],[1,64]] src=sbuf[0:64]:fp32[[1,64]] "
        "wait(s0>=1)\n",
        first * 64 * 4);
  };
  for (const int c : {0, 1}) {
    std::ofstream(path(fmt::format("c{}.tasm", c))) << half(c * 64);
  }
  std::vector<float> values(128 * 64);
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<float>(i);
  }
  const NpyArray x = floatArray({128, 64}, values);
  ASSERT_TRUE(writeNpy(path("x.npy"), x).ok());
  const std::string programs = fmt::format("{} {}", path("c0.tasm"), path("c1.tasm"));
  const auto run = trnsim(fmt::format("run {} --lnc 2 --in x={} --out y={} --trace {}", programs,
                                      path("x.npy"), path("y.npy"), path("pair.json")));
  ASSERT_EQ(run.exitCode, 0) << run.output;
  for (const char* expected : {"on trn2 core 0", "on trn2 core 1", "chip summary: trn2, 2 cores",
                               "HBM stack 0 (cores 0, 1)", "MFU"}) {
    EXPECT_NE(run.output.find(expected), std::string::npos) << expected << "\n" << run.output;
  }
  EXPECT_EQ(readNpy(path("y.npy"))->data, x.data);
  std::ifstream trace(path("pair.json"));
  const auto json = nlohmann::json::parse(trace);
  EXPECT_EQ(json["otherData"]["cores"].size(), 2u);

  // The same pair assembled into one chip program file, run and disassembled.
  ASSERT_EQ(trnsim(fmt::format("asm {} --lnc 2 -o {}", programs, path("pair.tprog"))).exitCode, 0);
  const auto chip = trnsim(
      fmt::format("run {} --in x={} --out y={}", path("pair.tprog"), path("x.npy"), path("z.npy")));
  ASSERT_EQ(chip.exitCode, 0) << chip.output;
  EXPECT_EQ(readNpy(path("z.npy"))->data, x.data);
  const auto text = trnsim(fmt::format("disasm {}", path("pair.tprog")));
  EXPECT_NE(text.output.find("# chip program: 2 cores at LNC=2"), std::string::npos);
  EXPECT_NE(text.output.find("# physical core 1"), std::string::npos);

  // Both cores writing the same rows is a race between them.
  const auto racy = trnsim(
      fmt::format("run {} {} --lnc 2 --in x={}", path("c0.tasm"), path("c0.tasm"), path("x.npy")));
  EXPECT_EQ(racy.exitCode, 5);
  EXPECT_NE(racy.output.find("race between cores"), std::string::npos) << racy.output;
  struct Bad {
    std::string arguments;
    std::string message;
    int exitCode;  ///< 2: the options contradict each other; 3: they contradict the input
  };
  for (const Bad& c : std::vector<Bad>{
           {fmt::format("run {} {}", path("pair.tprog"), path("c0.tasm")), "run it alone", 3},
           {fmt::format("run {} --lnc 1", path("pair.tprog")), "contradicts it", 3},
           {fmt::format("run {} --cores 0", programs), "--cores names 1 physical cores for 2", 2},
           {fmt::format("run {} --cores 3,3 --mode timing-only", programs),
            "two programs were given for physical core 3", 3},
           {fmt::format("disasm {} -o {}", path("pair.tprog"), path("p.tasm")),
            "has no single text form", 3},
           {fmt::format("run {} --lnc 0 --mode timing-only", path("c0.tasm")),
            "LNC=0 is not a logical-core size of chip 'trn2' (it has 1, 2)", 3},
           {"demo --small --lnc 3", "--lnc 3: chip 'trn2' has logical cores of 1 or 2", 3}}) {
    const std::string& arguments = c.arguments;
    const std::string& message = c.message;
    const auto bad = trnsim(arguments);
    EXPECT_EQ(bad.exitCode, c.exitCode) << arguments;
    EXPECT_NE(bad.output.find(message), std::string::npos) << arguments << "\n" << bad.output;
  }
}

TEST_F(CliRunTest, IsaReference) {
  const auto list = trnsim("isa list");
  EXPECT_EQ(list.exitCode, 0);
  EXPECT_NE(list.output.find("nc_matmul"), std::string::npos);
  const auto show = trnsim("isa show nc_matmul");
  EXPECT_EQ(show.exitCode, 0);
  EXPECT_NE(show.output.find("opcode      0x0100"), std::string::npos) << show.output;
  const auto missing = trnsim("isa show matmul");
  EXPECT_EQ(missing.exitCode, 3);
  EXPECT_NE(missing.output.find("no instruction 'matmul' (did you mean nc_matmul"),
            std::string::npos)
      << missing.output;
}

TEST_F(CliRunTest, InputErrorsExitThreeWithAMessage) {
  writeFloats("small.npy", {4, 4}, std::vector<float>(16));
  struct Case {
    std::string arguments;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {fmt::format("run {} --in lhsT={}", kExample, path("small.npy")), "input tensor(s) rhs of"},
      {fmt::format("run {} --in lhsT={} --in rhs={}", kExample, path("small.npy"),
                   path("small.npy")),
       "shape (4, 4) does not match tensor 'lhsT' [128, 128]"},
      {fmt::format("run {} --in lhsT", kExample), "bad tensor binding 'lhsT'"},
      {fmt::format("run {} --in lhsT={} --in rhs={}", kExample, path("none.npy"),
                   path("small.npy")),
       "cannot open"},
      {fmt::format("run {} --chip trn9", kExample), "chip 'trn9' not found"},
      {"run /nonexistent.tasm", "/nonexistent.tasm: cannot open"},
      {fmt::format("disasm {}", path("small.npy")), "is not program text: byte 0 is 0x93"},
  };
  for (const Case& c : cases) {
    const auto run = trnsim(c.arguments);
    EXPECT_EQ(run.exitCode, 3) << c.arguments << "\n" << run.output;
    EXPECT_NE(run.output.find("trnsim: error: "), std::string::npos) << run.output;
    EXPECT_NE(run.output.find(c.expected), std::string::npos)
        << c.arguments << "\nexpected: " << c.expected << "\ngot: " << run.output;
  }
}

void writeText(const std::string& file, const std::string& text) {
  std::ofstream(file, std::ios::binary) << text;
}

// Issue 13: readers read only regular files of bounded size, and programs outside the limits
// every format shares are rejected where they are read, naming the file, line and limit.
TEST_F(CliRunTest, UnreadableInputsAndProgramsOutsideTheLimitsExitThreeWithAMessage) {
  writeText(path("wrapped.tasm"), ".tensor a output fp32 [4611686018427387905, 4]\nsp: nop\n");
  writeText(path("twice.tasm"), ".tensor a input fp32 [4]\n.tensor a output fp32 [4]\n");
  writeText(path("long.tasm"), ".tensor " + std::string(300, 'n') + " input fp32 [4]\n");
  struct Case {
    std::string arguments;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"run /dev/zero", "/dev/zero: not a regular file; a program is read from a regular file"},
      {"disasm /dev/urandom",
       "/dev/urandom: not a regular file; a program is read from a regular file"},
      {fmt::format("run {} --in lhsT=/dev/zero --in rhs=/dev/zero", kExample),
       "/dev/zero: not a regular file; a .npy file is read from a regular file"},
      {fmt::format("run {} --out a={}", path("wrapped.tasm"), path("a.npy")),
       path("wrapped.tasm") + ":1: tensor 'a' [4611686018427387905, 4] fp32 is too large: its "
                              "size in bytes does not fit in 64 bits (at most "
                              "9223372036854775807)"},
      {fmt::format("run {}", path("twice.tasm")),
       path("twice.tasm") + ":2: tensor 'a' is declared twice (first at line 1)"},
      {fmt::format("asm {} -o {}", path("long.tasm"), path("long.tprog")),
       path("long.tasm") + ":1: tensor name '" + std::string(64, 'n') +
           "... (300 bytes)' is longer than 256 bytes"},
  };
  for (const Case& c : cases) {
    const auto run = trnsim(c.arguments);
    EXPECT_EQ(run.exitCode, 3) << c.arguments << "\n" << run.output;
    EXPECT_EQ(run.output, "trnsim: error: " + c.expected + "\n") << c.arguments;
  }
  EXPECT_FALSE(fs::exists(path("a.npy")));
  EXPECT_FALSE(fs::exists(path("long.tprog")));
}

}  // namespace
}  // namespace trn::runtime
