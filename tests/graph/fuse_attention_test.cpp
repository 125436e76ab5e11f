// Tests of the attention fusion pass (fuse_attention.h) on graphs built as PyTorch exports
// attention: the Llama form (grouped-query heads expanded by Unsqueeze, Expand and Reshape, k^T
// by a Transpose of the last two axes, an additive mask input), the GPT-2 form (the head
// transpose merged into k^T, a constant causal boolean mask applied by Where) and the forms that
// must stay as they are. Each fused graph is compiled and run, its output checked against a
// float64 softmax attention computed here from the definition.
#include "trn/graph/fuse_attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <vector>

#include "graph_builder.h"
#include "model_check.h"
#include "trn/graph/model.h"
#include "trn/graph/pipeline.h"
#include "trn/graph/printer.h"
#include "trn/graph/shape_inference.h"
#include "trn/runtime/session.h"

namespace trn::graph {
namespace {

using fixtures::addFloats;
using fixtures::attr;
using fixtures::GraphBuilder;
using fixtures::wave;

struct Dims {
  std::int64_t b = 2;
  std::int64_t h = 4;
  std::int64_t hkv = 2;
  std::int64_t s = 24;
  std::int64_t d = 8;
};

/// The grouped-query head expansion of `from` [B, Hkv, S, D] into `to` [B, H, S, D], as
/// PyTorch exports t[:, :, None].expand(...).reshape(...).
void expandHeads(GraphBuilder& g, const Dims& n, const std::string& from, const std::string& to) {
  const std::int64_t rep = n.h / n.hkv;
  g.ints(to + "_axes", {2})
      .ints(to + "_wide", {n.b, n.hkv, rep, n.s, n.d})
      .ints(to + "_shape", {n.b, n.h, n.s, n.d})
      .node("Unsqueeze", {from, to + "_axes"}, {to + "_u"})
      .node("Expand", {to + "_u", to + "_wide"}, {to + "_e"})
      .node("Reshape", {to + "_e", to + "_shape"}, {to});
}

/// Llama's attention: q [B, H, S, D], k and v [B, Hkv, S, D], mask [S, S] inputs; the scores
/// divided by sqrt(D), the mask added.
Graph llamaAttention(const Dims& n) {
  GraphBuilder g;
  g.input("q", {n.b, n.h, n.s, n.d})
      .input("k", {n.b, n.hkv, n.s, n.d})
      .input("v", {n.b, n.hkv, n.s, n.d})
      .input("mask", {n.s, n.s});
  expandHeads(g, n, "k", "k_all");
  expandHeads(g, n, "v", "v_all");
  addFloats(g.graph(), "root_d", {}, {std::sqrt(static_cast<float>(n.d))});
  g.node("Transpose", {"k_all"}, {"k_t"}, {attr("perm", std::vector<std::int64_t>{0, 1, 3, 2})})
      .node("MatMul", {"q", "k_t"}, {"scores"})
      .node("Div", {"scores", "root_d"}, {"scaled"})
      .node("Add", {"scaled", "mask"}, {"masked"})
      .node("Softmax", {"masked"}, {"p"}, {attr("axis", -1)})
      .node("MatMul", {"p", "v_all"}, {"o"})
      .output("o");
  return g.graph();
}

/// GPT-2's attention: q [B, H, S, D] and k, v [B, S, H, D] inputs (k^T one Transpose with perm
/// [0, 2, 3, 1], as PyTorch merges the head transpose into it), the scores times a constant,
/// Where(causal, scores, -FLT_MAX).
Graph gpt2Attention(const Dims& n, float scale) {
  GraphBuilder g;
  g.input("q", {n.b, n.h, n.s, n.d})
      .input("k", {n.b, n.s, n.h, n.d})
      .input("v", {n.b, n.s, n.h, n.d});
  addFloats(g.graph(), "scale", {}, {scale});
  addFloats(g.graph(), "lowest", {}, {-FLT_MAX});
  auto bytes = std::make_shared<std::vector<std::byte>>(static_cast<std::size_t>(n.s * n.s));
  for (std::int64_t i = 0; i < n.s; ++i) {
    for (std::int64_t j = 0; j <= i; ++j) {
      (*bytes)[static_cast<std::size_t>(i * n.s + j)] = std::byte{1};
    }
  }
  const Shape maskShape = Shape::of({1, 1, n.s, n.s});
  g.graph().initializers["causal"] = Tensor{"causal", ElementType::kBool, maskShape, bytes};
  g.graph().values["causal"] = Value{"causal", ElementType::kBool, maskShape};
  g.node("Transpose", {"k"}, {"k_t"}, {attr("perm", std::vector<std::int64_t>{0, 2, 3, 1})})
      .node("Transpose", {"v"}, {"v_h"}, {attr("perm", std::vector<std::int64_t>{0, 2, 1, 3})})
      .node("MatMul", {"q", "k_t"}, {"scores"})
      .node("Mul", {"scores", "scale"}, {"scaled"})
      .node("Where", {"causal", "scaled", "lowest"}, {"masked"})
      .node("Softmax", {"masked"}, {"p"}, {attr("axis", -1)})
      .node("MatMul", {"p", "v_h"}, {"o"})
      .output("o");
  return g.graph();
}

/// softmax(scale q k^T + mask) v in float64, from the definition, one row at a time; k and v
/// indexed as [b, kv head, key, d] through `kvIndex`.
template <typename KvIndex>
std::vector<double> referenceAttention(const Dims& n, const std::vector<float>& q,
                                       const std::vector<float>& k, const std::vector<float>& v,
                                       const std::vector<float>& mask, double scale,
                                       KvIndex kvIndex) {
  std::vector<double> out(static_cast<std::size_t>(n.b * n.h * n.s * n.d));
  std::vector<double> w(static_cast<std::size_t>(n.s));
  for (std::int64_t b = 0; b < n.b; ++b) {
    for (std::int64_t h = 0; h < n.h; ++h) {
      const std::int64_t g = h / (n.h / n.hkv);
      for (std::int64_t i = 0; i < n.s; ++i) {
        double top = -INFINITY;
        for (std::int64_t j = 0; j < n.s; ++j) {
          double dot = 0;
          for (std::int64_t e = 0; e < n.d; ++e) {
            dot += static_cast<double>(
                       q[static_cast<std::size_t>(((b * n.h + h) * n.s + i) * n.d + e)]) *
                   k[static_cast<std::size_t>(kvIndex(b, g, j, e))];
          }
          w[static_cast<std::size_t>(j)] =
              scale * dot + mask[static_cast<std::size_t>(i * n.s + j)];
          top = std::max(top, w[static_cast<std::size_t>(j)]);
        }
        double sum = 0;
        for (double& x : w) {
          x = std::exp(x - top);
          sum += x;
        }
        for (std::int64_t e = 0; e < n.d; ++e) {
          double acc = 0;
          for (std::int64_t j = 0; j < n.s; ++j) {
            acc += w[static_cast<std::size_t>(j)] / sum *
                   v[static_cast<std::size_t>(kvIndex(b, g, j, e))];
          }
          out[static_cast<std::size_t>(((b * n.h + h) * n.s + i) * n.d + e)] = acc;
        }
      }
    }
  }
  return out;
}

/// Runs `graph` (fused) on q, k, v [and mask] and returns its output.
std::vector<float> run(Graph graph, std::vector<runtime::NpyArray> inputs,
                       const kernel::CompileOptions& compile = {}) {
  Result<runtime::Session> opened = runtime::Session::open("trn2");
  EXPECT_TRUE(opened.ok()) << opened.status().toString();
  if (!opened.ok()) {
    return {};
  }
  const runtime::Session& session = *opened;
  Result<CompiledModel> model = compileGraph(session, std::move(graph), compile);
  EXPECT_TRUE(model.ok()) << model.status().toString();
  if (!model.ok()) {
    return {};
  }
  runtime::RunOptions options;
  options.mode = core::RunMode::kFunctionalOnly;
  Result<ModelRun> result = runModel(session, *model, inputs, options);
  EXPECT_TRUE(result.ok()) << result.status().toString();
  return result.ok() ? runtime::floatValues(result->outputs.at(0)) : std::vector<float>{};
}

/// max |got - want| (+infinity, with a failed expectation, when the sizes differ).
double worstError(const std::vector<float>& got, const std::vector<double>& want) {
  EXPECT_EQ(got.size(), want.size());
  if (got.size() != want.size()) {
    return INFINITY;
  }
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, std::abs(got[i] - want[i]));
  }
  return worst;
}

