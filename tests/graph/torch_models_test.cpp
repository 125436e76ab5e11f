// Models exported by PyTorch 1.13 (scripts/export_torch_models.py): a transformer block whose
// reshape targets the exporter computes from the input's shape with a dynamic batch, and a small
// CNN. Import and shape inference resolve every value, at any batch size.
#include <gtest/gtest.h>

#include "trn/graph/onnx_import.h"
#include "trn/graph/shape_inference.h"

namespace trn::graph {
namespace {

Graph inferred(const std::string& name, std::int64_t batch) {
  Result<Graph> g =
      importOnnx(std::string(TRN_SOURCE_DIR) + "/tests/graph/models/" + name + ".onnx");
  EXPECT_TRUE(g.ok()) << g.status().toString();
  const Status s = inferShapes(*g, {.symbols = {{"batch", batch}}});
  EXPECT_TRUE(s.ok()) << s.toString();
  return std::move(g).value();
}

std::string shapeOf(const Graph& g, const std::string& value) {
  return describeValue(*g.value(value));
}

TEST(TorchModels, TransformerBlockAtTwoBatchSizes) {
  for (std::int64_t batch : {2, 5}) {
    const Graph g = inferred("torch_block", batch);
    EXPECT_EQ(g.producer, "pytorch 1.13.0");
    const std::string b = std::to_string(batch);
    EXPECT_EQ(shapeOf(g, "/Concat_output_0"), "int64[4]");
    EXPECT_EQ(shapeOf(g, "/Reshape_output_0"), "fp32[" + b + ", 8, 4, 4]");
    EXPECT_EQ(shapeOf(g, "/MatMul_output_0"), "fp32[" + b + ", 4, 8, 8]");
    EXPECT_EQ(shapeOf(g, "/Softmax_output_0"), "fp32[" + b + ", 4, 8, 8]");
    EXPECT_EQ(shapeOf(g, "/Reshape_3_output_0"), "fp32[" + b + ", 8, 16]");
    EXPECT_EQ(shapeOf(g, "/up/Add_output_0"), "fp32[" + b + ", 8, 32]");
    EXPECT_EQ(shapeOf(g, "y"), "fp32[" + b + ", 8, 16]");
    for (const auto& [name, value] : g.values) {
      EXPECT_TRUE(value.shape && value.shape->isStatic()) << name;
    }
  }
}

TEST(TorchModels, Cnn) {
  const Graph g = inferred("torch_cnn", 1);
  EXPECT_EQ(shapeOf(g, "/features/features.3/MaxPool_output_0"), "fp32[1, 8, 16, 16]");
  EXPECT_EQ(shapeOf(g, "/features/features.4/Conv_output_0"), "fp32[1, 16, 8, 8]");
  EXPECT_EQ(shapeOf(g, "y"), "fp32[1, 10]");
  // The exporter folded the batch norm into the first convolution.
  EXPECT_EQ(g.parameterCount(), 8 * 3 * 3 * 3 + 8 + 16 * 8 * 3 * 3 + 16 + 10 * 16 + 10);
}

}  // namespace
}  // namespace trn::graph
