// Models split into kernels: layers found from node names, each part cut out as a graph of its
// own, identical layers compiled once, and the parts run one after another with the same results
// as the whole model compiled as one kernel (checked bit for bit, and against float64).
#include "trn/graph/partition.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "graph_builder.h"
#include "model_check.h"
#include "trn/graph/model.h"
#include "trn/graph/node_profile.h"
#include "trn/graph/shape_inference.h"

namespace trn::graph {
namespace {

using fixtures::trn2;

constexpr std::int64_t kRows = 160;  // two row tiles
constexpr std::int64_t kWidth = 64;
constexpr int kLayers = 3;

/// An fp32 initializer of `sizes` whose element i is f(i).
template <typename F>
void addWeight(Graph& g, const std::string& name, std::vector<std::int64_t> sizes, F f) {
  const auto count = static_cast<std::size_t>(Shape::of(sizes).elementCount().value_or(0));
  auto bytes = std::make_shared<std::vector<std::byte>>(count * sizeof(float));
  for (std::size_t i = 0; i < count; ++i) {
    const float v = f(i);
    std::memcpy(bytes->data() + i * sizeof(float), &v, sizeof(float));
  }
  g.initializers[name] = Tensor{name, ElementType::kFp32, Shape::of(sizes), bytes};
  g.values[name] = Value{name, ElementType::kFp32, Shape::of(sizes)};
}

float weightValue(int layer, std::size_t i) {
  return static_cast<float>(static_cast<int>((i * 7 + static_cast<std::size_t>(layer) * 13) % 17) -
                            8) /
         64.0f;
}

/// x [160, 64] through three residual layers, h' = relu((h @ W_i) * s_i) + h, named as PyTorch
/// names a module list ("/layers.1/MatMul"), then a final "/norm/Mul" by 0.5. `scales` are the
/// s_i, one-element weights the lowering takes as immediates.
Graph residualModel(const std::vector<float>& scales) {
  fixtures::GraphBuilder b;
  b.input("x", {kRows, kWidth});
  std::string h = "x";
  for (int i = 0; i < kLayers; ++i) {
    const std::string l = "layers." + std::to_string(i);
    addWeight(b.graph(), l + ".w", {kWidth, kWidth},
              [&](std::size_t k) { return weightValue(i, k); });
    addWeight(b.graph(), l + ".s", {1}, [&](std::size_t) { return scales[i]; });
    b.node("MatMul", {h, l + ".w"}, {l + ".t"});
    b.node("Mul", {l + ".t", l + ".s"}, {l + ".u"});
    b.node("Relu", {l + ".u"}, {l + ".r"});
    b.node("Add", {l + ".r", h}, {l + ".h"});
    h = l + ".h";
  }
  addWeight(b.graph(), "half", {1}, [](std::size_t) { return 0.5f; });
  b.node("Mul", {h, "half"}, {"y"}).output("y");
  Graph& g = b.graph();
  for (std::size_t n = 0; n < g.nodes.size(); ++n) {
    const std::string module =
        n < 4 * kLayers ? "layers." + std::to_string(n / 4) : std::string("norm");
    g.nodes[n].name = "/" + module + "/" + g.nodes[n].opType + "_" + std::to_string(n);
  }
  EXPECT_TRUE(inferShapes(g, {}).ok());
  return std::move(g);
}

runtime::NpyArray inputArray() {
  std::vector<float> x(kRows * kWidth);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(static_cast<int>(i % 23) - 11) / 8.0f;
  }
  return runtime::floatArray({kRows, kWidth}, x);
}

TEST(GraphPartition, LayersAreRunsOfNodesOfOneIndexedModule) {
  EXPECT_EQ(indexedLayerOf("/layers.3/mlp/down/MatMul"), "layers.3");
  EXPECT_EQ(indexedLayerOf("/norm/Mul"), std::nullopt);
  EXPECT_EQ(indexedLayerOf("/Add_2"), std::nullopt);
  const Graph g = residualModel({1.0f, 1.0f, 1.0f});
  const std::vector<NodeRange> parts = layerRanges(g);
  ASSERT_EQ(parts.size(), 4u);
  for (int i = 0; i < kLayers; ++i) {
    EXPECT_EQ(parts[static_cast<std::size_t>(i)].first, static_cast<std::size_t>(4 * i));
    EXPECT_EQ(parts[static_cast<std::size_t>(i)].count, 4u);
  }
  EXPECT_EQ(parts[3].first, 12u);
  EXPECT_EQ(parts[3].count, 1u);
}

TEST(GraphPartition, APartReadsWhatComesBeforeItAndHandsOnWhatIsReadAfter) {
  const Graph g = residualModel({1.0f, 1.0f, 1.0f});
  const Graph layer1 = extractPart(g, {4, 4});
  EXPECT_EQ(layer1.inputs, std::vector<std::string>{"layers.0.h"});
  EXPECT_EQ(layer1.outputs, std::vector<std::string>{"layers.1.h"});
  EXPECT_EQ(layer1.initializers.size(), 2u);
  EXPECT_TRUE(layer1.initializers.contains("layers.1.w"));
  ASSERT_NE(layer1.value("layers.0.h"), nullptr);
  EXPECT_EQ(fixtures::sizesOf(layer1, "layers.0.h"), (std::vector<std::int64_t>{kRows, kWidth}));
  const Graph norm = extractPart(g, {12, 1});
  EXPECT_EQ(norm.outputs, std::vector<std::string>{"y"});
}

TEST(GraphPartition, LayersDifferingOnlyInWeightDataAreOneKernel) {
  const Graph g = residualModel({1.0f, 1.0f, 0.25f});
  const std::string k0 = partKey(extractPart(g, {0, 4}));
  const std::string k1 = partKey(extractPart(g, {4, 4}));
  const std::string k2 = partKey(extractPart(g, {8, 4}));
  EXPECT_EQ(k0, k1);  // the matrices differ, the code does not
  EXPECT_NE(k1, k2);  // a different immediate is different code
  EXPECT_NE(k0, partKey(extractPart(g, {12, 1})));
}

TEST(GraphPartition, ParsesItsSpellings) {
  EXPECT_EQ(*parsePartition("per-layer"), Partition::kPerLayer);
  EXPECT_EQ(*parsePartition("one"), Partition::kOne);
  const Result<Partition> bad = parsePartition("layers");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("auto, one or per-layer"), std::string::npos);
}

