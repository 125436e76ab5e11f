// `trnsim graph show`, `graph run` and `compile`: the printed graph, --dump-after, --dim, runs of
// compiled models and the exit statuses of errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "scratch_dir.h"
#include "trn/runtime/npy.h"
#include "trn/runtime/session.h"
#include "trnsim_cli.h"

namespace trn {
namespace {

std::string model(const std::string& name) {
  return std::string(TRN_SOURCE_DIR) + "/tests/graph/models/" + name + ".onnx";
}

testing::CliRun trnsim(const std::string& arguments) {
  return testing::runCommand(TRNSIM_BINARY, arguments);
}

TEST(CliGraph, ShowPrintsShapesAndParameters) {
  const testing::CliRun run = trnsim("graph show " + model("conv_bn_relu"));
  EXPECT_EQ(run.exitCode, 0) << run.output;
  // 224 after the batch norm's 32 statistics and parameters are folded into the conv.
  EXPECT_NE(run.output.find("parameters: 224 (896 bytes)"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("%p: fp32[1, 8, 4, 4] = MaxPool(%r)"), std::string::npos);
}

TEST(CliGraph, DumpAfterImportStopsBeforeShapes) {
  const testing::CliRun run = trnsim("graph show " + model("unknown_op") + " --dump-after import");
  EXPECT_EQ(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("// after import\n"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("%y: fp32[?] = FancyOp(%x)"), std::string::npos);
}

TEST(CliGraph, DimBindsSymbolicSizes) {
  const testing::CliRun run = trnsim("graph show " + model("mlp") +
                                     " --dim batch=3 --dump-after import --dump-after shapes");
  EXPECT_EQ(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("%x: fp32[batch, 16]"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("// after shapes\n"), std::string::npos);
  EXPECT_NE(run.output.find("%y: fp32[3, 8] = Add(%m, %b2)"), std::string::npos);
}

TEST(CliGraph, ErrorsAreInputErrors) {
  for (const char* name : {"unknown_op", "matmul_mismatch", "missing_input"}) {
    const testing::CliRun run = trnsim("graph show " + model(name));
    EXPECT_EQ(run.exitCode, 3) << run.output;
    EXPECT_NE(run.output.find("trnsim: error: " + model(name) + ": node '"), std::string::npos)
        << run.output;
  }
  EXPECT_EQ(trnsim("graph show " + model("mlp")).exitCode, 3);  // batch not bound
  EXPECT_EQ(trnsim("graph show " + model("mlp") + " --dim batch=x").exitCode, 3);
  EXPECT_EQ(trnsim("graph show " + model("mlp") + " --dump-after fusion").exitCode, 3);
}

TEST(CliGraph, RunWritesOutputsAndExplainsTheTime) {
  const testing::ScratchDir dir;
  const std::string models = std::string(TRN_SOURCE_DIR) + "/tests/graph/models/";
  const testing::CliRun run =
      trnsim("graph run " + model("torch_block") + " --dim batch=2 --input x=" + models +
             "torch_block.x.npy --output-dir " + dir.path().string());
  EXPECT_EQ(run.exitCode, 0) << run.output;
  // 18 nodes: the 30 of the folded block with its attention fused (fuse_attention.h) and its
  // projections with their biases and GELU (fuse_linear.h).
  EXPECT_NE(run.output.find("compiled " + model("torch_block") + " for trn2: 18 nodes"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("simulated time"), std::string::npos);
  EXPECT_NE(run.output.find("verdict"), std::string::npos);
  Result<runtime::NpyArray> y = runtime::readNpy(dir.file("y.npy"));
  ASSERT_TRUE(y.ok()) << y.status().toString();
  EXPECT_EQ(y->shape, (std::vector<std::int64_t>{2, 8, 16}));
}

// Two identical blocks in an nn.Sequential: one kernel compiled once and launched twice, the
// outputs PyTorch's (the output directory made when missing), the trace one process per launch,
// the report one lane; `compile -o` asks for one kernel, and gets it with --partition one.
TEST(CliGraph, RepeatedLayersRunAsOneKernelLaunchedPerLayer) {
  const testing::ScratchDir dir;
  const std::string models = std::string(TRN_SOURCE_DIR) + "/tests/graph/models/";
  const testing::CliRun run =
      trnsim("graph run " + model("torch_stack") + " --dim batch=2 --input x=" + models +
             "torch_stack.x.npy --output-dir " + dir.file("out") + " --trace " +
             dir.file("t.json") + " --report " + dir.file("r.html"));
  EXPECT_EQ(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("2 kernels launched in order, 1 of them distinct"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("the longest kernel, "), std::string::npos);
  Result<runtime::NpyArray> y = runtime::readNpy(dir.file("out/y.npy"));
  Result<runtime::NpyArray> want = runtime::readNpy(models + "torch_stack.y.npy");
  ASSERT_TRUE(y.ok() && want.ok()) << y.status().toString();
  const std::vector<float> got = runtime::floatValues(*y);
  const std::vector<float> ref = runtime::floatValues(*want);
  ASSERT_EQ(got.size(), ref.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], ref[i], 1e-5) << i;
  }
  std::ifstream file(dir.file("t.json"));
  const std::string trace((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_NE(trace.find("\"name\":\"0\""), std::string::npos);
  EXPECT_NE(trace.find("\"name\":\"1\""), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir.file("r.html")));

  const testing::CliRun saved =
      trnsim("compile " + model("torch_stack") + " --dim batch=2 -o " + dir.file("s.tprog"));
  EXPECT_EQ(saved.exitCode, 3) << saved.output;
  EXPECT_NE(saved.output.find("give --partition one"), std::string::npos) << saved.output;
  const testing::CliRun one = trnsim("compile " + model("torch_stack") +
                                     " --dim batch=2 --partition one -o " + dir.file("s.tprog"));
  EXPECT_EQ(one.exitCode, 0) << one.output;
}

// A model compiled to a .trnx file (every kernel, the launch order, the weights) runs without
// its ONNX file, giving what running the ONNX file gives.
TEST(CliGraph, CompiledModelFileRunsAsTheModelDoes) {
  const testing::ScratchDir dir;
  const std::string models = std::string(TRN_SOURCE_DIR) + "/tests/graph/models/";
  const testing::CliRun saved =
      trnsim("compile " + model("torch_stack") + " --dim batch=2 --lnc 2 -o " + dir.file("s.trnx"));
  ASSERT_EQ(saved.exitCode, 0) << saved.output;
  EXPECT_NE(saved.output.find("2 launches of 1 kernels"), std::string::npos) << saved.output;
  const std::string input = " --input x=" + models + "torch_stack.x.npy --output-dir ";
  const testing::CliRun loaded = trnsim("graph run " + dir.file("s.trnx") + input + dir.file("a"));
  const testing::CliRun direct = trnsim("graph run " + model("torch_stack") +
                                        " --dim batch=2 --lnc 2" + input + dir.file("b"));
  ASSERT_EQ(loaded.exitCode, 0) << loaded.output;
  ASSERT_EQ(direct.exitCode, 0) << direct.output;
  const auto simulated = [](const std::string& out) {
    const std::size_t at = out.find("simulated time");
    return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at) - at);
  };
  EXPECT_FALSE(simulated(loaded.output).empty());
  EXPECT_EQ(simulated(loaded.output), simulated(direct.output));
  Result<runtime::NpyArray> a = runtime::readNpy(dir.file("a/y.npy"));
  Result<runtime::NpyArray> b = runtime::readNpy(dir.file("b/y.npy"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->data, b->data);
  const testing::CliRun recompile =
      trnsim("graph run " + dir.file("s.trnx") + " --lnc 1 --mode timing-only");
  EXPECT_EQ(recompile.exitCode, 3) << recompile.output;
  EXPECT_NE(recompile.output.find("--lnc applies when compiling from ONNX"), std::string::npos)
      << recompile.output;
  const testing::CliRun otherChip =
      trnsim("graph run " + dir.file("s.trnx") + " --chip trn1 --mode timing-only");
  EXPECT_EQ(otherChip.exitCode, 3) << otherChip.output;
  EXPECT_NE(otherChip.output.find("is compiled for trn2, not trn1"), std::string::npos);
}

TEST(CliGraph, CompileListsEachNodesLoweringAndSavesTheProgram) {
  const testing::ScratchDir dir;
  const testing::CliRun run =
      trnsim("compile " + model("mlp") + " --dim batch=4 -o " + dir.file("mlp.tprog"));
  EXPECT_EQ(run.exitCode, 0) << run.output;
  // fc1's bias and the ReLU after it are applied as the product leaves PSUM (fuse_linear.h).
  EXPECT_NE(run.output.find("line    1: fc1 (library linear (bias and Relu fused))"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("line    2: fc2 (library linear (bias fused))"), std::string::npos);
  const testing::CliRun timed = trnsim("run " + dir.file("mlp.tprog") + " --mode timing-only");
  EXPECT_EQ(timed.exitCode, 0) << timed.output;
}

// --auto-cast matmult: the products in bf16 (fp32 accumulation), the outputs within bf16's
// rounding of the fp32 run's; a type the option does not know is a usage error.
TEST(CliGraph, AutoCastRunsTheProductsInBf16) {
  const std::string models = std::string(TRN_SOURCE_DIR) + "/tests/graph/models/";
  const std::string input = " --dim batch=2 --input x=" + models + "torch_block.x.npy";
  std::vector<std::vector<float>> outputs;
  for (const char* cast : {"none", "matmult"}) {
    const testing::ScratchDir dir;
    const testing::CliRun run =
        trnsim("graph run " + model("torch_block") + input + " --auto-cast " + cast +
               " --output-dir " + dir.path().string());
    ASSERT_EQ(run.exitCode, 0) << run.output;
    Result<runtime::NpyArray> y = runtime::readNpy(dir.file("y.npy"));
    ASSERT_TRUE(y.ok()) << y.status().toString();
    outputs.push_back(runtime::floatValues(*y));
  }
  ASSERT_EQ(outputs[0].size(), outputs[1].size());
  double worst = 0;
  for (std::size_t i = 0; i < outputs[0].size(); ++i) {
    worst = std::max(worst, static_cast<double>(std::abs(outputs[0][i] - outputs[1][i])));
  }
  // Outputs of magnitude up to ~3 after products of 16 and 32 terms with 8-bit operands.
  EXPECT_GT(worst, 1e-4);
  EXPECT_LT(worst, 0.1);
  EXPECT_NE(trnsim("graph run " + model("torch_block") + input + " --auto-cast fp8").exitCode, 0);
}

TEST(CliGraph, RunErrorsNameWhatIsWrong) {
  const testing::CliRun noInput = trnsim("graph run " + model("mlp") + " --dim batch=2");
  EXPECT_EQ(noInput.exitCode, 3) << noInput.output;
  EXPECT_NE(noInput.output.find("no array for model input 'x'"), std::string::npos)
      << noInput.output;
  const testing::CliRun pool = trnsim("compile " + model("cnn/maxpool_indices"));
  EXPECT_NE(pool.exitCode, 0);
  EXPECT_NE(pool.output.find("'pool_with_indices' (MaxPool)"), std::string::npos) << pool.output;
  EXPECT_NE(pool.output.find("Indices output is not lowered"), std::string::npos) << pool.output;
}

}  // namespace
}  // namespace trn
