// The graph compiler end to end: models folded, laid out, lowered into one tile kernel, compiled
// and run on a simulated trn2 core, their outputs checked against PyTorch's own CPU outputs
// (saved beside the exported models) or a float64 reference computed here from the weights.
#include "trn/graph/model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>

#include "graph_builder.h"
#include "model_check.h"
#include "trn/graph/fold.h"
#include "trn/graph/lowering.h"
#include "trn/graph/node_profile.h"
#include "trn/graph/onnx_import.h"
#include "trn/graph/shape_inference.h"
#include "trn/runtime/npy.h"

namespace trn::graph {
namespace {

using fixtures::modelPath;
using fixtures::trn2;

PipelineOptions atBatch(std::int64_t batch) {
  PipelineOptions options;
  options.shapes.symbols = {{"batch", batch}};
  return options;
}

std::vector<float> floats(const Tensor& t) {
  std::vector<float> out(t.data().size() / sizeof(float));
  std::memcpy(out.data(), t.data().data(), out.size() * sizeof(float));
  return out;
}

/// The graph `b` built, its shapes inferred, compiled for the session's core with its weights.
Result<CompiledModel> compileBuilt(fixtures::GraphBuilder& b, const runtime::Session& session) {
  Graph graph = std::move(b.graph());
  TRN_RETURN_IF_ERROR(inferShapes(graph, {}));
  return compileGraph(session, std::move(graph));
}

/// The first output of a functional run of `model` on `x`, as float32 (empty on failure).
std::vector<float> runFunctional(const runtime::Session& session, const CompiledModel& model,
                                 const runtime::NpyArray& x) {
  runtime::RunOptions options;
  options.mode = core::RunMode::kFunctionalOnly;
  Result<ModelRun> run = runModel(session, model, {&x, 1}, options);
  EXPECT_TRUE(run.ok()) << run.status().toString();
  return run.ok() ? runtime::floatValues(run->outputs.at(0)) : std::vector<float>();
}

/// A float32 array of `shape` holding 0, 1, 2, ... in row-major order.
runtime::NpyArray counting(const std::vector<std::int64_t>& shape) {
  std::vector<float> values(static_cast<std::size_t>(Shape::of(shape).elementCount().value()));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<float>(i);
  }
  return runtime::floatArray(shape, values);
}

TEST(GraphModel, TransformerBlockMatchesPyTorch) {
  const runtime::Session session = trn2();
  Result<CompiledModel> model = compileModel(session, modelPath("torch_block.onnx"), atBatch(2));
  ASSERT_TRUE(model.ok()) << model.status().toString();
  // The 81 exported nodes fold to the 30 the device runs (no Shape, Gather, Concat, Constant),
  // the attention's five (k^T, q k^T, its scale, softmax, P v) become a transpose of k to
  // [B, H, S, D] and one flash-attention node (27), and each of the four projections takes its
  // bias Add, the MLP's first also its GELU's five nodes, into one trn.Linear: 18.
  EXPECT_EQ(model->nodeLowerings().size(), 18u);
  Result<runtime::NpyArray> x = runtime::readNpy(modelPath("torch_block.x.npy"));
  Result<runtime::NpyArray> y = runtime::readNpy(modelPath("torch_block.y.npy"));
  ASSERT_TRUE(x.ok() && y.ok());
  Result<ModelRun> run = runModel(session, *model, {&*x, 1}, {});
  ASSERT_TRUE(run.ok()) << run.status().toString();
  ASSERT_EQ(run->outputs.size(), 1u);
  // fp32 throughout: a few ulps per operation over about 20 dependent operations (PyTorch and
  // the device differ in summation order and in exp/erf), on outputs of magnitude up to ~3.
  EXPECT_LT(fixtures::worstError(run->outputs[0], *y), 1e-5);
  EXPECT_GT(run->stats.total.count(), 0);
}

TEST(GraphModel, MlpMatchesAFloat64Reference) {
  // The reference reads the weights as imported (w1 [32, 16] with Gemm's transB), so it does
  // not share the layout pass's transposition.
  Result<Graph> imported = importOnnx(modelPath("mlp.onnx"));
  ASSERT_TRUE(imported.ok());
  const std::vector<float> w1 = floats(*imported->initializer("w1"));
  const std::vector<float> b1 = floats(*imported->initializer("b1"));
  const std::vector<float> w2 = floats(*imported->initializer("w2"));
  const std::vector<float> b2 = floats(*imported->initializer("b2"));
  const std::int64_t batch = 130;  // more rows than partitions: two row tiles
  std::vector<float> xs(static_cast<std::size_t>(batch * 16));
  for (std::size_t i = 0; i < xs.size(); ++i) {
    xs[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)));
  }
  const runtime::Session session = trn2();
  Result<CompiledModel> model = compileModel(session, modelPath("mlp.onnx"), atBatch(batch));
  ASSERT_TRUE(model.ok()) << model.status().toString();
  const runtime::NpyArray x = runtime::floatArray({batch, 16}, xs);
  Result<ModelRun> run = runModel(session, *model, {&x, 1}, {});
  ASSERT_TRUE(run.ok()) << run.status().toString();
  const std::vector<float> got = runtime::floatValues(run->outputs[0]);
  ASSERT_EQ(got.size(), static_cast<std::size_t>(batch * 8));
  double worst = 0;
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
      worst = std::max(worst, std::abs(acc - got[static_cast<std::size_t>(r) * 8 + n]));
    }
  }
  EXPECT_LT(worst, 1e-5);
}

