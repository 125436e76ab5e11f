// Tests of the linear fusion pass (fuse_linear.h) on graphs built as PyTorch exports nn.Linear:
// MatMul and a bias Add for 3-D activations (with the erf form of GELU after it), Gemm for 2-D
// ones as the layout pass leaves it (with Relu after it), and the forms that must stay as they
// are. Each fused graph is compiled and run, its output checked against a float64 computation
// from the definition and against the same graph unfused; at LNC=2 and under auto-cast too.
#include "trn/graph/fuse_linear.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "graph_builder.h"
#include "model_check.h"
#include "trn/graph/layout.h"
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

struct Dims {
  std::int64_t b = 2;
  std::int64_t s = 40;
  std::int64_t k = 96;
  std::int64_t n = 200;
};

std::vector<float> weights(const Dims& d) { return wave(d.k * d.n, 0.23, 0.1); }
std::vector<float> biases(const Dims& d) { return wave(d.n, 0.71, 0.5); }
std::vector<float> activations(const Dims& d) { return wave(d.b * d.s * d.k, 0.37, 1.0); }

/// nn.Linear(k, n) then nn.GELU() on x [b, s, k] as PyTorch 1.13 exports them: MatMul, the bias
/// added on the left, and x * (erf(x / sqrt 2) + 1) * 0.5.
Graph linearGelu(const Dims& d) {
  GraphBuilder g;
  g.input("x", {d.b, d.s, d.k});
  addFloats(g.graph(), "w", {d.k, d.n}, weights(d));
  addFloats(g.graph(), "bias", {d.n}, biases(d));
  addFloats(g.graph(), "root2", {}, {1.4142135381698608f});
  addFloats(g.graph(), "one", {}, {1.0f});
  addFloats(g.graph(), "half", {}, {0.5f});
  g.node("MatMul", {"x", "w"}, {"xw"})
      .node("Add", {"bias", "xw"}, {"h"})
      .node("Div", {"h", "root2"}, {"h_scaled"})
      .node("Erf", {"h_scaled"}, {"h_erf"})
      .node("Add", {"h_erf", "one"}, {"h_erf1"})
      .node("Mul", {"h", "h_erf1"}, {"h_gated"})
      .node("Mul", {"h_gated", "half"}, {"y"})
      .output("y");
  return g.graph();
}

/// nn.Linear(k, n) then nn.ReLU() on x [rows, k] as the layout pass leaves PyTorch's Gemm: the
/// weight stored [k, n], transB cleared.
Graph gemmRelu(const Dims& d) {
  GraphBuilder g;
  g.input("x", {d.b * d.s, d.k});
  addFloats(g.graph(), "w", {d.k, d.n}, weights(d));
  addFloats(g.graph(), "bias", {d.n}, biases(d));
  g.node("Gemm", {"x", "w", "bias"}, {"h"}, {attr("transB", 0)})
      .node("Relu", {"h"}, {"y"})
      .output("y");
  return g.graph();
}

/// x @ w + b then nn.SiLU() as PyTorch exports it, h * sigmoid(h) (a SwiGLU MLP's gate), with
/// the weight a graph input, as in a model exported without its weights.
Graph linearSilu(const Dims& d) {
  GraphBuilder g;
  g.input("x", {d.b, d.s, d.k}).input("w", {d.k, d.n});
  addFloats(g.graph(), "bias", {d.n}, biases(d));
  g.node("MatMul", {"x", "w"}, {"xw"})
      .node("Add", {"xw", "bias"}, {"h"})
      .node("Sigmoid", {"h"}, {"gate"})
      .node("Mul", {"gate", "h"}, {"y"})
      .output("y");
  return g.graph();
}

/// act(x @ w + b) in float64, x [rows, k].
std::vector<double> reference(const Dims& d, double (*act)(double)) {
  const std::vector<float> x = activations(d);
  const std::vector<float> w = weights(d);
  const std::vector<float> b = biases(d);
  const std::int64_t rows = d.b * d.s;
  std::vector<double> out(static_cast<std::size_t>(rows * d.n));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < d.n; ++c) {
      double sum = b[static_cast<std::size_t>(c)];
      for (std::int64_t i = 0; i < d.k; ++i) {
        sum += static_cast<double>(x[static_cast<std::size_t>(r * d.k + i)]) *
               w[static_cast<std::size_t>(i * d.n + c)];
      }
      out[static_cast<std::size_t>(r * d.n + c)] = act(sum);
    }
  }
  return out;
}

