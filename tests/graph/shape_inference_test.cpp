// Shape inference on the committed models: the exact shapes of every value, and the errors for
// unsupported operators, mismatched shapes and unbound symbolic dimensions.
#include "trn/graph/shape_inference.h"

#include <gtest/gtest.h>

#include "trn/graph/onnx_import.h"

namespace trn::graph {
namespace {

std::string model(const std::string& name) {
  return std::string(TRN_SOURCE_DIR) + "/tests/graph/models/" + name + ".onnx";
}

Graph inferred(const std::string& name, const ShapeOptions& options = {}) {
  Result<Graph> g = importOnnx(model(name));
  EXPECT_TRUE(g.ok()) << g.status().toString();
  const Status s = inferShapes(*g, options);
  EXPECT_TRUE(s.ok()) << s.toString();
  return std::move(g).value();
}

std::string shapeOf(const Graph& g, const std::string& value) {
  return describeValue(*g.value(value));
}

TEST(ShapeInference, Mlp) {
  const Graph g = inferred("mlp", {.symbols = {{"batch", 4}}});
  EXPECT_EQ(shapeOf(g, "x"), "fp32[4, 16]");
  EXPECT_EQ(shapeOf(g, "h"), "fp32[4, 32]");
  EXPECT_EQ(shapeOf(g, "a"), "fp32[4, 32]");
  EXPECT_EQ(shapeOf(g, "m"), "fp32[4, 8]");
  EXPECT_EQ(shapeOf(g, "y"), "fp32[4, 8]");
}

TEST(ShapeInference, AttentionResolvesTheShapeComputedInTheGraph) {
  const Graph g = inferred("attention");
  EXPECT_EQ(shapeOf(g, "q_heads"), "fp32[2, 8, 4, 8]");
  EXPECT_EQ(shapeOf(g, "k_t"), "fp32[2, 4, 8, 8]");
  EXPECT_EQ(shapeOf(g, "scores"), "fp32[2, 4, 8, 8]");
  EXPECT_EQ(shapeOf(g, "probs"), "fp32[2, 4, 8, 8]");
  EXPECT_EQ(shapeOf(g, "context_t"), "fp32[2, 8, 4, 8]");
  EXPECT_EQ(shapeOf(g, "x_shape"), "int64[3]");
  EXPECT_EQ(shapeOf(g, "batch"), "int64[]");
  EXPECT_EQ(shapeOf(g, "merged_shape"), "int64[3]");
  EXPECT_EQ(shapeOf(g, "merged"), "fp32[2, 8, 32]");
  EXPECT_EQ(shapeOf(g, "y"), "fp32[2, 8, 32]");
}

TEST(ShapeInference, ConvBnRelu) {
  const Graph g = inferred("conv_bn_relu");
  EXPECT_EQ(shapeOf(g, "c"), "fp32[1, 8, 8, 8]");
  EXPECT_EQ(shapeOf(g, "n"), "fp32[1, 8, 8, 8]");
  EXPECT_EQ(shapeOf(g, "p"), "fp32[1, 8, 4, 4]");
  EXPECT_EQ(shapeOf(g, "g"), "fp32[1, 8, 1, 1]");
  EXPECT_EQ(shapeOf(g, "y"), "fp32[1, 8]");
  EXPECT_EQ(g.parameterCount(), 8 * 3 * 3 * 3 + 5 * 8);
}

TEST(ShapeInference, LayerNorm) {
  const Graph g = inferred("layer_norm");
  EXPECT_EQ(shapeOf(g, "y"), "fp32[4, 10, 64]");
  EXPECT_EQ(shapeOf(g, "mean"), "fp32[4, 10]");
}

TEST(ShapeInference, UnboundSymbolicDimensionSaysHowToBindIt) {
  Result<Graph> g = importOnnx(model("mlp"));
  ASSERT_TRUE(g.ok());
  const Status s = inferShapes(*g);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), model("mlp") +
                             ": graph input 'x' [batch, 16] has the symbolic dimension "
                             "'batch' (dimension 0); give it a size (--dim batch=N)");
}

TEST(ShapeInference, UnknownOperatorNamesNodeOpAndInputs) {
  Result<Graph> g = importOnnx(model("unknown_op"));
  ASSERT_TRUE(g.ok()) << g.status().toString();
  const Status s = inferShapes(*g);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::kUnsupported);
  EXPECT_EQ(s.message(), model("unknown_op") +
                             ": node 'fancy' (FancyOp) with inputs 'x': fp32[2, 3]: the operator "
                             "'FancyOp' is not supported by the graph compiler");
}

TEST(ShapeInference, MatMulMismatchNamesNodeAndInputs) {
  Result<Graph> g = importOnnx(model("matmul_mismatch"));
  ASSERT_TRUE(g.ok()) << g.status().toString();
  const Status s = inferShapes(*g);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(s.message(), model("matmul_mismatch") +
                             ": node 'mm_bad' (MatMul) with inputs 'x': fp32[2, 3], 'w': fp32[4, "
                             "5]: the inner dimensions differ: A [2, 3] has 3 columns but B [4, 5] "
                             "has 4 rows");
}

TEST(ShapeInference, SupportsTheIssuesOperatorList) {
  const std::vector<std::string> ops = supportedShapeOps();
  for (const char* op : {"MatMul",
                         "Gemm",
                         "Add",
                         "Sub",
                         "Mul",
                         "Div",
                         "Pow",
                         "Sqrt",
                         "Exp",
                         "Tanh",
                         "Erf",
                         "Sigmoid",
                         "Relu",
                         "Gelu",
                         "Softmax",
                         "LayerNormalization",
                         "ReduceMean",
                         "ReduceSum",
                         "ReduceMax",
                         "Reshape",
                         "Transpose",
                         "Squeeze",
                         "Unsqueeze",
                         "Concat",
                         "Split",
                         "Slice",
                         "Gather",
                         "Expand",
                         "Where",
                         "Cast",
                         "Shape",
                         "Constant",
                         "Conv",
                         "MaxPool",
                         "AveragePool",
                         "GlobalAveragePool",
                         "BatchNormalization",
                         "Flatten"}) {
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
  }
}

}  // namespace
}  // namespace trn::graph