// Two identical transformer blocks (an nn.Sequential): one kernel, compiled once, launched for
// each; the output is PyTorch's.
TEST(GraphModel, StackedBlocksShareOneKernelAndMatchPyTorch) {
  const runtime::Session session = trn2();
  Result<CompiledModel> model = compileModel(session, modelPath("torch_stack.onnx"), atBatch(2));
  ASSERT_TRUE(model.ok()) << model.status().toString();
  ASSERT_EQ(model->parts.size(), 2u);
  EXPECT_EQ(model->kernels, 1u);
  EXPECT_EQ(model->parts[0].name, "0");
  EXPECT_EQ(model->parts[1].name, "1");
  Result<runtime::NpyArray> x = runtime::readNpy(modelPath("torch_stack.x.npy"));
  Result<runtime::NpyArray> y = runtime::readNpy(modelPath("torch_stack.y.npy"));
  ASSERT_TRUE(x.ok() && y.ok());
  Result<ModelRun> run = runModel(session, *model, {&*x, 1}, {});
  ASSERT_TRUE(run.ok()) << run.status().toString();
  EXPECT_LT(fixtures::worstError(run->outputs[0], *y), 1e-5);
}

TEST(GraphModel, RunsAreDeterministic) {
  const runtime::Session session = trn2();
  Result<CompiledModel> model = compileModel(session, modelPath("attention.onnx"), atBatch(3));
  ASSERT_TRUE(model.ok()) << model.status().toString();
  runtime::RunOptions options;
  options.mode = core::RunMode::kTimingOnly;
  Result<ModelRun> a = runModel(session, *model, {}, options);
  Result<ModelRun> b = runModel(session, *model, {}, options);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().toString();
  EXPECT_EQ(a->stats.total, b->stats.total);
  EXPECT_GT(a->stats.total.count(), 0);
}

TEST(GraphModel, EveryInstructionIsChargedToItsNode) {
  const runtime::Session session = trn2();
  Result<CompiledModel> model = compileModel(session, modelPath("torch_block.onnx"), atBatch(2));
  ASSERT_TRUE(model.ok()) << model.status().toString();
  runtime::RunOptions options;
  options.mode = core::RunMode::kTimingOnly;
  options.record = true;
  Result<ModelRun> run = runModel(session, *model, {}, options);
  ASSERT_TRUE(run.ok()) << run.status().toString();
  const std::vector<NodeTime> nodes = profileNodes(*model, *run);
  ASSERT_EQ(nodes.size(), 18u);
  std::int64_t instructions = 0;
  for (const NodeTime& n : nodes) {
    instructions += n.instructions;
    EXPECT_LE(n.first, n.last) << n.node;
    EXPECT_LE(n.last, run->stats.total) << n.node;
    if (n.lowering == "view" || n.lowering.starts_with("fused into")) {
      EXPECT_EQ(n.instructions, 0) << n.node;
    } else {
      EXPECT_GT(n.instructions, 0) << n.node;
    }
  }
  ASSERT_EQ(run->parts.size(), 1u);
  EXPECT_EQ(instructions, static_cast<std::int64_t>(run->parts[0].records.size()));
  // The first node is the first layer norm, and the model ends with the last residual add.
  EXPECT_EQ(nodes.front().node, "/ln1/LayerNormalization");
  EXPECT_EQ(nodes.front().first, Picoseconds(0));
  EXPECT_EQ(nodes.back().node, "/Add_2");
  EXPECT_EQ(nodes.back().last, run->stats.total);
}