double gelu(double v) { return 0.5 * v * std::erfc(-v / std::sqrt(2.0)); }
double relu(double v) { return std::max(v, 0.0); }
double silu(double v) { return v / (1.0 + std::exp(-v)); }

/// Runs `graph` on the activations of `d` shaped `xSizes`; returns its output.
std::vector<float> run(Graph graph, const Dims& d, const std::vector<std::int64_t>& xSizes,
                       const kernel::CompileOptions& compile = {}, int lnc = 1,
                       const std::vector<runtime::NpyArray>& moreInputs = {}) {
  std::vector<runtime::NpyArray> inputs = {runtime::floatArray(xSizes, activations(d))};
  inputs.insert(inputs.end(), moreInputs.begin(), moreInputs.end());
  return fixtures::runFunctional(std::move(graph), inputs, compile, lnc);
}

/// fp32 products over k = 96 terms of |x w| <= 0.1 (sum |x w| <= 9.6): the rounding of the
/// accumulation is below 96 x 2^-24 x 9.6 = 5.5e-5.
constexpr double kTolerance = 1e-4;

TEST(FuseLinear, MatMulBiasAndErfGeluBecomeOneNode) {
  const Dims d;
  Graph graph = linearGelu(d);
  ASSERT_TRUE(inferShapes(graph, {}).ok());
  Graph unfused = graph;
  ASSERT_EQ(graph.nodes.size(), 7u);
  Result<int> fused = fuseLinear(graph);
  ASSERT_TRUE(fused.ok()) << fused.status().toString();
  EXPECT_EQ(*fused, 1);
  ASSERT_EQ(graph.nodes.size(), 1u);
  const Node& node = graph.nodes[0];
  EXPECT_EQ(node.domain, "trn");
  EXPECT_EQ(node.opType, "Linear");
  EXPECT_EQ(node.inputs, (std::vector<std::string>{"x", "w", "bias"}));
  EXPECT_EQ(node.outputs, std::vector<std::string>{"y"});
  const Attribute* activation = node.attribute("activation");
  ASSERT_NE(activation, nullptr);
  EXPECT_EQ(std::get<std::string>(activation->value), "Gelu");
  for (const char* gone : {"root2", "one", "half", "xw", "h"}) {
    EXPECT_EQ(graph.value(gone), nullptr) << gone;
  }

  const std::vector<float> got = run(graph, d, {d.b, d.s, d.k});
  EXPECT_LT(worstError(got, reference(d, gelu)), kTolerance);
  // The unfused nodes round after each step; the fused node once, after the GELU.
  EXPECT_LT(worstError(got, run(std::move(unfused), d, {d.b, d.s, d.k})), kTolerance);
}

TEST(FuseLinear, GemmAndReluBecomeOneNodeThatRunsAtLnc2) {
  const Dims d;
  Graph graph = gemmRelu(d);
  ASSERT_TRUE(inferShapes(graph, {}).ok());
  ASSERT_EQ(*fuseLinear(graph), 1);
  ASSERT_EQ(graph.nodes.size(), 1u);
  EXPECT_EQ(graph.nodes[0].opType, "Linear");
  EXPECT_EQ(graph.nodes[0].inputs.size(), 3u);
  EXPECT_EQ(std::get<std::string>(graph.nodes[0].attribute("activation")->value), "Relu");
  const std::vector<double> want = reference(d, relu);
  EXPECT_LT(worstError(run(graph, d, {d.b * d.s, d.k}), want), kTolerance);
  // Two cores: the library kernel splits the output columns between them.
  EXPECT_LT(worstError(run(graph, d, {d.b * d.s, d.k}, {}, 2), want), kTolerance);
}

TEST(FuseLinear, SiluOfAProductAgainstAGraphInputWeightBecomesOneNode) {
  const Dims d;
  Graph graph = linearSilu(d);
  ASSERT_TRUE(inferShapes(graph, {}).ok());
  Graph unfused = graph;
  ASSERT_EQ(*fuseLinear(graph), 1);
  ASSERT_EQ(graph.nodes.size(), 1u);
  EXPECT_EQ(graph.nodes[0].inputs, (std::vector<std::string>{"x", "w", "bias"}));
  EXPECT_EQ(std::get<std::string>(graph.nodes[0].attribute("activation")->value), "Silu");
  const std::vector<runtime::NpyArray> w = {runtime::floatArray({d.k, d.n}, weights(d))};
  const std::vector<double> want = reference(d, silu);
  const std::vector<std::int64_t> x = {d.b, d.s, d.k};
  EXPECT_LT(worstError(run(graph, d, x, {}, 1, w), want), kTolerance);
  EXPECT_LT(worstError(run(graph, d, x, {}, 2, w), want), kTolerance);
  EXPECT_LT(worstError(run(std::move(unfused), d, x, {}, 1, w), want), kTolerance);
}