// The model compiles as one kernel per layer (the three layers sharing one compiled kernel) and
// gives, bit for bit, what the whole model compiled as one kernel gives; both match float64.
TEST(GraphPartition, RepeatedLayersCompileOnceAndComputeWhatOneKernelComputes) {
  const runtime::Session session = trn2();
  Result<CompiledModel> split = compileGraph(session, residualModel({1.0f, 1.0f, 1.0f}));
  Result<CompiledModel> whole =
      compileGraph(session, residualModel({1.0f, 1.0f, 1.0f}), {}, {.partition = Partition::kOne});
  ASSERT_TRUE(split.ok() && whole.ok()) << split.status().toString() << whole.status().toString();
  ASSERT_EQ(split->parts.size(), 4u);
  EXPECT_EQ(split->kernels, 2u);
  EXPECT_EQ(split->parts[2].launch.cores, split->parts[0].launch.cores);
  EXPECT_EQ(split->parts[2].compiledFor.first, 0u);
  EXPECT_EQ(split->parts[3].name, "norm");
  EXPECT_EQ(whole->parts.size(), 1u);
  EXPECT_EQ(split->compiledInstructions(),
            split->parts[0].instructions() + split->parts[3].instructions());

  const runtime::NpyArray x = inputArray();
  runtime::RunOptions options;
  options.record = true;
  Result<ModelRun> a = runModel(session, *split, {&x, 1}, options);
  Result<ModelRun> b = runModel(session, *whole, {&x, 1}, options);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().toString() << b.status().toString();
  ASSERT_EQ(a->outputs.size(), 1u);
  EXPECT_EQ(a->outputs[0].shape, (std::vector<std::int64_t>{kRows, kWidth}));
  EXPECT_EQ(a->outputs[0].data, b->outputs[0].data);

  // float64: fp32 products of 64 terms of magnitude < 8, three layers.
  const std::vector<float> xs = runtime::floatValues(x);
  std::vector<double> h(xs.begin(), xs.end());
  for (int l = 0; l < kLayers; ++l) {
    std::vector<double> next(h.size());
    for (std::int64_t r = 0; r < kRows; ++r) {
      for (std::int64_t c = 0; c < kWidth; ++c) {
        double t = 0;
        for (std::int64_t k = 0; k < kWidth; ++k) {
          t += h[static_cast<std::size_t>(r * kWidth + k)] *
               weightValue(l, static_cast<std::size_t>(k * kWidth + c));
        }
        const std::size_t i = static_cast<std::size_t>(r * kWidth + c);
        next[i] = std::max(t, 0.0) + h[i];
      }
    }
    h = std::move(next);
  }
  const std::vector<float> y = runtime::floatValues(a->outputs[0]);
  for (std::size_t i = 0; i < y.size(); ++i) {
    ASSERT_NEAR(y[i], 0.5 * h[i], 1e-4 * (1 + std::fabs(h[i]))) << i;
  }

  // The parts run one after another; every executed instruction is charged to its model node.
  ASSERT_EQ(a->parts.size(), 4u);
  Picoseconds sum(0);
  std::int64_t records = 0;
  for (std::size_t p = 0; p < a->parts.size(); ++p) {
    EXPECT_EQ(a->starts[p], sum);
    sum += a->parts[p].total;
    records += static_cast<std::int64_t>(a->parts[p].records.size());
  }
  EXPECT_EQ(a->stats.total, sum);
  const std::vector<NodeTime> nodes = profileNodes(*split, *a);
  ASSERT_EQ(nodes.size(), 13u);
  std::int64_t charged = 0;
  for (const NodeTime& n : nodes) {
    charged += n.instructions;
  }
  EXPECT_EQ(charged, records);
  const std::vector<LayerTime> layers = profileLayers(nodes);
  ASSERT_EQ(layers.size(), 4u);
  for (std::size_t l = 0; l < layers.size(); ++l) {
    EXPECT_EQ(layers[l].first, a->starts[l]) << layers[l].layer;
    EXPECT_LE(layers[l].last, a->starts[l] + a->parts[l].total) << layers[l].layer;
  }
  EXPECT_EQ(layers[1].instructions, layers[0].instructions);
}

}  // namespace
}  // namespace trn::graph