// A chain of element-wise nodes, each followed by a transpose (so that they are not fused): each
// value dies once the next node has read it, so the lowering hands its HBM scratch to the value
// after next of its shape, and two buffers of each of the two shapes serve the whole chain; the
// backend orders each reuse after the reads of the value before, so the result is exact.
TEST(GraphModel, DeadScratchIsReusedByLaterValuesOfItsShape) {
  fixtures::GraphBuilder b;
  b.input("x", {256, 512});
  const std::vector<std::string> ops = {"Abs", "Sqrt", "Neg", "Exp", "Relu", "Sqrt", "Neg", "Abs"};
  std::string previous = "x";
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const std::string out = "v" + std::to_string(i);
    const std::string transposed = i + 1 == ops.size() ? "y" : "t" + std::to_string(i);
    b.node(ops[i], {previous}, {out});
    b.node("Transpose", {out}, {transposed},
           {fixtures::attr("perm", std::vector<std::int64_t>{1, 0})});
    previous = transposed;
  }
  b.output("y");
  const runtime::Session session = trn2();
  Result<CompiledModel> model = compileBuilt(b, session);
  ASSERT_TRUE(model.ok()) << model.status().toString();
  int scratch = 0;
  for (const auto& t : model->parts.at(0).kernel().program.tensors) {
    scratch += t.kind == isa::TensorKind::kScratch ? 1 : 0;
  }
  EXPECT_EQ(scratch, 4);  // fifteen intermediates, two buffers of each shape

  std::vector<float> values(256 * 512);
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<float>(static_cast<int>(i % 97) - 48) / 16.0f;
  }
  const std::vector<float> y =
      runFunctional(session, *model, runtime::floatArray({256, 512}, values));
  ASSERT_EQ(y.size(), values.size());
  for (std::size_t i = 0; i < values.size(); i += 61) {
    // abs, sqrt, neg, exp, relu, sqrt, neg, abs in float64.
    const double want = std::sqrt(std::exp(-std::sqrt(std::fabs(static_cast<double>(values[i])))));
    EXPECT_NEAR(y[i], want, 1e-6 * want) << i;
  }
}

// The head transposes of attention, [B, S, H, D] to [B, H, S, D] and back, copy in tiles of 128
// tokens by every head by D (emitCopyLoop): [2, 200, 6, 40] makes per batch a tile of 128 tokens
// and one of 72, so four loads and four stores, each element exactly where the permutation puts
// it, on one core and on an LNC=2 pair.
TEST(GraphModel, HeadTransposesCopyInTilesOfTokensByHeads) {
  const std::vector<std::int64_t> bshd = {2, 200, 6, 40};
  const std::vector<std::int64_t> bhsd = {2, 6, 200, 40};
  for (const bool forward : {true, false}) {
    const std::vector<std::int64_t>& from = forward ? bshd : bhsd;
    fixtures::GraphBuilder b;
    b.input("x", from)
        .node("Transpose", {"x"}, {"y"},
              {fixtures::attr("perm", std::vector<std::int64_t>{0, 2, 1, 3})})
        .output("y");
    Graph graph = std::move(b.graph());
    ASSERT_TRUE(inferShapes(graph, {}).ok());
    const runtime::Session session = trn2();
    Result<CompiledModel> model = compileGraph(session, graph);
    ASSERT_TRUE(model.ok()) << model.status().toString();
    const std::size_t dmaCopy = isa::InstructionBody(isa::DmaCopy{}).index();
    int copies = 0;
    for (const isa::InstructionStream& stream : model->parts.at(0).kernel().program.streams) {
      for (std::size_t i = 0; i < stream.size(); ++i) {
        copies += stream.typeIndex(i) == dmaCopy ? 1 : 0;
      }
    }
    EXPECT_EQ(copies, 8) << (forward ? "[B, S, H, D] to [B, H, S, D]" : "and back");
    const runtime::NpyArray x = counting(from);
    for (const int lnc : {1, 2}) {
      const std::vector<float> y = fixtures::runFunctional(graph, {x}, {}, lnc);
      ASSERT_EQ(y.size(), static_cast<std::size_t>(2 * 200 * 6 * 40));
      const std::vector<std::int64_t>& to = forward ? bhsd : bshd;
      std::size_t wrong = 0;
      for (std::int64_t i = 0; i < to[0]; ++i) {
        for (std::int64_t j = 0; j < to[1]; ++j) {
          for (std::int64_t k = 0; k < to[2]; ++k) {
            for (std::int64_t d = 0; d < to[3]; ++d) {
              // y[i, j, k, d] = x[i, k, j, d]
              const std::int64_t source = ((i * from[1] + k) * from[2] + j) * from[3] + d;
              const std::int64_t at = ((i * to[1] + j) * to[2] + k) * to[3] + d;
              wrong += y[static_cast<std::size_t>(at)] == static_cast<float>(source) ? 0 : 1;
            }
          }
        }
      }
      EXPECT_EQ(wrong, 0u) << "LNC " << lnc << (forward ? " forward" : " back");
    }
  }
}