/// A SwiGLU MLP as PyTorch exports Llama's: down(silu(gate(x)) * up(x)), no biases.
Graph swiGlu(const Dims& d) {
  GraphBuilder g;
  g.input("x", {d.b, d.s, d.k});
  addFloats(g.graph(), "wg", {d.k, d.n}, weights(d));
  addFloats(g.graph(), "wu", {d.k, d.n}, wave(d.k * d.n, 0.41, 0.1));
  addFloats(g.graph(), "wd", {d.n, d.k}, wave(d.n * d.k, 0.19, 0.05));
  g.node("MatMul", {"x", "wg"}, {"g"})
      .node("Sigmoid", {"g"}, {"g_sigmoid"})
      .node("Mul", {"g", "g_sigmoid"}, {"gate"})
      .node("MatMul", {"x", "wu"}, {"up"})
      .node("Mul", {"gate", "up"}, {"h"})
      .node("MatMul", {"h", "wd"}, {"y"})
      .output("y");
  return g.graph();
}

TEST(FuseLinear, ASwiGluMlpBecomesAGateWithSiluAndAnUpProjectionTimesIt) {
  const Dims d;
  Graph graph = swiGlu(d);
  ASSERT_TRUE(inferShapes(graph, {}).ok());
  Graph unfused = graph;
  ASSERT_EQ(*fuseLinear(graph), 2);
  ASSERT_EQ(graph.nodes.size(), 3u);
  EXPECT_EQ(graph.nodes[0].inputs, (std::vector<std::string>{"x", "wg"}));
  EXPECT_EQ(std::get<std::string>(graph.nodes[0].attribute("activation")->value), "Silu");
  EXPECT_EQ(graph.nodes[1].inputs, (std::vector<std::string>{"x", "wu", "", "gate"}));
  EXPECT_EQ(graph.nodes[1].outputs, std::vector<std::string>{"h"});
  EXPECT_EQ(graph.nodes[2].opType, "MatMul");
  // float64: silu(x wg) * (x wu), then wd.
  const std::vector<float> x = activations(d);
  const std::vector<float> wg = weights(d);
  const std::vector<float> wu = wave(d.k * d.n, 0.41, 0.1);
  const std::vector<float> wd = wave(d.n * d.k, 0.19, 0.05);
  const std::int64_t rows = d.b * d.s;
  std::vector<double> want(static_cast<std::size_t>(rows * d.k));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < d.n; ++c) {
      double g = 0;
      double u = 0;
      for (std::int64_t i = 0; i < d.k; ++i) {
        const double xi = x[static_cast<std::size_t>(r * d.k + i)];
        g += xi * wg[static_cast<std::size_t>(i * d.n + c)];
        u += xi * wu[static_cast<std::size_t>(i * d.n + c)];
      }
      const double h = silu(g) * u;
      for (std::int64_t j = 0; j < d.k; ++j) {
        want[static_cast<std::size_t>(r * d.k + j)] +=
            h * wd[static_cast<std::size_t>(c * d.k + j)];
      }
    }
  }
  const std::vector<std::int64_t> xs = {d.b, d.s, d.k};
  // |h| <= 9.6 x 9.6 / 2 (silu(g) <= |g|): 200 terms of |h wd| <= 2.3 in fp32 and h rounded
  // once: under 1e-4.
  EXPECT_LT(worstError(run(graph, d, xs), want), 1e-4);
  EXPECT_LT(worstError(run(graph, d, xs, {}, 2), want), 1e-4);
  EXPECT_LT(worstError(run(std::move(unfused), d, xs), want), 1e-4);
}