/// fp32 flash attention: the bound of tests/kernels/attention_test.cpp (fp32 products over D
/// terms, P @ v over S keys) with inputs of magnitude <= 1 is under 1e-5 at these sizes.
constexpr double kTolerance = 1e-5;

/// The largest difference between `graph` (llamaAttention, fused) run on fixed inputs and the
/// float64 reference: a causal mask as Llama's reference writes it, plus a bias on the
/// allowed keys.
double llamaError(Graph graph, const Dims& n, const kernel::CompileOptions& compile) {
  const std::vector<float> q = wave(n.b * n.h * n.s * n.d, 0.37, 1.0);
  const std::vector<float> k = wave(n.b * n.hkv * n.s * n.d, 0.11, 1.0);
  const std::vector<float> v = wave(n.b * n.hkv * n.s * n.d, 0.53, 1.0);
  // A causal mask as Llama's reference writes it, plus a bias on the allowed keys.
  std::vector<float> mask(static_cast<std::size_t>(n.s * n.s));
  for (std::int64_t i = 0; i < n.s; ++i) {
    for (std::int64_t j = 0; j < n.s; ++j) {
      mask[static_cast<std::size_t>(i * n.s + j)] =
          j > i ? -INFINITY : static_cast<float>(0.1 * ((i + j) % 5));
    }
  }
  const std::vector<float> got = run(
      std::move(graph),
      {runtime::floatArray({n.b, n.h, n.s, n.d}, q), runtime::floatArray({n.b, n.hkv, n.s, n.d}, k),
       runtime::floatArray({n.b, n.hkv, n.s, n.d}, v), runtime::floatArray({n.s, n.s}, mask)},
      compile);
  const std::vector<double> want =
      referenceAttention(n, q, k, v, mask, 1.0 / std::sqrt(static_cast<double>(n.d)),
                         [&](std::int64_t b, std::int64_t g, std::int64_t j, std::int64_t e) {
                           return ((b * n.hkv + g) * n.s + j) * n.d + e;
                         });
  return worstError(got, want);
}