// Rows wider than a chunk (a vocabulary) take the online form: a running maximum and a rescaled
// sum over three column chunks, then x - (m + log s); 130 rows leave a tile of two.
TEST(GraphModel, LogSoftmaxOverWideRowsMatchesAFloat64Reference) {
  constexpr std::int64_t kRows = 130;
  constexpr std::int64_t kColumns = 5000;
  fixtures::GraphBuilder b;
  b.input("x", {kRows, kColumns}).node("LogSoftmax", {"x"}, {"y"}).output("y");
  const runtime::Session session = trn2();
  Result<CompiledModel> model = compileBuilt(b, session);
  ASSERT_TRUE(model.ok()) << model.status().toString();
  std::vector<float> values(kRows * kColumns);
  for (std::size_t i = 0; i < values.size(); ++i) {
    // Row maxima in different chunks, a spread of 24 so that exp underflows nowhere it matters.
    values[i] = static_cast<float>((i * 7919) % 4801) / 200.0f;
  }
  const std::vector<float> y =
      runFunctional(session, *model, runtime::floatArray({kRows, kColumns}, values));
  ASSERT_EQ(y.size(), values.size());
  for (std::int64_t r = 0; r < kRows; r += 43) {
    const float* row = values.data() + r * kColumns;
    double m = row[0];
    for (std::int64_t c = 0; c < kColumns; ++c) {
      m = std::max(m, static_cast<double>(row[c]));
    }
    double sum = 0;
    for (std::int64_t c = 0; c < kColumns; ++c) {
      sum += std::exp(row[c] - m);
    }
    for (std::int64_t c = 0; c < kColumns; c += 97) {
      // Outputs down to -33: fp32's exp, log and sums of 5000 terms, a few ulps of 33.
      EXPECT_NEAR(y[static_cast<std::size_t>(r * kColumns + c)], row[c] - m - std::log(sum), 2e-5)
          << r << ", " << c;
    }
  }
}

