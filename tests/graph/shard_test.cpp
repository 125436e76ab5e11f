// Tensor-parallel sharding (shard.h): the layouts Megatron's rules give a small MLP and an
// attention block, the collectives inserted, the errors; and the sharded models run on a trn2
// instance's chips against the unsharded model, a float64 reference and PyTorch's own output.
#include "trn/graph/shard.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "graph_builder.h"
#include "model_check.h"
#include "trn/fabric/topology.h"
#include "trn/graph/fuse_attention.h"
#include "trn/graph/fuse_linear.h"
#include "trn/graph/model.h"
#include "trn/graph/onnx_import.h"
#include "trn/graph/pipeline.h"
#include "trn/graph/printer.h"
#include "trn/graph/shape_inference.h"
#include "trn/runtime/npy.h"
#include "trn/spec/system_loader.h"

namespace trn::graph {
namespace {

using fixtures::modelPath;
using fixtures::trn2;

PipelineOptions sharded(std::int64_t batch, int ranks) {
  PipelineOptions options;
  options.shapes.symbols = {{"batch", batch}};
  options.tensorParallel = ranks;
  return options;
}

std::shared_ptr<const fabric::Topology> trn2Instance(const runtime::Session& session) {
  Result<spec::SystemSpec> system = spec::loadSystem("trn2.48xlarge");
  EXPECT_TRUE(system.ok()) << system.status().toString();
  Result<fabric::Topology> topology = fabric::Topology::create(*system, session.chip());
  EXPECT_TRUE(topology.ok()) << topology.status().toString();
  return std::make_shared<const fabric::Topology>(std::move(topology).value());
}

std::string layoutOf(const Graph& g, const std::string& value) {
  return describeLayout(g.layoutOf(value), g.ranks);
}

std::vector<std::string> opTypes(const Graph& g) {
  std::vector<std::string> ops;
  for (const Node& n : g.nodes) {
    ops.push_back(n.domain.empty() ? n.opType : n.domain + "." + n.opType);
  }
  return ops;
}

/// n values sin(f i + 0.5): inputs and weights of every magnitude and sign below 1.
std::vector<float> sineValues(std::size_t n, double f) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = static_cast<float>(std::sin(f * static_cast<double>(i) + 0.5));
  }
  return v;
}

std::vector<float> floats(const Tensor& t) {
  std::vector<float> out(t.data().size() / sizeof(float));
  std::memcpy(out.data(), t.data().data(), out.size() * sizeof(float));
  return out;
}

TEST(Shard, ARanksShareIsItsBlocksOfTheSplitAxis) {
  // [2, 8] split along axis 1 with 2 outer blocks over 2 ranks: rank r holds columns
  // {2r, 2r + 1} and {4 + 2r, 5 + 2r} of each row.
  std::vector<float> values(16);
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<float>(i);
  }
  const auto bytes = std::as_bytes(std::span(values));
  const std::vector<std::byte> share =
      rankShare(bytes, {2, 8}, sizeof(float), RankLayout::split(1, 2), 1, 2);
  std::vector<float> got(share.size() / sizeof(float));
  std::memcpy(got.data(), share.data(), share.size());
  EXPECT_EQ(got, (std::vector<float>{2, 3, 6, 7, 10, 11, 14, 15}));
  EXPECT_EQ(localSizes({2, 8}, RankLayout::split(1, 2), 2), (std::vector<std::int64_t>{2, 4}));
  const std::vector<std::byte> zeros =
      rankShare(bytes, {2, 8}, sizeof(float), RankLayout::firstRank(), 1, 2);
  EXPECT_EQ(zeros, std::vector<std::byte>(64, std::byte{0}));
}

