// Tests of the layer-norm fusion pass (fuse_layer_norm.h) on graphs built as PyTorch exports a
// LayerNorm written out (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add), its
// reciprocal form, without a bias, and forms that must stay as they are. Each fused graph is
// compiled and run, its output checked against a float64 computation from the definition and
// against the same graph unfused, at LNC=1 and 2.
#include "trn/graph/fuse_layer_norm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "graph_builder.h"
#include "model_check.h"
#include "trn/graph/fuse_rms_norm.h"
#include "trn/graph/shape_inference.h"
#include "trn/runtime/session.h"

namespace trn::graph {
namespace {

using fixtures::addFloats;
using fixtures::attr;
using fixtures::GraphBuilder;
using fixtures::wave;
using fixtures::worstError;

constexpr std::int64_t kBatch = 2;
constexpr std::int64_t kTokens = 100;  // 200 rows: a full 128-row tile and a ragged one
constexpr std::int64_t kDim = 96;
constexpr float kEps = 1e-5f;

// Rows with a mean far from zero, so that the subtraction matters.
std::vector<float> activations() { return wave(kBatch * kTokens * kDim, 0.37, 2.0, 1.5); }
std::vector<float> weights() { return wave(kDim, 0.71, 0.5, 1.0); }
std::vector<float> biases() { return wave(kDim, 0.53, 0.25, -0.1); }

enum class Form { kDivide, kReciprocal, kNoBias };

/// A LayerNorm of x [2, 100, 96] written out as PyTorch exports nn.LayerNorm below opset 17
/// (Form::kDivide); kReciprocal multiplies by Reciprocal(root) and puts w and b first; kNoBias
/// stops at the weight.
Graph layerNorm(Form form) {
  GraphBuilder g;
  g.input("x", {kBatch, kTokens, kDim});
  addFloats(g.graph(), "w", {kDim}, weights());
  addFloats(g.graph(), "b", {kDim}, biases());
  addFloats(g.graph(), "two", {}, {2.0f});
  addFloats(g.graph(), "eps", {}, {kEps});
  const auto lastAxis = attr("axes", std::vector<std::int64_t>{-1});
  g.node("ReduceMean", {"x"}, {"mean"}, {lastAxis, attr("keepdims", 1)})
      .node("Sub", {"x", "mean"}, {"d"})
      .node("Pow", {"d", "two"}, {"sq"})
      .node("ReduceMean", {"sq"}, {"var"}, {lastAxis, attr("keepdims", 1)})
      .node("Add", {"var", "eps"}, {"var_eps"})
      .node("Sqrt", {"var_eps"}, {"root"});
  if (form == Form::kReciprocal) {
    g.node("Reciprocal", {"root"}, {"rstd"}).node("Mul", {"rstd", "d"}, {"normed"});
    g.node("Mul", {"w", "normed"}, {"scaled"}).node("Add", {"b", "scaled"}, {"y"});
  } else {
    g.node("Div", {"d", "root"}, {"normed"});
    if (form == Form::kNoBias) {
      g.node("Mul", {"normed", "w"}, {"y"});
    } else {
      g.node("Mul", {"normed", "w"}, {"scaled"}).node("Add", {"scaled", "b"}, {"y"});
    }
  }
  g.output("y");
  return g.graph();
}

std::vector<double> reference(bool bias) {
  const std::vector<float> x = activations();
  const std::vector<float> w = weights();
  const std::vector<float> b = biases();
  std::vector<double> out(x.size());
  for (std::int64_t r = 0; r < kBatch * kTokens; ++r) {
    double sum = 0;
    for (std::int64_t c = 0; c < kDim; ++c) {
      sum += x[static_cast<std::size_t>(r * kDim + c)];
    }
    const double mean = sum / kDim;
    double squares = 0;
    for (std::int64_t c = 0; c < kDim; ++c) {
      const double d = x[static_cast<std::size_t>(r * kDim + c)] - mean;
      squares += d * d;
    }
    const double rstd = 1.0 / std::sqrt(squares / kDim + static_cast<double>(kEps));
    for (std::int64_t c = 0; c < kDim; ++c) {
      const auto i = static_cast<std::size_t>(r * kDim + c);
      const auto k = static_cast<std::size_t>(c);
      out[i] = (x[i] - mean) * rstd * w[k] + (bias ? b[k] : 0.0);
    }
  }
  return out;
}

std::vector<float> run(Graph graph, int lnc = 1) {
  return fixtures::runFunctional(
      std::move(graph), {runtime::floatArray({kBatch, kTokens, kDim}, activations())}, {}, lnc);
}

/// fp32: |x - mean| <= 4 over a standard deviation of about 1.4, |w| <= 1.5: outputs under 5; two
/// sums of 96 terms and a few roundings of the result (2^-24 relative each) keep the error under
/// 1e-5 at these sizes.
constexpr double kTolerance = 1e-5;

int fuse(Graph& graph) {
  EXPECT_TRUE(inferShapes(graph, {}).ok());
  Result<int> fused = fuseLayerNorm(graph);
  EXPECT_TRUE(fused.ok()) << fused.status().toString();
  return fused.ok() ? *fused : -1;
}

TEST(FuseLayerNorm, TheExportedFormsBecomeOneLayerNormalization) {
  for (const Form form : {Form::kDivide, Form::kReciprocal, Form::kNoBias}) {
    Graph graph = layerNorm(form);
    ASSERT_TRUE(inferShapes(graph, {}).ok());
    Graph unfused = graph;
    ASSERT_EQ(fuse(graph), 1);
    ASSERT_EQ(graph.nodes.size(), 1u);
    const Node& node = graph.nodes[0];
    EXPECT_EQ(node.domain, "");
    EXPECT_EQ(node.opType, "LayerNormalization");
    const bool bias = form != Form::kNoBias;
    EXPECT_EQ(node.inputs, bias ? (std::vector<std::string>{"x", "w", "b"})
                                : (std::vector<std::string>{"x", "w"}));
    EXPECT_EQ(node.outputs, std::vector<std::string>{"y"});
    EXPECT_EQ(node.intAttribute("axis"), -1);
    EXPECT_FLOAT_EQ(*node.floatAttribute("epsilon"), kEps);
    EXPECT_EQ(graph.initializer("eps"), nullptr);
    EXPECT_EQ(graph.value("d"), nullptr);

    const std::vector<float> got = run(graph);
    EXPECT_LT(worstError(got, reference(bias)), kTolerance);
    EXPECT_LT(worstError(got, run(std::move(unfused))), kTolerance);
    if (form == Form::kDivide) {
      // Two cores: each normalises its share of the row tiles.
      EXPECT_LT(worstError(run(graph, 2), reference(bias)), kTolerance);
    }
  }
}

// Before this pass ran, the RMS-norm pass took a LayerNorm's tail as the RMS norm of x - mean;
// it finds nothing left once the layer norm is fused.
TEST(FuseLayerNorm, LeavesNothingForTheRmsNormPass) {
  Graph before = layerNorm(Form::kDivide);
  ASSERT_TRUE(inferShapes(before, {}).ok());
  Result<int> asRms = fuseRmsNorm(before);
  ASSERT_TRUE(asRms.ok());
  EXPECT_EQ(*asRms, 1);
  Graph graph = layerNorm(Form::kDivide);
  ASSERT_EQ(fuse(graph), 1);
  Result<int> rms = fuseRmsNorm(graph);
  ASSERT_TRUE(rms.ok());
  EXPECT_EQ(*rms, 0);
}

TEST(FuseLayerNorm, FormsTheKernelDoesNotTakeStayAsTheyAre) {
  // x - mean is also read elsewhere (here, a graph output).
  {
    Graph graph = layerNorm(Form::kDivide);
    graph.outputs.push_back("d");
    EXPECT_EQ(fuse(graph), 0);
  }
  // mean - x, not x - mean.
  {
    Graph graph = layerNorm(Form::kDivide);
    graph.nodes[1].inputs = {"mean", "x"};
    EXPECT_EQ(fuse(graph), 0);
  }
  // The variance of another value than x - mean.
  {
    Graph graph = layerNorm(Form::kDivide);
    graph.nodes[2].inputs = {"x", "two"};
    EXPECT_EQ(fuse(graph), 0);
  }
  // A mean over another axis than the last.
  {
    Graph graph = layerNorm(Form::kDivide);
    graph.nodes[0].attributes[0] = attr("axes", std::vector<std::int64_t>{1});
    EXPECT_EQ(fuse(graph), 0);
  }
  // eps a graph input, not a constant.
  {
    Graph graph = layerNorm(Form::kDivide);
    graph.initializers.erase("eps");
    graph.inputs.push_back("eps");
    EXPECT_EQ(fuse(graph), 0);
    EXPECT_EQ(graph.nodes.size(), 9u);
  }
  // A weight of one element broadcast over D is not a vector of D.
  {
    Graph graph = layerNorm(Form::kDivide);
    addFloats(graph, "w", {1}, {0.5f});
    EXPECT_EQ(fuse(graph), 0);
  }
}

}  // namespace
}  // namespace trn::graph