// Element-wise chains are computed in one tile loop: nothing between the first load and the last
// store goes to HBM, and the result is the float64 function's.
TEST(GraphModel, ElementwiseChainsAreFusedIntoOneLoop) {
  fixtures::GraphBuilder b;
  b.input("x", {256, 512}).input("s", {256, 1});
  const std::vector<std::string> ops = {"Abs", "Sqrt", "Neg", "Exp", "Relu", "Sqrt", "Neg"};
  std::string previous = "x";
  for (std::size_t i = 0; i < ops.size(); ++i) {
    b.node(ops[i], {previous}, {"v" + std::to_string(i)});
    previous = "v" + std::to_string(i);
  }
  b.node("Mul", {previous, "s"}, {"y"}).output("y");  // s is repeated along each row
  const runtime::Session session = trn2();
  Result<CompiledModel> model = compileBuilt(b, session);
  ASSERT_TRUE(model.ok()) << model.status().toString();
  const auto lowerings = model->nodeLowerings();
  ASSERT_EQ(lowerings.size(), 8u);
  for (std::size_t n = 0; n + 1 < lowerings.size(); ++n) {
    EXPECT_EQ(lowerings[n].second, "fused into line 8") << n;
  }
  EXPECT_EQ(lowerings.back().second, "tile loop (fused, 8 nodes)");
  for (const auto& t : model->parts.at(0).kernel().program.tensors) {
    EXPECT_NE(t.kind, isa::TensorKind::kScratch) << t.name;
  }
  std::vector<float> xs(256 * 512);
  std::vector<float> ss(256);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    xs[i] = static_cast<float>(static_cast<int>(i % 97) - 48) / 16.0f;
  }
  for (std::size_t r = 0; r < ss.size(); ++r) {
    ss[r] = static_cast<float>(r % 7) - 3.0f;
  }
  const runtime::NpyArray inputs[] = {runtime::floatArray({256, 512}, xs),
                                      runtime::floatArray({256, 1}, ss)};
  runtime::RunOptions options;
  Result<ModelRun> run = runModel(session, *model, inputs, options);
  ASSERT_TRUE(run.ok()) << run.status().toString();
  // x and y once each, and s one element per row: not one descriptor per repeated element.
  EXPECT_EQ(run->stats.dma.bytes, 2 * 256 * 512 * 4 + 256 * 4);
  const std::vector<float> y = runtime::floatValues(run->outputs.at(0));
  ASSERT_EQ(y.size(), xs.size());
  for (std::size_t i = 0; i < xs.size(); i += 61) {
    // abs, sqrt, neg, exp, relu, sqrt, neg, times the row's s in float64.
    const double v = -std::sqrt(std::exp(-std::sqrt(std::fabs(static_cast<double>(xs[i])))));
    const double want = v * ss[i / 512];
    EXPECT_NEAR(y[i], want, 1e-6 * (1 + std::fabs(want))) << i;
  }
}

// Under auto-cast the weights only products read are stored in the auto-cast type (bf16: half
// the bytes to load; fp8_e4m3: a quarter); biases, norms' parameters and everything else stay
// fp32, and the output stays close to PyTorch's.
TEST(GraphModel, AutoCastStoresProductWeightsInItsType) {
  const runtime::Session session = trn2();
  Result<runtime::NpyArray> x = runtime::readNpy(modelPath("torch_block.x.npy"));
  Result<runtime::NpyArray> y = runtime::readNpy(modelPath("torch_block.y.npy"));
  ASSERT_TRUE(x.ok() && y.ok());
  std::map<DType, double> errors;
  std::map<DType, std::int64_t> dmaBytes;
  for (const DType type : {DType::kBf16, DType::kFp8E4m3}) {
    SCOPED_TRACE(dtypeName(type));
    kernel::CompileOptions options;
    options.autoCast = {kernel::AutoCast::kMatmult, type};
    Result<CompiledModel> model =
        compileModel(session, modelPath("torch_block.onnx"), atBatch(2), options);
    ASSERT_TRUE(model.ok()) << model.status().toString();
    int cast = 0;
    const LoweredModel& lowered = model->parts.at(0).lowered;
    for (const ModelTensor& t : lowered.inputs) {
      const Value* v = lowered.graph->value(t.value);
      ASSERT_NE(v, nullptr);
      bool product = false;
      for (const Node& n : lowered.graph->nodes) {
        // Products: MatMul, Gemm and the fused trn.Linear (fuse_linear.h).
        product =
            product || ((n.opType == "Gemm" || n.opType == "MatMul" || n.opType == "Linear") &&
                        n.inputs.size() > 1 && n.inputs[1] == t.value);
      }
      const bool weight = lowered.graph->initializer(t.value) != nullptr;
      EXPECT_EQ(t.spec.dtype, weight && product ? type : DType::kFp32) << t.value;
      cast += t.spec.dtype == type ? 1 : 0;
    }
    EXPECT_EQ(cast, 4);  // qkv, proj, up, down
    Result<ModelRun> run = runModel(session, *model, {&*x, 1}, {});
    ASSERT_TRUE(run.ok()) << run.status().toString();
    errors[type] = fixtures::worstError(run->outputs[0], *y);
    dmaBytes[type] = run->stats.dma.bytes;
  }
  // 8-bit operands (bf16) in products of 16 and 32 terms, outputs up to ~3: within a few
  // hundredths; fp8_e4m3's 4-bit operands are 16 times coarser.
  EXPECT_GT(errors[DType::kBf16], 1e-4);
  EXPECT_LT(errors[DType::kBf16], 0.1);
  EXPECT_GT(errors[DType::kFp8E4m3], 2 * errors[DType::kBf16]);
  EXPECT_LT(errors[DType::kFp8E4m3], 1.0);
  EXPECT_LT(dmaBytes[DType::kFp8E4m3], dmaBytes[DType::kBf16]);
}