TEST(Shard, AFusedMlpIsColumnThenRowParallelWithOneAllReduce) {
  Result<Graph> g = runPipeline(modelPath("mlp.onnx"), sharded(4, 2));
  ASSERT_TRUE(g.ok()) << g.status().toString();
  // Fused (fuse_linear.h): Linear (x w1^T + b1, Relu) column-parallel, Linear (w2 + b2)
  // row-parallel with b2 held by rank 0, so that the all-reduce adds it once.
  ASSERT_EQ(opTypes(*g), (std::vector<std::string>{"trn.Linear", "trn.Linear", "trn.AllReduce"}));
  const Node& first = g->nodes[0];
  const Node& second = g->nodes[1];
  EXPECT_EQ(layoutOf(*g, first.inputs[1]), "split(1)/2");  // w1, [16, 32] after layout
  EXPECT_EQ(layoutOf(*g, first.inputs[2]), "split(0)/2");  // b1
  EXPECT_EQ(layoutOf(*g, first.outputs[0]), "split(1)/2");
  EXPECT_EQ(layoutOf(*g, second.inputs[1]), "split(0)/2");  // w2's rows
  EXPECT_EQ(layoutOf(*g, second.inputs[2]), "rank 0");      // b2
  EXPECT_EQ(layoutOf(*g, second.outputs[0]), "partial sum");
  EXPECT_EQ(layoutOf(*g, g->outputs[0]), "replicated");
}

TEST(Shard, AnMlpIsColumnThenRowParallelWithOneAllReduce) {
  PipelineOptions options = sharded(4, 2);
  options.fusePatterns = false;
  Result<Graph> g = runPipeline(modelPath("mlp.onnx"), options);
  ASSERT_TRUE(g.ok()) << g.status().toString();
  // mlp.onnx unfused: Gemm (x w1^T + b1), Relu, MatMul (w2), Add (b2); the all-reduce after the
  // MatMul, the bias added once to the whole sum.
  ASSERT_EQ(opTypes(*g),
            (std::vector<std::string>{"Gemm", "Relu", "MatMul", "trn.AllReduce", "Add"}));
  const Node& first = g->nodes[0];
  const Node& second = g->nodes[2];
  EXPECT_EQ(layoutOf(*g, first.inputs[0]), "replicated");
  EXPECT_EQ(layoutOf(*g, first.inputs[1]), "split(1)/2");  // w1, [16, 32] after layout
  EXPECT_EQ(layoutOf(*g, first.inputs[2]), "split(0)/2");  // its bias
  EXPECT_EQ(layoutOf(*g, first.outputs[0]), "split(1)/2");
  EXPECT_EQ(layoutOf(*g, g->nodes[1].outputs[0]), "split(1)/2");
  EXPECT_EQ(layoutOf(*g, second.inputs[1]), "split(0)/2");  // w2's rows
  EXPECT_EQ(layoutOf(*g, second.outputs[0]), "partial sum");
  EXPECT_EQ(layoutOf(*g, g->nodes[4].inputs[1]), "replicated");  // b2
  EXPECT_EQ(layoutOf(*g, g->outputs[0]), "replicated");
  const std::string text = formatGraph(*g);
  EXPECT_NE(text.find("tensor parallel over 2 ranks"), std::string::npos) << text;
  EXPECT_NE(text.find("fp32[4, 32] split(1)/2 = Gemm("), std::string::npos) << text;
  // Rank 1's graph: the split values at half their columns, its share of the weights.
  const Graph rank1 = rankGraph(*g, 1);
  EXPECT_EQ(rank1.value(first.outputs[0])->shape->sizes(), (std::vector<std::int64_t>{4, 16}));
  EXPECT_EQ(rank1.initializer(second.inputs[1])->shape.sizes(), (std::vector<std::int64_t>{16, 8}));
}

/// y = relu(x w1^T + b1) w2 + b2 of mlp.onnx in float64, from the weights as imported.
std::vector<double> mlpReference(const std::vector<float>& xs, std::int64_t batch) {
  Result<Graph> imported = importOnnx(modelPath("mlp.onnx"));
  EXPECT_TRUE(imported.ok());
  const std::vector<float> w1 = floats(*imported->initializer("w1"));
  const std::vector<float> b1 = floats(*imported->initializer("b1"));
  const std::vector<float> w2 = floats(*imported->initializer("w2"));
  const std::vector<float> b2 = floats(*imported->initializer("b2"));
  std::vector<double> y;
  for (std::int64_t r = 0; r < batch; ++r) {
    std::vector<double> h(32);
    for (std::size_t j = 0; j < 32; ++j) {
      double acc = b1[j];
      for (std::size_t k = 0; k < 16; ++k) {
        acc += static_cast<double>(xs[static_cast<std::size_t>(r) * 16 + k]) * w1[j * 16 + k];
      }
      h[j] = std::max(acc, 0.0);
    }
    for (std::size_t n = 0; n < 8; ++n) {
      double acc = b2[n];
      for (std::size_t j = 0; j < 32; ++j) {
        acc += h[j] * w2[j * 8 + n];
      }
      y.push_back(acc);
    }
  }
  return y;
}

