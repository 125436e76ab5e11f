// `trnsim graph show`: the printed graph, --dump-after, --dim and the exit statuses of errors.
#include <gtest/gtest.h>

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
  EXPECT_NE(run.output.find("parameters: 256 (1,024 bytes)"), std::string::npos) << run.output;
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

}  // namespace
}  // namespace trn