// Slice with negative steps (x.flip, x[:, ::-2]): each index of the reversed axis copies its slab
// from the mirrored place; here axis 1 of [2, 5, 3] from 4 down by 2 (4, 2, 0) and axis 2 by +2
// (0, 2). A reversal over more than 64 elements is refused, naming the node.
TEST(GraphModel, SliceWithNegativeStepsReversesTheAxis) {
  fixtures::GraphBuilder b;
  b.input("x", {2, 5, 3})
      .ints("starts", {4, 0})
      .ints("ends", {-6, 3})
      .ints("axes", {1, 2})
      .ints("steps", {-2, 2});
  b.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}).output("y");
  const runtime::Session session = trn2();
  Result<CompiledModel> model = compileBuilt(b, session);
  ASSERT_TRUE(model.ok()) << model.status().toString();
  const std::vector<float> y = runFunctional(session, *model, counting({2, 5, 3}));
  ASSERT_EQ(y.size(), 12u);
  std::size_t k = 0;
  for (int n = 0; n < 2; ++n) {
    for (const int row : {4, 2, 0}) {
      for (const int col : {0, 2}) {
        EXPECT_EQ(y[k++], static_cast<float>(n * 15 + row * 3 + col)) << n << row << col;
      }
    }
  }

  fixtures::GraphBuilder wide;
  wide.input("x", {2, 100})
      .ints("starts", {-1})
      .ints("ends", {-101})
      .ints("axes", {1})
      .ints("steps", {-1});
  wide.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}).output("y");
  Result<CompiledModel> refused = compileBuilt(wide, session);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("negative Slice steps over 100 elements"),
            std::string::npos)
      << refused.status().message();
}

// Gather with indices known at compile time, along a middle axis, with a negative index: each
// index copies its slice (the int64 index weight reaches the device narrowed, unused).
TEST(GraphModel, GatherOfKnownIndicesCopiesTheirSlices) {
  fixtures::GraphBuilder b;
  b.input("x", {2, 5, 3}).ints("idx", {4, -5, 2});
  b.node("Gather", {"x", "idx"}, {"y"}, {fixtures::attr("axis", 1)}).output("y");
  const runtime::Session session = trn2();
  Result<CompiledModel> model = compileBuilt(b, session);
  ASSERT_TRUE(model.ok()) << model.status().toString();
  EXPECT_EQ(model->nodeLowerings().at(0).second, "tile loop (known indices)");
  const std::vector<float> y = runFunctional(session, *model, counting({2, 5, 3}));
  ASSERT_EQ(y.size(), 18u);
  const int picked[] = {4, 0, 2};
  for (int a = 0; a < 2; ++a) {
    for (int j = 0; j < 3; ++j) {
      for (int c = 0; c < 3; ++c) {
        EXPECT_EQ(y[static_cast<std::size_t>((a * 3 + j) * 3 + c)],
                  static_cast<float>((a * 5 + picked[j]) * 3 + c));
      }
    }
  }
}

