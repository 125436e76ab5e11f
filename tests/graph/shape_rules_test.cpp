// Shape rules one operator at a time, on graphs built in memory, against ONNX's semantics:
// broadcasting, MatMul's vector cases, Reshape's 0 and -1, Slice's clamping, Conv and pool
// windows, and the errors that name the node.
#include <gtest/gtest.h>

#include "graph_builder.h"
#include "trn/graph/shape_inference.h"

namespace trn::graph {
namespace {

using fixtures::attr;
using fixtures::GraphBuilder;
using fixtures::sizesOf;
using fixtures::textAttr;
using Sizes = std::vector<std::int64_t>;

/// Infers `b`'s shapes and returns the sizes of `value` ({-1} on failure).
Sizes infer(GraphBuilder& b, const std::string& value = "y") {
  const Status s = inferShapes(b.graph());
  EXPECT_TRUE(s.ok()) << s.toString();
  return sizesOf(b.graph(), value);
}

std::string failure(GraphBuilder& b) {
  const Status s = inferShapes(b.graph());
  EXPECT_FALSE(s.ok());
  return s.message();
}

TEST(ShapeRules, BroadcastingIsMultidirectional) {
  GraphBuilder b;
  b.input("a", {8, 1, 6, 1}).input("c", {7, 1, 5}).node("Add", {"a", "c"}, {"y"});
  EXPECT_EQ(infer(b), (Sizes{8, 7, 6, 5}));
  GraphBuilder bad;
  bad.input("a", {2, 3}).input("c", {4}).node("Mul", {"a", "c"}, {"y"});
  EXPECT_NE(failure(bad).find("node 'Mul_0' (Mul) with inputs 'a': fp32[2, 3], 'c': fp32[4]: "
                              "shapes [2, 3] and [4] do not broadcast"),
            std::string::npos);
}

TEST(ShapeRules, MatMulVectorAndBatchCases) {
  GraphBuilder b;
  b.input("v", {3})
      .input("m", {5, 3, 4})
      .input("w", {4})
      .input("a", {2, 1, 6, 3})
      .node("MatMul", {"v", "m"}, {"vm"})
      .node("MatMul", {"m", "w"}, {"mw"})
      .node("MatMul", {"a", "m"}, {"am"});
  ASSERT_TRUE(inferShapes(b.graph()).ok());
  EXPECT_EQ(sizesOf(b.graph(), "vm"), (Sizes{5, 4}));
  EXPECT_EQ(sizesOf(b.graph(), "mw"), (Sizes{5, 3}));
  EXPECT_EQ(sizesOf(b.graph(), "am"), (Sizes{2, 5, 6, 4}));
}

TEST(ShapeRules, GemmTransposes) {
  GraphBuilder b;
  b.input("a", {7, 3})
      .weight("w", {5, 7})
      .weight("c", {5})
      .node("Gemm", {"a", "w", "c"}, {"y"}, {attr("transA", 1), attr("transB", 1)});
  EXPECT_EQ(infer(b), (Sizes{3, 5}));
}

TEST(ShapeRules, ReshapeCopiesZerosAndInfersMinusOne) {
  GraphBuilder b;
  b.input("x", {2, 3, 4}).ints("s", {0, -1}).node("Reshape", {"x", "s"}, {"y"});
  EXPECT_EQ(infer(b), (Sizes{2, 12}));
  GraphBuilder bad;
  bad.input("x", {2, 3, 4}).ints("s", {5, -1}).node("Reshape", {"x", "s"}, {"y"});
  EXPECT_NE(failure(bad).find("cannot reshape [2, 3, 4] (24 elements) to [5, -1]"),
            std::string::npos);
}

TEST(ShapeRules, ReshapeOfAnUnknownShapeIsUnresolved) {
  GraphBuilder b;
  b.input("x", {2, 3}).input("s", {2}, ElementType::kInt64).node("Reshape", {"x", "s"}, {"y"});
  const Status s = inferShapes(b.graph());
  EXPECT_EQ(s.code(), ErrorCode::kUnsupported);
  EXPECT_NE(s.message().find("the shape ('s') is not known at compile time"), std::string::npos)
      << s.message();
}

TEST(ShapeRules, TransposeSqueezeUnsqueezeFlatten) {
  GraphBuilder b;
  b.input("x", {2, 1, 3})
      .ints("ax", {1})
      .ints("ax2", {0, -1})
      .node("Transpose", {"x"}, {"t"}, {attr("perm", Sizes{2, 0, 1})})
      .node("Transpose", {"x"}, {"r"})
      .node("Squeeze", {"x", "ax"}, {"s"})
      .node("Squeeze", {"x"}, {"s_all"})
      .node("Unsqueeze", {"x", "ax2"}, {"u"})
      .node("Flatten", {"x"}, {"f"}, {attr("axis", 2)});
  ASSERT_TRUE(inferShapes(b.graph()).ok());
  EXPECT_EQ(sizesOf(b.graph(), "t"), (Sizes{3, 2, 1}));
  EXPECT_EQ(sizesOf(b.graph(), "r"), (Sizes{3, 1, 2}));
  EXPECT_EQ(sizesOf(b.graph(), "s"), (Sizes{2, 3}));
  EXPECT_EQ(sizesOf(b.graph(), "s_all"), (Sizes{2, 3}));
  EXPECT_EQ(sizesOf(b.graph(), "u"), (Sizes{1, 2, 1, 3, 1}));
  EXPECT_EQ(sizesOf(b.graph(), "f"), (Sizes{2, 3}));
}

TEST(ShapeRules, SliceClampsNegativeAndHugeIndices) {
  GraphBuilder b;
  b.input("x", {10, 20, 5})
      .ints("starts", {-3, 1, 4})
      .ints("ends", {INT64_MAX, -1, -100})
      .ints("axes", {0, 1, 2})
      .ints("steps", {1, 3, -2})
      .node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
  EXPECT_EQ(infer(b), (Sizes{3, 6, 3}));
}

TEST(ShapeRules, SplitConcatGatherExpand) {
  GraphBuilder b;
  b.input("x", {6, 4})
      .ints("parts", {2, 4})
      .ints("idx", {0, 2, 1}, {3})
      .ints("shape", {3, 1, 4})
      .node("Split", {"x", "parts"}, {"p0", "p1"}, {attr("axis", 0)})
      .node("Split", {"x"}, {"q0", "q1", "q2"})
      .node("Concat", {"p1", "x"}, {"c"}, {attr("axis", 0)})
      .node("Gather", {"x", "idx"}, {"g"}, {attr("axis", 1)})
      .node("Expand", {"x", "shape"}, {"e"});
  ASSERT_TRUE(inferShapes(b.graph()).ok());
  EXPECT_EQ(sizesOf(b.graph(), "p0"), (Sizes{2, 4}));
  EXPECT_EQ(sizesOf(b.graph(), "p1"), (Sizes{4, 4}));
  EXPECT_EQ(sizesOf(b.graph(), "q2"), (Sizes{2, 4}));
  EXPECT_EQ(sizesOf(b.graph(), "c"), (Sizes{10, 4}));
  EXPECT_EQ(sizesOf(b.graph(), "g"), (Sizes{6, 3}));
  EXPECT_EQ(sizesOf(b.graph(), "e"), (Sizes{3, 6, 4}));
}

TEST(ShapeRules, GatherIndexOutOfRange) {
  GraphBuilder b;
  b.input("x", {6, 4}).ints("idx", {4}).node("Gather", {"x", "idx"}, {"y"}, {attr("axis", 1)});
  EXPECT_NE(failure(b).find("index 4 is out of range for dimension 1 of size 4"),
            std::string::npos);
}

TEST(ShapeRules, ReductionsKeepOrDropAxes) {
  GraphBuilder b;
  b.input("x", {2, 3, 4})
      .ints("axes", {1})
      .node("ReduceSum", {"x", "axes"}, {"s"})
      .node("ReduceMax", {"x"}, {"m"}, {attr("axes", Sizes{0, -1}), attr("keepdims", 0)})
      .node("ReduceMean", {"x"}, {"all"}, {attr("keepdims", 0)});
  ASSERT_TRUE(inferShapes(b.graph()).ok());
  EXPECT_EQ(sizesOf(b.graph(), "s"), (Sizes{2, 1, 4}));
  EXPECT_EQ(sizesOf(b.graph(), "m"), (Sizes{3}));
  EXPECT_EQ(sizesOf(b.graph(), "all"), (Sizes{}));
}

TEST(ShapeRules, LayerNormStatistics) {
  GraphBuilder b;
  b.input("x", {2, 5, 8})
      .weight("g", {5, 8})
      .node("LayerNormalization", {"x", "g"}, {"y", "mean", "inv"}, {attr("axis", 1)});
  ASSERT_TRUE(inferShapes(b.graph()).ok());
  EXPECT_EQ(sizesOf(b.graph(), "y"), (Sizes{2, 5, 8}));
  EXPECT_EQ(sizesOf(b.graph(), "mean"), (Sizes{2, 1, 1}));
}

TEST(ShapeRules, WhereCastShapeAndComparisons) {
  GraphBuilder b;
  b.input("x", {3, 1})
      .input("z", {4})
      .node("Less", {"x", "z"}, {"mask"})
      .node("Where", {"mask", "x", "z"}, {"w"})
      .node("Cast", {"w"}, {"h"}, {attr("to", 10)})
      .node("Shape", {"h"}, {"y"});
  ASSERT_TRUE(inferShapes(b.graph()).ok());
  EXPECT_EQ(describeValue(*b.graph().value("mask")), "bool[3, 4]");
  EXPECT_EQ(describeValue(*b.graph().value("w")), "fp32[3, 4]");
  EXPECT_EQ(describeValue(*b.graph().value("h")), "fp16[3, 4]");
  EXPECT_EQ(describeValue(*b.graph().value("y")), "int64[2]");
}

TEST(ShapeRules, ConvPadsStridesDilationsGroupsAndAutoPad) {
  GraphBuilder b;
  b.input("x", {1, 4, 15, 15})
      .weight("w", {6, 2, 3, 3})
      .node("Conv", {"x", "w"}, {"c"},
            {attr("group", 2), attr("pads", Sizes{1, 1, 1, 1}), attr("strides", Sizes{2, 2}),
             attr("dilations", Sizes{2, 1})})
      .node("Conv", {"x", "w"}, {"same"},
            {attr("group", 2), textAttr("auto_pad", "SAME_UPPER"), attr("strides", Sizes{2, 2})})
      .node("Conv", {"x", "w"}, {"valid"}, {attr("group", 2), textAttr("auto_pad", "VALID")});
  ASSERT_TRUE(inferShapes(b.graph()).ok());
  // Height: (15 + 2 - 2*(3-1) - 1) / 2 + 1 = 7; width: (15 + 2 - 3) / 2 + 1 = 8.
  EXPECT_EQ(sizesOf(b.graph(), "c"), (Sizes{1, 6, 7, 8}));
  EXPECT_EQ(sizesOf(b.graph(), "same"), (Sizes{1, 6, 8, 8}));
  EXPECT_EQ(sizesOf(b.graph(), "valid"), (Sizes{1, 6, 13, 13}));
}

TEST(ShapeRules, UnaryTypes) {
  GraphBuilder b;
  b.input("i", {3}, ElementType::kInt32).node("Relu", {"i"}, {"y"});
  EXPECT_EQ(infer(b), (Sizes{3}));
  GraphBuilder bad;
  bad.input("i", {3}, ElementType::kInt32).node("Exp", {"i"}, {"y"});
  EXPECT_NE(failure(bad).find("Exp needs a floating-point input, not int32"), std::string::npos);
}

TEST(ShapeRules, ConvChannelMismatch) {
  GraphBuilder b;
  b.input("x", {1, 3, 8, 8}).weight("w", {6, 4, 3, 3}).node("Conv", {"x", "w"}, {"y"});
  EXPECT_NE(failure(b).find("W [6, 4, 3, 3] expects 4 input channels per group but X [1, 3, 8, "
                            "8] has 3 channels in 1 groups"),
            std::string::npos);
}

TEST(ShapeRules, PoolCeilModeAndGlobalPools) {
  GraphBuilder b;
  b.input("x", {1, 2, 7, 6})
      .node("MaxPool", {"x"}, {"floor"},
            {attr("kernel_shape", Sizes{2, 2}), attr("strides", Sizes{2, 2})})
      .node("MaxPool", {"x"}, {"ceil"},
            {attr("kernel_shape", Sizes{2, 2}), attr("strides", Sizes{2, 2}), attr("ceil_mode", 1)})
      .node("AveragePool", {"x"}, {"avg"},
            {attr("kernel_shape", Sizes{3, 3}), attr("pads", Sizes{1, 1, 1, 1})})
      .node("GlobalMaxPool", {"x"}, {"g"});
  ASSERT_TRUE(inferShapes(b.graph()).ok());
  EXPECT_EQ(sizesOf(b.graph(), "floor"), (Sizes{1, 2, 3, 3}));
  EXPECT_EQ(sizesOf(b.graph(), "ceil"), (Sizes{1, 2, 4, 3}));
  EXPECT_EQ(sizesOf(b.graph(), "avg"), (Sizes{1, 2, 7, 6}));
  EXPECT_EQ(sizesOf(b.graph(), "g"), (Sizes{1, 2, 1, 1}));
}

TEST(ShapeRules, ConstantsFlowIntoShapes) {
  GraphBuilder b;
  b.input("x", {4, 6})
      .ints("two", {2}, {})
      .node("Shape", {"x"}, {"s"})
      .node("Div", {"s", "two"}, {"half"})
      .node("Concat", {"half", "half"}, {"s4"}, {attr("axis", 0)})
      .node("ConstantOfShape", {"s4"}, {"y"});
  ASSERT_TRUE(inferShapes(b.graph()).ok());
  EXPECT_EQ(sizesOf(b.graph(), "y"), (Sizes{2, 3, 2, 3}));
}

}  // namespace
}  // namespace trn::graph
