// The convolution-network operators end to end: one-operator models (tests/graph/models/cnn/,
// written by scripts/make_cnn_test_models.py) compiled by the graph compiler, run on a simulated
// trn2 core and checked against float64 references computed here by direct loops from the
// weights and attributes in the files; the batch-norm folding pass; and the errors that name
// the node.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "graph_builder.h"
#include "model_check.h"
#include "trn/graph/fold_batchnorm.h"
#include "trn/graph/lowering.h"
#include "trn/graph/model.h"
#include "trn/graph/onnx_import.h"
#include "trn/graph/pipeline.h"
#include "trn/graph/shape_inference.h"
#include "trn/runtime/npy.h"

namespace trn::graph {
namespace {

using fixtures::trn2;

using Sizes = std::vector<std::int64_t>;

std::string cnnModel(const std::string& name) {
  return std::string(TRN_SOURCE_DIR) + "/tests/graph/models/cnn/" + name + ".onnx";
}

std::vector<double> weightValues(const Graph& graph, const std::string& name) {
  const Tensor* t = graph.initializer(name);
  EXPECT_NE(t, nullptr) << name;
  if (t == nullptr) {
    return {};
  }
  std::vector<float> floats(t->data().size() / sizeof(float));
  std::memcpy(floats.data(), t->data().data(), floats.size() * sizeof(float));
  return {floats.begin(), floats.end()};
}

/// Deterministic input values in [-1, 1].
std::vector<float> inputValues(std::int64_t count) {
  std::vector<float> xs(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < xs.size(); ++i) {
    xs[i] = static_cast<float>(std::sin(0.731 * static_cast<double>(i) + 0.25));
  }
  return xs;
}

std::int64_t product(const Sizes& s) {
  std::int64_t n = 1;
  for (const std::int64_t d : s) {
    n *= d;
  }
  return n;
}

/// A model of tests/graph/models/cnn/ as imported (the reference reads its weights and
/// attributes), and its output from the simulated chip for input `xs`.
struct Ran {
  Graph graph;
  Sizes x;
  Sizes y;
  std::vector<float> got;
};

Ran run(const std::string& name, const std::vector<float>& xs) {
  Ran r;
  Result<Graph> g = importOnnx(cnnModel(name));
  EXPECT_TRUE(g.ok()) << g.status().toString();
  r.graph = std::move(g).value();
  r.x = r.graph.value("x")->shape->sizes();
  r.y = r.graph.value("y")->shape->sizes();
  const runtime::Session session = trn2();
  Result<CompiledModel> model = compileModel(session, cnnModel(name), {});
  EXPECT_TRUE(model.ok()) << model.status().toString();
  if (!model.ok()) {
    return r;
  }
  const runtime::NpyArray x = runtime::floatArray(r.x, xs);
  Result<ModelRun> ran = runModel(session, *model, {&x, 1}, {});
  EXPECT_TRUE(ran.ok()) << ran.status().toString();
  if (ran.ok()) {
    EXPECT_EQ(ran->outputs[0].shape, r.y);
    r.got = runtime::floatValues(ran->outputs[0]);
  }
  return r;
}

/// A spatial attribute of node 0 for dimension d of `spatial`, or `fallback`.
std::int64_t attr(const Graph& graph, const char* name, std::size_t d, std::int64_t fallback) {
  const std::optional<Sizes> v = graph.nodes[0].intsAttribute(name);
  return v ? (*v)[d] : fallback;
}

/// Window geometry of node 0 per spatial dimension (1-D models have one), with auto_pad
/// resolved by hand: SAME_UPPER puts the odd padding at the end.
struct Dims {
  Sizes in, out, kernel, stride, dilation, padBegin, padEnd;
};

Dims dimsOf(const Ran& r, const Sizes& kernel) {
  const std::size_t spatial = r.x.size() - 2;
  Dims d;
  const Attribute* autoPad = r.graph.nodes[0].attribute("auto_pad");
  const bool sameUpper =
      autoPad != nullptr && std::get<std::string>(autoPad->value) == "SAME_UPPER";
  for (std::size_t k = 0; k < spatial; ++k) {
    d.in.push_back(r.x[2 + k]);
    d.out.push_back(r.y[2 + k]);
    d.kernel.push_back(kernel[k]);
    d.stride.push_back(attr(r.graph, "strides", k, 1));
    d.dilation.push_back(attr(r.graph, "dilations", k, 1));
    if (sameUpper) {
      const std::int64_t total = std::max<std::int64_t>(
          0, (d.out[k] - 1) * d.stride[k] + (kernel[k] - 1) * d.dilation[k] + 1 - d.in[k]);
      d.padBegin.push_back(total / 2);
      d.padEnd.push_back(total - total / 2);
    } else {
      d.padBegin.push_back(attr(r.graph, "pads", k, 0));
      d.padEnd.push_back(attr(r.graph, "pads", k + spatial, 0));
    }
  }
  // 1-D as 2-D of height 1.
  if (spatial == 1) {
    for (Sizes* s : {&d.in, &d.out, &d.kernel, &d.stride, &d.dilation}) {
      s->insert(s->begin(), 1);
    }
    d.padBegin.insert(d.padBegin.begin(), 0);
    d.padEnd.insert(d.padEnd.begin(), 0);
  }
  return d;
}

/// Unit roundoff of fp32.
constexpr double kU = 1.0 / (1 << 24);

/// Checks a convolution model against a direct float64 convolution. Each output is a sum of
/// K = C/group x kH x kW products accumulated in fp32 (then the bias added and the result
/// rounded), so it may differ from the exact value by at most (K + 2) u sum |w x| + u |y| (the
/// standard bound for recursive summation, u = 2^-24): that is the tolerance, per element.
void expectConvMatches(const std::string& name) {
  SCOPED_TRACE(name);
  Result<Graph> imported = importOnnx(cnnModel(name));
  ASSERT_TRUE(imported.ok());
  const Sizes x = imported->value("x")->shape->sizes();
  const std::vector<float> xs = inputValues(product(x));
  const Ran r = run(name, xs);
  ASSERT_EQ(r.got.size(), static_cast<std::size_t>(product(r.y)));
  const Node& node = r.graph.nodes[0];
  const Sizes ws = r.graph.initializer(node.inputs[1])->shape.sizes();
  const std::vector<double> w = weightValues(r.graph, node.inputs[1]);
  const std::vector<double> b =
      node.hasInput(2) ? weightValues(r.graph, node.inputs[2]) : std::vector<double>(ws[0], 0.0);
  const Sizes kernel(ws.begin() + 2, ws.end());
  const Dims d = dimsOf(r, kernel);
  const std::int64_t group = node.intAttribute("group").value_or(1);
  const std::int64_t n = r.x[0], c = r.x[1], m = ws[0], cg = ws[1];
  const std::int64_t h = d.in[0], wd = d.in[1], oh = d.out[0], ow = d.out[1];
  const std::int64_t kh = d.kernel[0], kw = d.kernel[1];
  const std::int64_t k = cg * kh * kw;
  double worst = 0;
  for (std::int64_t b0 = 0; b0 < n; ++b0) {
    for (std::int64_t o = 0; o < m; ++o) {
      const std::int64_t g = o / (m / group);
      for (std::int64_t i = 0; i < oh; ++i) {
        for (std::int64_t j = 0; j < ow; ++j) {
          double acc = b[o];
          double magnitude = std::abs(b[o]);
          for (std::int64_t ci = 0; ci < cg; ++ci) {
            for (std::int64_t p = 0; p < kh; ++p) {
              for (std::int64_t q = 0; q < kw; ++q) {
                const std::int64_t row = i * d.stride[0] + p * d.dilation[0] - d.padBegin[0];
                const std::int64_t col = j * d.stride[1] + q * d.dilation[1] - d.padBegin[1];
                if (row < 0 || row >= h || col < 0 || col >= wd) {
                  continue;
                }
                const double xv = xs[((b0 * c + g * cg + ci) * h + row) * wd + col];
                const double wv = w[((o * cg + ci) * kh + p) * kw + q];
                acc += xv * wv;
                magnitude += std::abs(xv * wv);
              }
            }
          }
          const double got = r.got[((b0 * m + o) * oh + i) * ow + j];
          const double tolerance = static_cast<double>(k + 2) * kU * magnitude + kU * std::abs(acc);
          EXPECT_LE(std::abs(got - acc), tolerance)
              << "at " << b0 << ", " << o << ", " << i << ", " << j << ": " << got << " vs " << acc;
          worst = std::max(worst, std::abs(got - acc));
        }
      }
    }
  }
  EXPECT_GT(worst, 0.0);  // the reference is independent: fp32 differs from it somewhere
}

TEST(GraphConv, Stride2Padding1MatchesADirectConvolution) {
  expectConvMatches("conv3x3_stride2_pad1");
}
TEST(GraphConv, OutputsOverSeveralPsumTilesMatch) { expectConvMatches("conv3x3_pad1_tiles"); }
TEST(GraphConv, OneByOneOverMoreThan128ChannelsMatches) { expectConvMatches("conv1x1_wide"); }
TEST(GraphConv, SevenBySevenStemWithPackedRowsMatches) {
  expectConvMatches("conv7x7_stride2_pad3");
}
TEST(GraphConv, DilatedAsymmetricPaddingMatches) { expectConvMatches("conv_dilated_asymmetric"); }
TEST(GraphConv, GroupedMatches) { expectConvMatches("conv_grouped"); }
TEST(GraphConv, DepthwiseMatches) { expectConvMatches("conv_depthwise"); }
TEST(GraphConv, AutoPadSameUpperMatches) { expectConvMatches("conv_same_upper"); }
TEST(GraphConv, OneDimensionalMatches) { expectConvMatches("conv1d"); }

/// Checks a MaxPool or AveragePool model against direct float64 loops. A max is exact; an
/// average sums at most kH x kW values in fp32 and divides once, so it is within
/// (kH kW + 1) u of the exact mean of the absolute values.
void expectPoolMatches(const std::string& name) {
  SCOPED_TRACE(name);
  Result<Graph> imported = importOnnx(cnnModel(name));
  ASSERT_TRUE(imported.ok());
  const std::vector<float> xs = inputValues(product(imported->value("x")->shape->sizes()));
  const Ran r = run(name, xs);
  ASSERT_EQ(r.got.size(), static_cast<std::size_t>(product(r.y)));
  const Node& node = r.graph.nodes[0];
  const bool isMax = node.opType == "MaxPool";
  const bool includePad = node.intAttribute("count_include_pad").value_or(0) != 0;
  const Dims d = dimsOf(r, *node.intsAttribute("kernel_shape"));
  const std::int64_t planes = r.x[0] * r.x[1];
  const std::int64_t h = d.in[0], w = d.in[1], oh = d.out[0], ow = d.out[1];
  for (std::int64_t p = 0; p < planes; ++p) {
    for (std::int64_t i = 0; i < oh; ++i) {
      for (std::int64_t j = 0; j < ow; ++j) {
        double best = -std::numeric_limits<double>::infinity();
        double sum = 0;
        double magnitude = 0;
        std::int64_t counted = 0;
        for (std::int64_t a = 0; a < d.kernel[0]; ++a) {
          for (std::int64_t e = 0; e < d.kernel[1]; ++e) {
            const std::int64_t row = i * d.stride[0] + a * d.dilation[0] - d.padBegin[0];
            const std::int64_t col = j * d.stride[1] + e * d.dilation[1] - d.padBegin[1];
            // PyTorch's count_include_pad counts the padding, not ceil_mode's overhang past it.
            const bool inPadded = row < h + d.padEnd[0] && col < w + d.padEnd[1];
            const bool inImage = row >= 0 && row < h && col >= 0 && col < w;
            counted += includePad ? static_cast<std::int64_t>(inPadded) : inImage;
            if (inImage) {
              const double v = xs[(p * h + row) * w + col];
              best = std::max(best, v);
              sum += v;
              magnitude += std::abs(v);
            }
          }
        }
        const double got = r.got[(p * oh + i) * ow + j];
        if (isMax) {
          EXPECT_EQ(got, best) << "at " << p << ", " << i << ", " << j;
        } else {
          const double want = sum / static_cast<double>(counted);
          const double tolerance = static_cast<double>(d.kernel[0] * d.kernel[1] + 1) * kU *
                                   magnitude / static_cast<double>(counted);
          EXPECT_LE(std::abs(got - want), tolerance) << "at " << p << ", " << i << ", " << j;
        }
      }
    }
  }
}

TEST(GraphPool, MaxPool3x3Stride2Padding1Matches) { expectPoolMatches("maxpool3x3_stride2_pad1"); }
TEST(GraphPool, MaxPoolCeilModeMatches) { expectPoolMatches("maxpool_ceil"); }
TEST(GraphPool, AveragePoolExcludingPaddingMatches) { expectPoolMatches("avgpool_pad_excluded"); }
TEST(GraphPool, AveragePoolIncludingPaddingMatches) { expectPoolMatches("avgpool_pad_included"); }
TEST(GraphPool, AveragePoolCeilModeMatches) { expectPoolMatches("avgpool_ceil"); }

TEST(GraphPool, GlobalPoolsMatch) {
  for (const char* name : {"global_avgpool", "global_maxpool"}) {
    SCOPED_TRACE(name);
    Result<Graph> imported = importOnnx(cnnModel(name));
    ASSERT_TRUE(imported.ok());
    const std::vector<float> xs = inputValues(product(imported->value("x")->shape->sizes()));
    const Ran r = run(name, xs);
    const std::int64_t planes = r.x[0] * r.x[1];
    const std::int64_t size = r.x[2] * r.x[3];
    ASSERT_EQ(r.got.size(), static_cast<std::size_t>(planes));
    const bool isMax = std::string(name) == "global_maxpool";
    for (std::int64_t p = 0; p < planes; ++p) {
      double best = -std::numeric_limits<double>::infinity();
      double sum = 0;
      double magnitude = 0;
      for (std::int64_t i = 0; i < size; ++i) {
        best = std::max<double>(best, xs[p * size + i]);
        sum += xs[p * size + i];
        magnitude += std::abs(xs[p * size + i]);
      }
      if (isMax) {
        EXPECT_EQ(r.got[p], best);
      } else {
        EXPECT_LE(std::abs(r.got[p] - sum / static_cast<double>(size)),
                  static_cast<double>(size + 1) * kU * magnitude / static_cast<double>(size));
      }
    }
  }
}

/// y = (v - mean) / sqrt(var + eps) * scale + beta per channel, in float64.
double normalized(const Graph& g, const Node& bn, std::int64_t channel, double v) {
  const double eps = bn.floatAttribute("epsilon").value_or(1e-5f);
  const auto c = static_cast<std::size_t>(channel);
  return (v - weightValues(g, bn.inputs[3])[c]) /
             std::sqrt(weightValues(g, bn.inputs[4])[c] + eps) * weightValues(g, bn.inputs[1])[c] +
         weightValues(g, bn.inputs[2])[c];
}

TEST(GraphBatchNorm, AloneMatchesAFloat64Reference) {
  Result<Graph> imported = importOnnx(cnnModel("batchnorm_alone"));
  ASSERT_TRUE(imported.ok());
  const std::vector<float> xs = inputValues(product(imported->value("x")->shape->sizes()));
  const Ran r = run("batchnorm_alone", xs);
  const std::int64_t channels = r.x[1];
  const std::int64_t size = r.x[2] * r.x[3];
  ASSERT_EQ(r.got.size(), xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const std::int64_t channel = (static_cast<std::int64_t>(i) / size) % channels;
    const double want = normalized(r.graph, r.graph.nodes[0], channel, xs[i]);
    // A handful of fp32 operations on values of order 1.
    EXPECT_NEAR(r.got[i], want, 8 * kU * (1 + std::abs(want))) << i;
  }
}

TEST(GraphBatchNorm, AfterAConvIsFoldedIntoIt) {
  PipelineOptions options;
  options.stopAfter = "fold-batchnorm";
  Result<Graph> folded = runPipeline(cnnModel("batchnorm_after_conv"), options);
  ASSERT_TRUE(folded.ok()) << folded.status().toString();
  ASSERT_EQ(folded->nodes.size(), 1u);
  EXPECT_EQ(folded->nodes[0].opType, "Conv");
  EXPECT_EQ(folded->nodes[0].outputs[0], "y");
  EXPECT_EQ(folded->initializer("scale"), nullptr);  // the statistics are gone

  // The folded model against Conv then BatchNormalization in float64.
  Result<Graph> imported = importOnnx(cnnModel("batchnorm_after_conv"));
  ASSERT_TRUE(imported.ok());
  const std::vector<float> xs = inputValues(product(imported->value("x")->shape->sizes()));
  const Ran r = run("batchnorm_after_conv", xs);
  const Node& conv = r.graph.nodes[0];
  const Node& bn = r.graph.nodes[1];
  const std::vector<double> w = weightValues(r.graph, conv.inputs[1]);
  const std::vector<double> b = weightValues(r.graph, conv.inputs[2]);
  const std::int64_t c = r.x[1], h = r.x[2], wd = r.x[3];
  ASSERT_EQ(r.got.size(), xs.size());
  for (std::int64_t o = 0; o < c; ++o) {
    for (std::int64_t i = 0; i < h; ++i) {
      for (std::int64_t j = 0; j < wd; ++j) {
        double acc = b[o];
        double magnitude = std::abs(b[o]);
        for (std::int64_t ci = 0; ci < c; ++ci) {
          for (std::int64_t p = 0; p < 3; ++p) {
            for (std::int64_t q = 0; q < 3; ++q) {
              const std::int64_t row = i + p - 1;
              const std::int64_t col = j + q - 1;
              if (row >= 0 && row < h && col >= 0 && col < wd) {
                const double v = xs[(ci * h + row) * wd + col] * w[((o * c + ci) * 3 + p) * 3 + q];
                acc += v;
                magnitude += std::abs(v);
              }
            }
          }
        }
        const double want = normalized(r.graph, bn, o, acc);
        const double scale =
            std::abs(normalized(r.graph, bn, o, 1) - normalized(r.graph, bn, o, 0));
        // The conv's bound (K = 36 products) scaled by the channel's BN gain, plus the rounding
        // of the folded weights and bias (one ulp each) and of the result.
        const double tolerance = (36 + 4) * kU * magnitude * scale + 2 * kU * (1 + std::abs(want));
        EXPECT_LE(std::abs(r.got[(o * h + i) * wd + j] - want), tolerance);
      }
    }
  }
}

TEST(GraphBatchNorm, FoldingLeavesABatchNormAfterAnythingElse) {
  fixtures::GraphBuilder b;
  b.input("x", {1, 2, 4, 4})
      .weight("W", {2, 2, 3, 3})
      .weight("s", {2})
      .weight("t", {2})
      .weight("m", {2})
      .weight("v", {2})
      .node("Conv", {"x", "W"}, {"c"}, {fixtures::attr("pads", Sizes{1, 1, 1, 1})})
      .node("Relu", {"c"}, {"r"})
      .node("BatchNormalization", {"r", "s", "t", "m", "v"}, {"y"})
      .node("BatchNormalization", {"c", "s", "t", "m", "v"}, {"z"})
      .output("y")
      .output("z");
  Graph& g = b.graph();
  ASSERT_TRUE(inferShapes(g, {}).ok());
  Result<int> folded = foldBatchNorms(g);
  ASSERT_TRUE(folded.ok());
  // The Conv's output has two readers (Relu and the second BatchNormalization): neither folds.
  EXPECT_EQ(*folded, 0);
  EXPECT_EQ(g.nodes.size(), 4u);
}

TEST(GraphCnn, PyTorchsSmallCnnMatchesPyTorch) {
  // torch_cnn.onnx (scripts/export_torch_models.py): conv with the exporter's folded batch norm,
  // relu, max pool, strided conv, adaptive average pool, flatten, linear.
  const std::string dir = std::string(TRN_SOURCE_DIR) + "/tests/graph/models/";
  const runtime::Session session = trn2();
  Result<CompiledModel> model = compileModel(session, dir + "torch_cnn.onnx", {});
  ASSERT_TRUE(model.ok()) << model.status().toString();
  Result<runtime::NpyArray> x = runtime::readNpy(dir + "torch_cnn.x.npy");
  Result<runtime::NpyArray> y = runtime::readNpy(dir + "torch_cnn.y.npy");
  ASSERT_TRUE(x.ok() && y.ok());
  Result<ModelRun> ran = runModel(session, *model, {&*x, 1}, {});
  ASSERT_TRUE(ran.ok()) << ran.status().toString();
  // fp32 on both sides over four layers of at most 144-term sums, outputs of order 0.1: PyTorch
  // and the device differ only in summation order.
  EXPECT_LT(fixtures::worstError(ran->outputs[0], *y), 1e-5);
}

/// The lowering error for a graph of one node built in memory, from compiling it.
std::string loweringError(Graph& g) {
  EXPECT_TRUE(inferShapes(g, {}).ok());
  const Result<CompiledModel> compiled = compileGraph(trn2(), g);
  EXPECT_FALSE(compiled.ok());
  return compiled.ok() ? std::string() : compiled.status().message();
}

TEST(GraphConv, AWeightComputedInTheGraphIsNamed) {
  fixtures::GraphBuilder b;
  b.input("x", {1, 2, 5, 5})
      .weight("W", {3, 2, 3, 3})
      .node("Relu", {"W"}, {"w_relu"})
      .node("Conv", {"x", "w_relu"}, {"y"})
      .output("y");
  const std::string message = loweringError(b.graph());
  EXPECT_NE(message.find("node 'Conv_1' (Conv)"), std::string::npos) << message;
  EXPECT_NE(message.find("weight 'w_relu' must be an initializer"), std::string::npos) << message;
}

TEST(GraphConv, ThreeDimensionalWindowsAreNamed) {
  fixtures::GraphBuilder b;
  b.input("x", {1, 2, 4, 4, 4})
      .node("MaxPool", {"x"}, {"y"}, {fixtures::attr("kernel_shape", Sizes{2, 2, 2})})
      .output("y");
  const std::string message = loweringError(b.graph());
  EXPECT_NE(message.find("node 'MaxPool_0' (MaxPool)"), std::string::npos) << message;
  EXPECT_NE(message.find("only 1-D and 2-D windows are lowered"), std::string::npos) << message;
}

TEST(GraphConv, MaxPoolIndicesAreNamed) {
  fixtures::GraphBuilder b;
  b.input("x", {1, 2, 4, 4})
      .node("MaxPool", {"x"}, {"y", "idx"}, {fixtures::attr("kernel_shape", Sizes{2, 2})})
      .output("y");
  const std::string message = loweringError(b.graph());
  EXPECT_NE(message.find("node 'MaxPool_0' (MaxPool)"), std::string::npos) << message;
  EXPECT_NE(message.find("Indices output is not lowered"), std::string::npos) << message;
}

TEST(GraphConv, AnUnknownAutoPadIsNamed) {
  fixtures::GraphBuilder b;
  b.input("x", {1, 2, 5, 5})
      .weight("W", {3, 2, 3, 3})
      .node("Conv", {"x", "W"}, {"y"}, {fixtures::textAttr("auto_pad", "SAME_MIDDLE")})
      .output("y");
  const Status status = inferShapes(b.graph(), {});
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("node 'Conv_0' (Conv)"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("auto_pad 'SAME_MIDDLE'"), std::string::npos) << status.message();
}

TEST(GraphConv, AGroupCountThatDoesNotDivideIsNamed) {
  fixtures::GraphBuilder b;
  b.input("x", {1, 6, 5, 5})
      .weight("W", {4, 2, 3, 3})
      .node("Conv", {"x", "W"}, {"y"}, {fixtures::attr("group", std::int64_t{4})})
      .output("y");
  const Status status = inferShapes(b.graph(), {});
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("node 'Conv_0' (Conv)"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("group 4 does not divide"), std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace trn::graph