TEST(Shard, AnMlpOnTwoAndFourChipsMatchesFloat64AndTheUnshardedModel) {
  const std::int64_t batch = 130;  // two row tiles
  std::vector<float> xs(static_cast<std::size_t>(batch * 16));
  for (std::size_t i = 0; i < xs.size(); ++i) {
    xs[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)));
  }
  const runtime::NpyArray x = runtime::floatArray({batch, 16}, xs);
  const std::vector<double> want = mlpReference(xs, batch);
  const runtime::Session session = trn2();
  Result<CompiledModel> whole = compileModel(session, modelPath("mlp.onnx"), sharded(batch, 1));
  ASSERT_TRUE(whole.ok()) << whole.status().toString();
  Result<ModelRun> one = runModel(session, *whole, {&x, 1}, {});
  ASSERT_TRUE(one.ok()) << one.status().toString();
  for (const int ranks : {2, 4}) {
    Result<CompiledModel> model =
        compileModel(session, modelPath("mlp.onnx"), sharded(batch, ranks), {},
                     {Partition::kAuto, 1, trn2Instance(session)});
    ASSERT_TRUE(model.ok()) << model.status().toString();
    EXPECT_EQ(model->ranks, ranks);
    Result<ModelRun> run = runModel(session, *model, {&x, 1}, {});
    ASSERT_TRUE(run.ok()) << run.status().toString();
    const std::vector<float> got = runtime::floatValues(run->outputs.at(0));
    ASSERT_EQ(got.size(), want.size());
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      worst = std::max(worst, std::abs(got[i] - want[i]));
    }
    EXPECT_LT(worst, 1e-5) << ranks << " ranks";
    EXPECT_LT(fixtures::worstError(run->outputs[0], one->outputs[0]), 1e-5) << ranks << " ranks";
    // One all-reduce of the [130, 8] fp32 result.
    ASSERT_EQ(run->collectives.size(), 1u);
    EXPECT_EQ(run->collectives[0].op, fabric::CollectiveOp::kAllReduce);
    EXPECT_EQ(run->collectives[0].bytes, batch * 8 * 4);
    EXPECT_EQ(run->collectives[0].group.size(), static_cast<std::size_t>(ranks));
    EXPECT_GT(run->stats.total.count(), run->collectives[0].picoseconds);
  }
}

TEST(Shard, AnAttentionBlockRunsEachRanksHeads) {
  Result<Graph> g = runPipeline(modelPath("torch_block.onnx"), sharded(2, 2));
  ASSERT_TRUE(g.ok()) << g.status().toString();
  int allReduces = 0;
  int allGathers = 0;
  const Node* attention = nullptr;
  for (const Node& n : g->nodes) {
    allReduces += n.opType == kAllReduceOp ? 1 : 0;
    allGathers += n.opType == kAllGatherOp ? 1 : 0;
    attention = n.opType == kFlashAttentionOp ? &n : attention;
  }
  // The attention's output projection and the MLP's second product: Megatron's two per layer.
  EXPECT_EQ(allReduces, 2);
  EXPECT_EQ(allGathers, 0);
  ASSERT_NE(attention, nullptr);
  for (std::size_t i = 0; i < 3; ++i) {  // q, k, v [B, H, S, D] by heads
    EXPECT_EQ(layoutOf(*g, attention->inputs[i]), "split(1)/2") << attention->inputs[i];
  }
  EXPECT_EQ(layoutOf(*g, attention->outputs[0]), "split(1)/2");
}