TEST(GraphModel, LayersAreTheIndexedModulesOfNodeNames) {
  EXPECT_EQ(layerOf("/layers.3/mlp/down/MatMul"), "layers.3");
  EXPECT_EQ(layerOf("/model/h.10/attn/Softmax"), "h.10");
  EXPECT_EQ(layerOf("/layer1/layer1.0/conv1/Conv"), "layer1.0");
  EXPECT_EQ(layerOf("/norm/Mul"), "norm");
  EXPECT_EQ(layerOf("/ln1/LayerNormalization"), "ln1");
  EXPECT_EQ(layerOf("/Add_2"), "(graph)");
  EXPECT_EQ(layerOf("MatMul_7"), "(graph)");
  EXPECT_EQ(layerOf("/v1.x/Mul"), "v1.x");  // no index after the dot: not a layer list

  std::vector<NodeTime> nodes(4);
  nodes[0] = {"/layers.0/a/MatMul", "", 3, Picoseconds(0), Picoseconds(10), Picoseconds(6),
              Picoseconds(4)};
  nodes[1] = {"/layers.0/Reshape", "view",        0, Picoseconds(0), Picoseconds(0),
              Picoseconds(0),      Picoseconds(0)};
  nodes[2] = {"/layers.1/a/MatMul", "", 3, Picoseconds(10), Picoseconds(25), Picoseconds(7),
              Picoseconds(5)};
  nodes[3] = {"/layers.0/b/Add", "", 1, Picoseconds(8), Picoseconds(12), Picoseconds(1),
              Picoseconds(0)};
  const std::vector<LayerTime> layers = profileLayers(nodes);
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[0].layer, "layers.0");
  EXPECT_EQ(layers[0].nodes, 3);
  EXPECT_EQ(layers[0].instructions, 4);
  EXPECT_EQ(layers[0].first, Picoseconds(0));
  EXPECT_EQ(layers[0].last, Picoseconds(12));
  EXPECT_EQ(layers[0].engineBusy, Picoseconds(7));
  EXPECT_EQ(layers[0].dmaBusy, Picoseconds(4));
  EXPECT_EQ(layers[1].first, Picoseconds(10));
  const std::string table = formatLayerProfile(layers, 1);
  EXPECT_NE(table.find("layers.0"), std::string::npos);
  EXPECT_NE(table.find("(1 more)"), std::string::npos);
}

TEST(GraphModel, FoldingKeepsOnlyWhatTheDeviceComputes) {
  Result<Graph> g = importOnnx(modelPath("torch_block.onnx"));
  ASSERT_TRUE(g.ok());
  ASSERT_TRUE(inferShapes(*g, {.symbols = {{"batch", 2}}}).ok());
  ASSERT_EQ(g->nodes.size(), 81u);
  ASSERT_TRUE(foldConstants(*g).ok());
  for (const Node& node : g->nodes) {
    EXPECT_NE(node.opType, "Shape");
    EXPECT_NE(node.opType, "Gather");
    EXPECT_NE(node.opType, "Constant");
    EXPECT_NE(node.opType, "Identity");  // ln2 reads ln1's weights directly
  }
  EXPECT_EQ(g->nodes.size(), 30u);
  // The scale of the attention scores is a weight the tile loop takes as an immediate.
  EXPECT_TRUE(isShapeArgument("Reshape", 1));
  EXPECT_FALSE(isShapeArgument("Div", 1));
}

TEST(GraphModel, AnOperatorWithoutALoweringIsNamed) {
  fixtures::GraphBuilder b;
  b.input("x", {2, 3}).node("ReduceProd", {"x"}, {"y"}).output("y");
  ASSERT_TRUE(inferShapes(b.graph(), {}).ok());
  Result<LoweredModel> lowered = lowerGraph(b.graph());
  ASSERT_FALSE(lowered.ok());
  EXPECT_EQ(lowered.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(lowered.status().message().find("'ReduceProd_0' (ReduceProd)"), std::string::npos)
      << lowered.status().message();
  EXPECT_NE(lowered.status().message().find("no lowering"), std::string::npos);
}

TEST(GraphModel, AnInputOfTheWrongShapeIsNamed) {
  const runtime::Session session = trn2();
  Result<CompiledModel> model = compileModel(session, modelPath("mlp.onnx"), atBatch(4));
  ASSERT_TRUE(model.ok());
  const std::vector<float> values(3 * 16, 1.0f);
  const runtime::NpyArray x = runtime::floatArray({3, 16}, values);
  Result<ModelRun> run = runModel(session, *model, {&x, 1}, {});
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("input 'x' has shape [3, 16]; the model (at the given "
                                        "--dim sizes) takes [4, 16]"),
            std::string::npos)
      << run.status().message();
}

}  // namespace
}  // namespace trn::graph
