// Tests of the rotary-embedding fusion pass (fuse_rope.h) on graphs built as PyTorch exports
// x * cos + rotate_half(x) * sin (two Slices of the last axis, Neg, Concat, two Muls, Add) and on
// forms that must stay as they are. Each fused graph is compiled and run, its output checked
// against a float64 computation from the definition and against the same graph unfused, at
// LNC=1 and 2. The tables' two halves differ here, so a kernel that read one half for both would
// fail.
#include "trn/graph/fuse_rope.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "graph_builder.h"
#include "model_check.h"
#include "trn/graph/model.h"
#include "trn/graph/shape_inference.h"
#include "trn/runtime/session.h"

namespace trn::graph {
namespace {

using fixtures::attr;
using fixtures::GraphBuilder;
using fixtures::worstError;

constexpr std::int64_t kB = 2;
constexpr std::int64_t kH = 3;
constexpr std::int64_t kS = 24;
constexpr std::int64_t kD = 16;

std::vector<float> wave(std::int64_t count, double step, double amplitude) {
  std::vector<float> values(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<float>(amplitude * std::sin(step * static_cast<double>(i) + 0.3));
  }
  return values;
}

std::vector<float> activations() { return wave(kB * kH * kS * kD, 0.37, 1.0); }
std::vector<float> cosTable() { return wave(kS * kD, 0.13, 1.0); }
std::vector<float> sinTable() { return wave(kS * kD, 0.29, 1.0); }

/// q * cos + rotate_half(q) * sin for q [B, H, S, D] and cos, sin [S, D] inputs, as PyTorch
/// exports Hugging Face's apply_rotary_pos_emb.
Graph rope() {
  GraphBuilder g;
  g.input("q", {kB, kH, kS, kD}).input("cos", {kS, kD}).input("sin", {kS, kD});
  g.ints("half", {kD / 2})
      .ints("zero", {0})
      .ints("end", {std::numeric_limits<std::int64_t>::max()})
      .ints("last", {-1})
      .ints("one", {1});
  g.node("Mul", {"q", "cos"}, {"q_cos"})
      .node("Slice", {"q", "half", "end", "last", "one"}, {"q_hi"})
      .node("Neg", {"q_hi"}, {"q_hi_neg"})
      .node("Slice", {"q", "zero", "half", "last", "one"}, {"q_lo"})
      .node("Concat", {"q_hi_neg", "q_lo"}, {"q_rot"}, {attr("axis", -1)})
      .node("Mul", {"q_rot", "sin"}, {"q_rot_sin"})
      .node("Add", {"q_cos", "q_rot_sin"}, {"y"})
      .output("y");
  return g.graph();
}

std::vector<double> reference() {
  const std::vector<float> x = activations();
  const std::vector<float> c = cosTable();
  const std::vector<float> s = sinTable();
  std::vector<double> out(x.size());
  const std::int64_t half = kD / 2;
  for (std::int64_t row = 0; row < kB * kH * kS; ++row) {
    const std::int64_t t = row % kS;
    for (std::int64_t i = 0; i < kD; ++i) {
      const auto at = [&](std::int64_t j) { return static_cast<std::size_t>(row * kD + j); };
      const double rotated = i < half ? -static_cast<double>(x[at(i + half)]) : x[at(i - half)];
      const auto table = static_cast<std::size_t>(t * kD + i);
      out[at(i)] = x[at(i)] * static_cast<double>(c[table]) + rotated * s[table];
    }
  }
  return out;
}

std::vector<float> run(Graph graph, int lnc = 1) {
  return fixtures::runFunctional(
      std::move(graph),
      {runtime::floatArray({kB, kH, kS, kD}, activations()),
       runtime::floatArray({kS, kD}, cosTable()), runtime::floatArray({kS, kD}, sinTable())},
      {}, lnc);
}

/// fp32: two products of magnitude <= 1 and their sum, each rounded once (2^-24 relative).
constexpr double kTolerance = 1e-6;

int fuse(Graph& graph) {
  EXPECT_TRUE(inferShapes(graph, {}).ok());
  Result<int> fused = fuseRope(graph);
  EXPECT_TRUE(fused.ok()) << fused.status().toString();
  return fused.ok() ? *fused : -1;
}

TEST(FuseRope, RotateHalfBecomesOneNode) {
  Graph graph = rope();
  ASSERT_TRUE(inferShapes(graph, {}).ok());
  Graph unfused = graph;
  ASSERT_EQ(fuse(graph), 1);
  ASSERT_EQ(graph.nodes.size(), 1u);
  const Node& node = graph.nodes[0];
  EXPECT_EQ(node.domain, "trn");
  EXPECT_EQ(node.opType, "Rope");
  EXPECT_EQ(node.inputs, (std::vector<std::string>{"q", "cos", "sin"}));
  EXPECT_EQ(node.outputs, std::vector<std::string>{"y"});
  EXPECT_EQ(graph.value("q_rot"), nullptr);

  const std::vector<float> got = run(graph);
  EXPECT_LT(worstError(got, reference()), kTolerance);
  EXPECT_LT(worstError(got, run(std::move(unfused))), kTolerance);
  // Two cores: each takes its share of the row tiles.
  EXPECT_LT(worstError(run(graph, 2), reference()), kTolerance);
}

TEST(FuseRope, FormsTheKernelDoesNotTakeStayAsTheyAre) {
  // The halves swapped the other way: Concat(x_lo, -x_hi) is not rotate_half.
  {
    Graph graph = rope();
    std::swap(graph.nodes[4].inputs[0], graph.nodes[4].inputs[1]);
    EXPECT_EQ(fuse(graph), 0);
    EXPECT_EQ(graph.nodes.size(), 7u);
  }
  // The rotated value is also an output.
  {
    Graph graph = rope();
    graph.outputs.push_back("q_rot");
    EXPECT_EQ(fuse(graph), 0);
  }
  // Slices and concatenation along another axis than the last.
  {
    Graph graph = rope();
    GraphBuilder g;
    g.ints("axis2", {2});
    graph.initializers["axis2"] = g.graph().initializers["axis2"];
    graph.values["axis2"] = g.graph().values["axis2"];
    graph.nodes[1].inputs[3] = "axis2";
    graph.nodes[3].inputs[3] = "axis2";
    graph.nodes[4].attributes = {attr("axis", 2)};
    EXPECT_EQ(fuse(graph), 0);
  }
  // Tables per batch element ([B, 1, S, D]) are not one [S, D] table.
  {
    Graph graph = rope();
    graph.values["cos"].shape = Shape::of({kB, 1, kS, kD});
    EXPECT_EQ(fuse(graph), 0);
  }
}

}  // namespace
}  // namespace trn::graph