// On one core per chip and on an LNC=2 pair per chip (every node split over the pair, each
// all-reduce the first core's on what both computed).
TEST(Shard, AnAttentionBlockOnTwoAndFourChipsMatchesPyTorch) {
  const runtime::Session session = trn2();
  Result<runtime::NpyArray> x = runtime::readNpy(modelPath("torch_block.x.npy"));
  Result<runtime::NpyArray> y = runtime::readNpy(modelPath("torch_block.y.npy"));
  ASSERT_TRUE(x.ok() && y.ok());
  for (const int lnc : {1, 2}) {
    for (const int ranks : {2, 4}) {
      Result<CompiledModel> model =
          compileModel(session, modelPath("torch_block.onnx"), sharded(2, ranks), {},
                       {Partition::kAuto, lnc, trn2Instance(session)});
      ASSERT_TRUE(model.ok()) << model.status().toString();
      Result<ModelRun> run = runModel(session, *model, {&*x, 1}, {});
      ASSERT_TRUE(run.ok()) << run.status().toString();
      EXPECT_LT(fixtures::worstError(run->outputs.at(0), *y), 1e-5)
          << ranks << " ranks at LNC " << lnc;
      EXPECT_EQ(run->collectives.size(), 2u);
      // Per core of rank 0's logical core, its share of every part.
      ASSERT_EQ(run->coreTotals.size(), lnc > 1 ? 2u : 0u);
      for (const core::RunStats& core : run->coreTotals) {
        EXPECT_GT(core.instructions, 0u);
        EXPECT_LE(core.total, run->stats.total);
      }
    }
  }
}

TEST(Shard, UnsupportedShardingsAreErrorsNamingTheNode) {
  // Four heads over eight ranks: the split of the heads does not fall on the heads axis.
  Result<Graph> g = runPipeline(modelPath("torch_block.onnx"), sharded(2, 8));
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("tensor parallelism over 8 ranks"), std::string::npos)
      << g.status().toString();
  EXPECT_NE(g.status().message().find("node '"), std::string::npos) << g.status().toString();
  // 32 hidden columns of the MLP over 3 ranks.
  Result<Graph> mlp = runPipeline(modelPath("mlp.onnx"), sharded(4, 3));
  ASSERT_FALSE(mlp.ok());
  EXPECT_NE(mlp.status().message().find("32 output columns"), std::string::npos)
      << mlp.status().toString();
  const runtime::Session session = trn2();
  Result<CompiledModel> noSystem =
      compileModel(session, modelPath("mlp.onnx"), sharded(4, 2), {}, {});
  ASSERT_FALSE(noSystem.ok());
  EXPECT_NE(noSystem.status().message().find("--system"), std::string::npos)
      << noSystem.status().toString();
}