TEST(FuseAttention, LlamaFormWithGroupedHeadsAndAMaskInputBecomesOneNode) {
  const Dims n;
  Graph graph = llamaAttention(n);
  ASSERT_TRUE(inferShapes(graph, {}).ok());
  Result<int> fused = fuseAttention(graph);
  ASSERT_TRUE(fused.ok()) << fused.status().toString();
  EXPECT_EQ(*fused, 1);
  ASSERT_EQ(graph.nodes.size(), 1u);
  const Node& node = graph.nodes[0];
  EXPECT_EQ(node.domain, "trn");
  EXPECT_EQ(node.opType, "FlashAttention");
  // The expansion is gone: the node reads the two kv heads themselves.
  EXPECT_EQ(node.inputs, (std::vector<std::string>{"q", "k", "v", "mask"}));
  EXPECT_EQ(node.outputs, std::vector<std::string>{"o"});
  EXPECT_EQ(node.intAttribute("causal"), 0);
  EXPECT_FLOAT_EQ(*node.floatAttribute("scale"), 1.0f / std::sqrt(8.0f));
  EXPECT_EQ(graph.initializer("root_d"), nullptr);

  EXPECT_LT(llamaError(std::move(graph), n, {}), kTolerance);
}

TEST(FuseAttention, UnderAutoCastMatmultTheProductsRunInBf16) {
  const Dims n;
  Graph graph = llamaAttention(n);
  ASSERT_TRUE(inferShapes(graph, {}).ok());
  ASSERT_EQ(*fuseAttention(graph), 1);
  kernel::CompileOptions compile;
  compile.autoCast = kernel::AutoCast::kMatmult;
  // q, k, v rounded to bf16 (2^-9 relative each): a logit of sum |q k| <= 8, scaled by 1/sqrt(8),
  // moves by up to 2 * 8 * 2^-9 / sqrt(8) = 0.011, each weight by about that relative; P rounded
  // (2^-9) and the output (a weighted mean of |v| <= 1) rounded to bf16 once more: under 0.03,
  // and far above fp32's 1e-5.
  const double error = llamaError(std::move(graph), n, compile);
  EXPECT_GT(error, 1e-4);
  EXPECT_LT(error, 0.03);
}

