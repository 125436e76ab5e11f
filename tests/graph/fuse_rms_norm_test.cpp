// Tests of the RMS-norm fusion pass (fuse_rms_norm.h) on graphs built as PyTorch exports Llama's
// RMSNorm (x * rsqrt(mean(x^2) + eps) * w: Pow, ReduceMean, Add, Sqrt, Div(1, .), Mul, Mul), its
// Reciprocal and x / sqrt forms, and forms that must stay as they are. Each fused graph is
// compiled and run, its output checked against a float64 computation from the definition and
// against the same graph unfused, at LNC=1 and 2.
#include "trn/graph/fuse_rms_norm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "graph_builder.h"
#include "model_check.h"
#include "trn/graph/model.h"
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

std::vector<float> activations() { return wave(kBatch * kTokens * kDim, 0.37, 2.0, 0.0); }
std::vector<float> weights() { return wave(kDim, 0.71, 0.5, 1.0); }

enum class Form { kDivOne, kReciprocal, kDivide };

/// Llama's RMSNorm of x [2, 100, 96] as PyTorch exports it (Form::kDivOne: rsqrt as Div(1, Sqrt));
/// kReciprocal takes Reciprocal for the Div, kDivide divides x by the root.
Graph rmsNorm(Form form) {
  GraphBuilder g;
  g.input("x", {kBatch, kTokens, kDim});
  addFloats(g.graph(), "w", {kDim}, weights());
  addFloats(g.graph(), "two", {}, {2.0f});
  addFloats(g.graph(), "eps", {}, {kEps});
  addFloats(g.graph(), "one", {}, {1.0f});
  g.node("Pow", {"x", "two"}, {"sq"})
      .node("ReduceMean", {"sq"}, {"ms"},
            {attr("axes", std::vector<std::int64_t>{-1}), attr("keepdims", 1)})
      .node("Add", {"ms", "eps"}, {"ms_eps"})
      .node("Sqrt", {"ms_eps"}, {"root"});
  if (form == Form::kDivide) {
    g.node("Div", {"x", "root"}, {"normed"});
  } else {
    if (form == Form::kReciprocal) {
      g.node("Reciprocal", {"root"}, {"rstd"});
    } else {
      g.node("Div", {"one", "root"}, {"rstd"});
    }
    g.node("Mul", {"x", "rstd"}, {"normed"});
  }
  g.node("Mul", {"normed", "w"}, {"y"}).output("y");
  return g.graph();
}

std::vector<double> reference() {
  const std::vector<float> x = activations();
  const std::vector<float> w = weights();
  std::vector<double> out(x.size());
  for (std::int64_t r = 0; r < kBatch * kTokens; ++r) {
    double sumSq = 0;
    for (std::int64_t c = 0; c < kDim; ++c) {
      const double v = x[static_cast<std::size_t>(r * kDim + c)];
      sumSq += v * v;
    }
    const double rstd = 1.0 / std::sqrt(sumSq / kDim + static_cast<double>(kEps));
    for (std::int64_t c = 0; c < kDim; ++c) {
      const auto i = static_cast<std::size_t>(r * kDim + c);
      out[i] = x[i] * rstd * w[static_cast<std::size_t>(c)];
    }
  }
  return out;
}

std::vector<float> run(Graph graph, int lnc = 1) {
  return fixtures::runFunctional(
      std::move(graph), {runtime::floatArray({kBatch, kTokens, kDim}, activations())}, {}, lnc);
}

/// fp32: |x| <= 2 and |w| <= 1.5 give outputs under 3 / rms; a sum of 96 squares and a few
/// roundings of the result (2^-24 relative each) keep the error under 1e-5 at these sizes.
constexpr double kTolerance = 1e-5;

int fuse(Graph& graph) {
  EXPECT_TRUE(inferShapes(graph, {}).ok());
  Result<int> fused = fuseRmsNorm(graph);
  EXPECT_TRUE(fused.ok()) << fused.status().toString();
  return fused.ok() ? *fused : -1;
}

TEST(FuseRmsNorm, TheExportedFormsBecomeOneNode) {
  for (const Form form : {Form::kDivOne, Form::kReciprocal, Form::kDivide}) {
    Graph graph = rmsNorm(form);
    ASSERT_TRUE(inferShapes(graph, {}).ok());
    Graph unfused = graph;
    ASSERT_EQ(fuse(graph), 1);
    ASSERT_EQ(graph.nodes.size(), 1u);
    const Node& node = graph.nodes[0];
    EXPECT_EQ(node.domain, "trn");
    EXPECT_EQ(node.opType, "RmsNorm");
    EXPECT_EQ(node.inputs, (std::vector<std::string>{"x", "w"}));
    EXPECT_EQ(node.outputs, std::vector<std::string>{"y"});
    EXPECT_FLOAT_EQ(*node.floatAttribute("epsilon"), kEps);
    EXPECT_EQ(graph.initializer("eps"), nullptr);
    EXPECT_EQ(graph.value("ms"), nullptr);

    const std::vector<float> got = run(graph);
    EXPECT_LT(worstError(got, reference()), kTolerance);
    EXPECT_LT(worstError(got, run(std::move(unfused))), kTolerance);
    if (form == Form::kDivOne) {
      // Two cores: each normalises its share of the row tiles.
      EXPECT_LT(worstError(run(graph, 2), reference()), kTolerance);
    }
  }
}

TEST(FuseRmsNorm, FormsTheKernelDoesNotTakeStayAsTheyAre) {
  // eps a graph input, not a constant.
  {
    Graph graph = rmsNorm(Form::kDivOne);
    graph.initializers.erase("eps");
    graph.inputs.push_back("eps");
    EXPECT_EQ(fuse(graph), 0);
    EXPECT_EQ(graph.nodes.size(), 7u);
  }
  // The mean of squares is also an output.
  {
    Graph graph = rmsNorm(Form::kDivOne);
    graph.outputs.push_back("ms");
    EXPECT_EQ(fuse(graph), 0);
  }
  // A cube, not a square.
  {
    Graph graph = rmsNorm(Form::kDivOne);
    addFloats(graph, "two", {}, {3.0f});
    EXPECT_EQ(fuse(graph), 0);
  }
  // A mean over another axis than the last.
  {
    Graph graph = rmsNorm(Form::kDivOne);
    graph.nodes[1].attributes[0] = attr("axes", std::vector<std::int64_t>{1});
    EXPECT_EQ(fuse(graph), 0);
  }
  // A weight of one element broadcast over D is not a vector of D.
  {
    Graph graph = rmsNorm(Form::kDivOne);
    addFloats(graph, "w", {1}, {0.5f});
    EXPECT_EQ(fuse(graph), 0);
  }
}

}  // namespace
}  // namespace trn::graph