// A column-parallel product read by a node without a rule for its split (a softmax along the
// split axis) and, reshaped so that the split lies inside a merged axis (outer 4), given as a
// graph output: both all-gathered, the second with each rank's blocks interleaved.
TEST(Shard, SplitValuesAreGatheredForANodeWithoutARuleAndForTheOutputs) {
  fixtures::GraphBuilder b;
  b.input("x", {2, 4, 16}).weight("w", {16, 8}).ints("shape", {2, 32});
  std::vector<float> ws(16 * 8);
  std::vector<float> xs(2 * 4 * 16);
  for (std::size_t i = 0; i < ws.size(); ++i) {
    ws[i] = static_cast<float>(std::cos(0.11 * static_cast<double>(i)));
  }
  for (std::size_t i = 0; i < xs.size(); ++i) {
    xs[i] = static_cast<float>(std::sin(0.29 * static_cast<double>(i)));
  }
  auto bytes = std::make_shared<std::vector<std::byte>>(ws.size() * sizeof(float));
  std::memcpy(bytes->data(), ws.data(), bytes->size());
  b.graph().initializers["w"].bytes = bytes;
  b.node("MatMul", {"x", "w"}, {"h"})
      .node("Softmax", {"h"}, {"s"}, {fixtures::attr("axis", -1)})
      .node("Reshape", {"h", "shape"}, {"r"})
      .output("s")
      .output("r");
  // float64: h = x w, s = softmax(h) by rows, r = h as [2, 32].
  std::vector<double> h(2 * 4 * 8);
  for (std::size_t row = 0; row < 8; ++row) {
    for (std::size_t n = 0; n < 8; ++n) {
      for (std::size_t k = 0; k < 16; ++k) {
        h[row * 8 + n] += static_cast<double>(xs[row * 16 + k]) * ws[k * 8 + n];
      }
    }
  }
  std::vector<double> softmax(h.size());
  for (std::size_t row = 0; row < 8; ++row) {
    double sum = 0;
    for (std::size_t n = 0; n < 8; ++n) {
      sum += std::exp(h[row * 8 + n]);
    }
    for (std::size_t n = 0; n < 8; ++n) {
      softmax[row * 8 + n] = std::exp(h[row * 8 + n]) / sum;
    }
  }
  const runtime::Session session = trn2();
  const runtime::NpyArray x = runtime::floatArray({2, 4, 16}, xs);
  for (const int ranks : {2, 4}) {
    Graph g = b.graph();
    ASSERT_TRUE(inferShapes(g, {}).ok());
    ASSERT_TRUE(shardGraph(g, ranks).ok());
    EXPECT_EQ(opTypes(g), (std::vector<std::string>{"MatMul", "trn.AllGather", "Softmax", "Reshape",
                                                    "trn.AllGather"}));
    EXPECT_EQ(layoutOf(g, "r/local"), fmt::format("split(1, outer 4)/{}", ranks));
    Result<CompiledModel> model =
        compileGraph(session, g, {}, {Partition::kAuto, 1, trn2Instance(session)});
    ASSERT_TRUE(model.ok()) << model.status().toString();
    Result<ModelRun> run = runModel(session, *model, {&x, 1}, {});
    ASSERT_TRUE(run.ok()) << run.status().toString();
    const std::vector<float> s = runtime::floatValues(run->outputs.at(0));
    const std::vector<float> r = runtime::floatValues(run->outputs.at(1));
    ASSERT_EQ(s.size(), h.size());
    ASSERT_EQ(r.size(), h.size());
    EXPECT_EQ(run->outputs[1].shape, (std::vector<std::int64_t>{2, 32}));
    for (std::size_t i = 0; i < h.size(); ++i) {
      EXPECT_NEAR(s[i], softmax[i], 1e-6) << ranks << " ranks, element " << i;
      EXPECT_NEAR(r[i], h[i], 1e-5) << ranks << " ranks, element " << i;
    }
    ASSERT_EQ(run->collectives.size(), 2u);
    EXPECT_EQ(run->collectives[0].op, fabric::CollectiveOp::kAllGather);
  }
}

// Weights given as graph inputs (as the Llama-3-8B-shaped export has them): the host gives each
// rank its share of the whole arrays the caller passes.
TEST(Shard, WeightsGivenAsGraphInputsAreSlicedOnTheHost) {
  fixtures::GraphBuilder b;
  b.input("x", {4, 16}).input("w1", {16, 32}).input("w2", {32, 16});
  b.node("MatMul", {"x", "w1"}, {"h"})
      .node("Relu", {"h"}, {"a"})
      .node("MatMul", {"a", "w2"}, {"y"})
      .output("y");
  const std::vector<float> xs = sineValues(4 * 16, 0.31);
  const std::vector<float> w1 = sineValues(16 * 32, 0.17);
  const std::vector<float> w2 = sineValues(32 * 16, 0.23);
  std::vector<double> want(4 * 16);
  for (std::size_t r = 0; r < 4; ++r) {
    for (std::size_t j = 0; j < 32; ++j) {
      double acc = 0;
      for (std::size_t k = 0; k < 16; ++k) {
        acc += static_cast<double>(xs[r * 16 + k]) * w1[k * 32 + j];
      }
      for (std::size_t n = 0; n < 16; ++n) {
        want[r * 16 + n] += std::max(acc, 0.0) * w2[j * 16 + n];
      }
    }
  }
  const std::vector<runtime::NpyArray> inputs = {runtime::floatArray({4, 16}, xs),
                                                 runtime::floatArray({16, 32}, w1),
                                                 runtime::floatArray({32, 16}, w2)};
  const runtime::Session session = trn2();
  for (const int ranks : {2, 4}) {
    Graph g = b.graph();
    ASSERT_TRUE(inferShapes(g, {}).ok());
    ASSERT_TRUE(shardGraph(g, ranks).ok());
    EXPECT_EQ(layoutOf(g, "w1"), fmt::format("split(1)/{}", ranks));
    EXPECT_EQ(layoutOf(g, "w2"), fmt::format("split(0)/{}", ranks));
    Result<CompiledModel> model =
        compileGraph(session, g, {}, {Partition::kAuto, 1, trn2Instance(session)});
    ASSERT_TRUE(model.ok()) << model.status().toString();
    Result<ModelRun> run = runModel(session, *model, inputs, {});
    ASSERT_TRUE(run.ok()) << run.status().toString();
    const std::vector<float> got = runtime::floatValues(run->outputs.at(0));
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], want[i], 1e-5) << ranks << " ranks, element " << i;
    }
  }
}

