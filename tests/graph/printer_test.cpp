// The graph printer: the whole text of a small model after shape inference, so a change in the
// format shows here.
#include "trn/graph/printer.h"

#include <gtest/gtest.h>

#include "trn/graph/onnx_import.h"
#include "trn/graph/shape_inference.h"

namespace trn::graph {
namespace {

TEST(GraphPrinter, MlpAfterShapes) {
  const std::string path = std::string(TRN_SOURCE_DIR) + "/tests/graph/models/mlp.onnx";
  Result<Graph> g = importOnnx(path);
  ASSERT_TRUE(g.ok()) << g.status().toString();
  ASSERT_TRUE(inferShapes(*g, {.symbols = {{"batch", 2}}}).ok());
  EXPECT_EQ(formatGraph(*g),
            "graph mlp from " + path +
                " (opset 17, make_test_models.py): 1 inputs, 1 outputs, 4 nodes, 4 initializers\n"
                "parameters: 808 (3,232 bytes)\n"
                "inputs:\n"
                "  %x: fp32[2, 16]\n"
                "initializers:\n"
                "  %b1: fp32[32]  (128 bytes)\n"
                "  %b2: fp32[8]  (32 bytes)\n"
                "  %w1: fp32[32, 16]  (2,048 bytes)\n"
                "  %w2: fp32[32, 8]  (1,024 bytes)\n"
                "nodes:\n"
                "  %h: fp32[2, 32] = Gemm(%x, %w1, %b1) {transB=1}  # fc1\n"
                "  %a: fp32[2, 32] = Relu(%h)  # relu\n"
                "  %m: fp32[2, 8] = MatMul(%a, %w2)  # fc2\n"
                "  %y: fp32[2, 8] = Add(%m, %b2)  # bias2\n"
                "outputs:\n"
                "  %y: fp32[2, 8]\n");
}

TEST(GraphPrinter, UnknownShapesPrintAsQuestionMarks) {
  const std::string path = std::string(TRN_SOURCE_DIR) + "/tests/graph/models/unknown_op.onnx";
  Result<Graph> g = importOnnx(path);
  ASSERT_TRUE(g.ok()) << g.status().toString();
  EXPECT_NE(formatGraph(*g).find("  %y: fp32[?] = FancyOp(%x)  # fancy\n"), std::string::npos);
}

}  // namespace
}  // namespace trn::graph