TEST(FuseAttention, Gpt2FormWithACausalWhereUsesTheCausalFlag) {
  const Dims n{.b = 1, .h = 2, .hkv = 2, .s = 20, .d = 16};
  Graph graph = gpt2Attention(n, 0.25f);
  ASSERT_TRUE(inferShapes(graph, {}).ok());
  Result<int> fused = fuseAttention(graph);
  ASSERT_TRUE(fused.ok());
  EXPECT_EQ(*fused, 1);
  // v's head transpose stays; k^T's becomes a transpose to [B, H, S, D] the node reads.
  ASSERT_EQ(graph.nodes.size(), 3u);
  EXPECT_EQ(graph.nodes[1].opType, "Transpose");
  EXPECT_EQ(graph.nodes[1].intsAttribute("perm"), (std::vector<std::int64_t>{0, 2, 1, 3}));
  const Node& node = graph.nodes[2];
  EXPECT_EQ(node.opType, "FlashAttention");
  EXPECT_EQ(node.inputs.size(), 3u);
  EXPECT_EQ(node.inputs[1], graph.nodes[1].outputs[0]);
  EXPECT_EQ(node.intAttribute("causal"), 1);
  EXPECT_EQ(graph.initializer("causal"), nullptr);

  const std::vector<float> q = wave(n.b * n.h * n.s * n.d, 0.29, 1.0);
  const std::vector<float> k = wave(n.b * n.s * n.h * n.d, 0.17, 1.0);
  const std::vector<float> v = wave(n.b * n.s * n.h * n.d, 0.61, 1.0);
  std::vector<float> mask(static_cast<std::size_t>(n.s * n.s));
  for (std::int64_t i = 0; i < n.s; ++i) {
    for (std::int64_t j = i + 1; j < n.s; ++j) {
      mask[static_cast<std::size_t>(i * n.s + j)] = -INFINITY;
    }
  }
  const std::vector<float> got =
      run(std::move(graph), {runtime::floatArray({n.b, n.h, n.s, n.d}, q),
                             runtime::floatArray({n.b, n.s, n.h, n.d}, k),
                             runtime::floatArray({n.b, n.s, n.h, n.d}, v)});
  const std::vector<double> want = referenceAttention(
      n, q, k, v, mask, 0.25, [&](std::int64_t b, std::int64_t g, std::int64_t j, std::int64_t e) {
        return ((b * n.s + j) * n.h + g) * n.d + e;
      });
  EXPECT_LT(worstError(got, want), kTolerance);
}

TEST(FuseAttention, FormsTheKernelDoesNotTakeStayAsTheyAre) {
  const Dims n;
  // A mask per batch element ([B, 1, S, S]) is not one [S, S] matrix.
  GraphBuilder perBatch;
  perBatch.input("mask4", {n.b, 1, n.s, n.s});
  Graph graph = llamaAttention(n);
  graph.inputs.push_back("mask4");
  graph.values["mask4"] = perBatch.graph().values["mask4"];
  for (Node& node : graph.nodes) {
    std::replace(node.inputs.begin(), node.inputs.end(), std::string("mask"), std::string("mask4"));
  }
  ASSERT_TRUE(inferShapes(graph, {}).ok());
  const std::size_t before = graph.nodes.size();
  EXPECT_EQ(*fuseAttention(graph), 0);
  EXPECT_EQ(graph.nodes.size(), before);

  // The probabilities are also a graph output: they must be computed.
  Graph probabilities = llamaAttention(n);
  probabilities.outputs.push_back("p");
  ASSERT_TRUE(inferShapes(probabilities, {}).ok());
  EXPECT_EQ(*fuseAttention(probabilities), 0);

  // A head dim over 128 is beyond the kernel.
  Graph wide = llamaAttention(Dims{.b = 1, .h = 2, .hkv = 1, .s = 8, .d = 160});
  ASSERT_TRUE(inferShapes(wide, {}).ok());
  EXPECT_EQ(*fuseAttention(wide), 0);
}

TEST(FuseAttention, IsAPipelinePassThatDumpAfterShowsAndThatCanBeTurnedOff) {
  // PyTorch's transformer block (tests/graph/models/torch_block.onnx: 4 heads, no mask).
  const std::string path = std::string(TRN_SOURCE_DIR) + "/tests/graph/models/torch_block.onnx";
  PipelineOptions options;
  options.shapes.symbols = {{"batch", 2}};
  options.dumpAfter = {"fuse-attention"};
  std::string dumped;
  options.dump = [&](std::string_view pass, const Graph& graph) {
    EXPECT_EQ(pass, "fuse-attention");
    dumped = formatGraph(graph);
  };
  options.stopAfter = "fuse-attention";
  Result<Graph> fused = runPipeline(path, options);
  ASSERT_TRUE(fused.ok()) << fused.status().toString();
  EXPECT_NE(dumped.find("= trn.FlashAttention("), std::string::npos) << dumped;
  EXPECT_NE(dumped.find("{causal=0, scale=0.5}"), std::string::npos) << dumped;
  EXPECT_EQ(dumped.find("Softmax("), std::string::npos) << dumped;

  options.fuseAttention = false;
  Result<Graph> unfused = runPipeline(path, options);
  ASSERT_TRUE(unfused.ok());
  EXPECT_EQ(dumped.find("FlashAttention"), std::string::npos);
  EXPECT_EQ(unfused->nodes.size(), fused->nodes.size() + 3);
}

}  // namespace
}  // namespace trn::graph