TEST(FuseLinear, UnderAutoCastMatmultTheWeightStaysInBf16) {
  const Dims d;
  Graph graph = linearGelu(d);
  ASSERT_TRUE(inferShapes(graph, {}).ok());
  ASSERT_TRUE(chooseLayouts(graph, {.productWeights = ElementType::kBf16}).ok());
  ASSERT_EQ(graph.initializer("w")->type, ElementType::kBf16);
  ASSERT_EQ(*fuseLinear(graph), 1);
  EXPECT_EQ(graph.nodes[0].inputs[1], "w");
  EXPECT_EQ(graph.initializer("w")->type, ElementType::kBf16);
  kernel::CompileOptions compile;
  compile.autoCast = kernel::AutoCast::kMatmult;
  // x and w rounded to bf16 (2^-9 relative each): the product moves by at most
  // 2 x 2^-9 x sum |x w| <= 2 x 9.6 / 512 = 0.0375, the GELU's slope at most 1.13; far above
  // fp32's 1e-4.
  const double error =
      worstError(run(std::move(graph), d, {d.b, d.s, d.k}, compile), reference(d, gelu));
  EXPECT_GT(error, 1e-4);
  EXPECT_LT(error, 0.043);
}

TEST(FuseLinear, FormsTheKernelDoesNotTakeStayAsTheyAre) {
  const Dims d;
  auto fusedCount = [](Graph graph) {
    EXPECT_TRUE(inferShapes(graph, {}).ok());
    const std::size_t before = graph.nodes.size();
    Result<int> fused = fuseLinear(graph);
    EXPECT_TRUE(fused.ok());
    EXPECT_EQ(graph.nodes.size() == before, *fused == 0);
    return *fused;
  };
  // A bias of [S, N] is not a row of N.
  {
    GraphBuilder g;
    g.input("x", {d.s, d.k});
    addFloats(g.graph(), "w", {d.k, d.n}, weights(d));
    g.weight("bias2", {d.s, d.n});
    g.node("MatMul", {"x", "w"}, {"xw"}).node("Add", {"xw", "bias2"}, {"y"}).output("y");
    EXPECT_EQ(fusedCount(g.graph()), 0);
  }
  // A weight computed in the graph, neither an initializer nor a graph input.
  {
    GraphBuilder g;
    g.input("x", {d.s, d.k}).input("wT", {d.n, d.k});
    addFloats(g.graph(), "bias", {d.n}, biases(d));
    g.node("Transpose", {"wT"}, {"w"}, {attr("perm", std::vector<std::int64_t>{1, 0})})
        .node("MatMul", {"x", "w"}, {"xw"})
        .node("Add", {"xw", "bias"}, {"y"})
        .output("y");
    EXPECT_EQ(fusedCount(g.graph()), 0);
  }
  // A bare product: the library's linear already.
  {
    GraphBuilder g;
    g.input("x", {d.s, d.k});
    addFloats(g.graph(), "w", {d.k, d.n}, weights(d));
    g.node("MatMul", {"x", "w"}, {"y"}).output("y");
    EXPECT_EQ(fusedCount(g.graph()), 0);
  }
  // The product before its bias is also an output: it must be computed; and the GELU whose
  // input is an output keeps its nodes (the bias is still fused).
  {
    Graph graph = linearGelu(d);
    graph.outputs.push_back("xw");
    EXPECT_EQ(fusedCount(graph), 0);
    Graph biased = linearGelu(d);
    biased.outputs.push_back("h");
    ASSERT_TRUE(inferShapes(biased, {}).ok());
    ASSERT_EQ(*fuseLinear(biased), 1);
    EXPECT_EQ(biased.nodes.size(), 6u);
    EXPECT_EQ(std::get<std::string>(biased.nodes[0].attribute("activation")->value), "");
  }
  // A GELU constant that is not 0.5 leaves the GELU's nodes alone.
  {
    Graph graph = linearGelu(d);
    addFloats(graph, "half", {}, {0.25f});
    ASSERT_TRUE(inferShapes(graph, {}).ok());
    ASSERT_EQ(*fuseLinear(graph), 1);
    EXPECT_EQ(graph.nodes.size(), 6u);
  }
  // Gemm with alpha != 1 stays.
  {
    GraphBuilder g;
    g.input("x", {d.s, d.k});
    addFloats(g.graph(), "w", {d.k, d.n}, weights(d));
    addFloats(g.graph(), "bias", {d.n}, biases(d));
    g.node("Gemm", {"x", "w", "bias"}, {"h"}, {Attribute{"alpha", 2.0f}})
        .node("Relu", {"h"}, {"y"})
        .output("y");
    EXPECT_EQ(fusedCount(g.graph()), 0);
  }
}

}  // namespace
}  // namespace trn::graph