// A fused product with an activation is not row-parallel (the activation would apply to each
// rank's partial sum): its contraction-split input is gathered and the product runs whole.
TEST(Shard, AFusedProductWithAnActivationGathersItsSplitInput) {
  const std::vector<float> xs = sineValues(4 * 16, 0.31);
  const std::vector<float> w1 = sineValues(16 * 32, 0.17);
  const std::vector<float> w2 = sineValues(32 * 8, 0.23);
  const std::vector<float> b2 = sineValues(8, 0.7);
  fixtures::GraphBuilder b;
  b.input("x", {4, 16}).input("w1", {16, 32}).weight("w2", {32, 8}).weight("b2", {8});
  b.node("MatMul", {"x", "w1"}, {"h"})
      .node("MatMul", {"h", "w2"}, {"p"})
      .node("Add", {"p", "b2"}, {"q"})
      .node("Relu", {"q"}, {"y"})
      .output("y");
  std::vector<double> want(4 * 8);
  for (std::size_t r = 0; r < 4; ++r) {
    for (std::size_t n = 0; n < 8; ++n) {
      double acc = b2[n];
      for (std::size_t j = 0; j < 32; ++j) {
        double h = 0;
        for (std::size_t k = 0; k < 16; ++k) {
          h += static_cast<double>(xs[r * 16 + k]) * w1[k * 32 + j];
        }
        acc += h * w2[j * 8 + n];
      }
      want[r * 8 + n] = std::max(acc, 0.0);
    }
  }
  const std::vector<runtime::NpyArray> inputs = {runtime::floatArray({4, 16}, xs),
                                                 runtime::floatArray({16, 32}, w1)};
  const runtime::Session session = trn2();
  Graph g = b.graph();
  for (const auto& [name, floatValues] : {std::pair{"w2", &w2}, std::pair{"b2", &b2}}) {
    auto bytes = std::make_shared<std::vector<std::byte>>(floatValues->size() * sizeof(float));
    std::memcpy(bytes->data(), floatValues->data(), bytes->size());
    g.initializers.at(name).bytes = std::move(bytes);
  }
  ASSERT_TRUE(inferShapes(g, {}).ok());
  Result<int> fused = fuseLinear(g);
  ASSERT_TRUE(fused.ok()) << fused.status().toString();
  ASSERT_EQ(*fused, 1);
  ASSERT_TRUE(shardGraph(g, 2).ok());
  EXPECT_EQ(opTypes(g), (std::vector<std::string>{"MatMul", "trn.AllGather", "trn.Linear"}));
  EXPECT_EQ(layoutOf(g, "w2"), "replicated");
  Result<CompiledModel> model =
      compileGraph(session, g, {}, {Partition::kAuto, 1, trn2Instance(session)});
  ASSERT_TRUE(model.ok()) << model.status().toString();
  Result<ModelRun> run = runModel(session, *model, inputs, {});
  ASSERT_TRUE(run.ok()) << run.status().toString();
  const std::vector<float> got = runtime::floatValues(run->outputs.at(0));
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-5) << "element " << i;
  }
}

}  // namespace
}  // namespace trn::graph
