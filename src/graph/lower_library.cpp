// Lowerings of the operators with a structure of their own: matrix products (the library's
// `linear` kernel for activations against a 2-D weight, a generated tiled loop for batched
// products), Gemm with its bias fused into the PSUM evacuation, layer normalisation, softmax
// (the library kernel), the fused attention of fuse_attention.h (the library's flash attention),
// the fused products of fuse_linear.h (the library's linear with a bias and an activation), the
// fused RMS norms and rotary embeddings of fuse_rms_norm.h and fuse_rope.h (the library's RMS norm
// and rope) and reductions along the last axis.
#include <fmt/format.h>

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "lowering_context.h"
#include "trn/graph/fuse_attention.h"
#include "trn/graph/fuse_linear.h"
#include "trn/graph/fuse_rms_norm.h"
#include "trn/graph/fuse_rope.h"
#include "trn/kernel/nl.h"
#include "trn/kernels/attention.h"
#include "trn/kernels/linear.h"
#include "trn/kernels/normalization.h"
#include "trn/kernels/rope.h"
#include "trn/kernels/softmax.h"

namespace trn::graph::detail {
namespace {

namespace nl = kernel::nl;
using kernel::Tensor;

/// Output columns of one matmul (a PSUM bank of fp32).
constexpr std::int64_t kMatmulColumns = 512;

/// Runs a library kernel that declares the current node's outputs, with those outputs
/// redirected to the model's tensors.
template <typename Fn>
Tensor callLibrary(LoweringContext& ctx, Fn fn) {
  ctx.kernel().redirectOutputs(ctx.outputRedirects());
  Tensor out = fn();
  ctx.kernel().redirectOutputs({});
  return out;
}

void bindResult(LoweringContext& ctx, const Tensor& result) {
  const Sizes sizes = ctx.outputSizes(0);
  ctx.bind(0, DeviceValue{result.reshape({std::max<std::int64_t>(elementCount(sizes), 1)}), sizes});
}

/// Batched products: each batch index (numpy broadcasting over the leading dimensions) as
/// 128 x 512 output tiles accumulated over 128-deep K tiles in PSUM.
void batchedMatmul(LoweringContext& ctx) {
  const DeviceValue& a = ctx.input(0);
  const DeviceValue& b = ctx.input(1);
  const DType dtype = ctx.outputDType(0);
  const DeviceValue out = ctx.declareOutput(0);
  const std::size_t rank = out.sizes.size();
  const std::int64_t m = out.sizes[rank - 2];
  const std::int64_t n = out.sizes[rank - 1];
  const std::int64_t k = a.sizes.back();
  // Only the batch dimensions' strides are read (the matrices' own are m, k and n below).
  const Sizes aStrides = broadcastStrides(a.sizes, out.sizes);
  const Sizes bStrides = broadcastStrides(b.sizes, out.sizes);
  const Sizes outStrides = contiguousStrides(out.sizes);
  // Under auto-cast the DMA rounds the operands to the auto-cast type on the way; PSUM
  // accumulates in fp32. The PE transposes a 1-byte type into 16 bits (hardware-trn2.md §6), so
  // an fp8 x is loaded as it is, transposed, and rounded by the copy out of PSUM.
  const DType operands = ctx.kernel().matmulDType(a.flat.dtype());
  const bool oneByte = byteSize(operands) == 1;
  std::vector<std::int64_t> index(rank - 2, 0);
  while (true) {
    std::int64_t aOffset = 0;
    std::int64_t bOffset = 0;
    std::int64_t outOffset = 0;
    for (std::size_t d = 0; d + 2 < rank; ++d) {
      aOffset += index[d] * aStrides[d];
      bOffset += index[d] * bStrides[d];
      outOffset += index[d] * outStrides[d];
    }
    for (std::int64_t m0 = 0; m0 < m; m0 += kPartitions) {
      const std::int64_t mt = std::min(kPartitions, m - m0);
      for (std::int64_t n0 = 0; n0 < n; n0 += kMatmulColumns) {
        if (!ctx.takeUnit()) {
          continue;
        }
        const std::int64_t nt = std::min(kMatmulColumns, n - n0);
        const Tensor acc = ctx.kernel().psum({mt, nt});
        for (std::int64_t k0 = 0; k0 < k; k0 += kPartitions) {
          const std::int64_t kt = std::min(kPartitions, k - k0);
          Tensor x = nl::load(stridedView(a.flat, aOffset + m0 * k + k0, k, mt, 1, kt),
                              oneByte ? a.flat.dtype() : operands);
          if (oneByte) {
            x = nl::copy(nl::transpose(x), operands);
          }
          const Tensor y =
              nl::load(stridedView(b.flat, bOffset + k0 * n + n0, n, kt, 1, nt), operands);
          nl::matmulAccumulate(acc, x, y, k0 > 0, /*transposeX=*/oneByte);
        }
        nl::store(stridedView(out.flat, outOffset + m0 * n + n0, n, mt, 1, nt),
                  nl::copy(acc, dtype));
      }
    }
    if (!nextIndex(index, out.sizes)) {
      break;
    }
  }
}

/// A 2-D right operand goes to the library's `linear`; anything else is batched.
bool againstMatrix(const Graph& graph, const Node& node) {
  const Value* a = graph.value(node.inputs.at(0));
  const Value* b = graph.value(node.inputs.at(1));
  return a != nullptr && b != nullptr && a->shape && b->shape && a->shape->rank() >= 2 &&
         b->shape->rank() == 2;
}

const char* describeMatmul(const Graph& graph, const Node& node) {
  return againstMatrix(graph, node) ? "library linear" : "batched PSUM tiles";
}

void matmul(LoweringContext& ctx) {
  const Sizes a = ctx.inputSizes(0);
  const Sizes b = ctx.inputSizes(1);
  if (a.size() < 2 || b.size() < 2) {
    ctx.unsupported("one-dimensional MatMul operands are not lowered");
  }
  if (!againstMatrix(ctx.graph(), ctx.node())) {
    batchedMatmul(ctx);
    return;
  }
  // Activations [..., M, K] against a 2-D weight: one product over all rows.
  const std::int64_t rows = elementCount(a, 0, a.size() - 1);
  const Tensor x = ctx.input(0).flat.reshape({rows, a.back()});
  const Tensor w = ctx.input(1).flat.reshape({b[0], b[1]});
  bindResult(ctx, callLibrary(ctx, [&] { return kernels::linear(ctx.kernel(), x, w); }));
}

void gemm(LoweringContext& ctx) {
  const Node& node = ctx.node();
  if (node.floatAttribute("alpha").value_or(1.0f) != 1.0f ||
      node.floatAttribute("beta").value_or(1.0f) != 1.0f) {
    ctx.unsupported("alpha and beta other than 1 are not lowered");
  }
  if (node.intAttribute("transA").value_or(0) != 0 ||
      node.intAttribute("transB").value_or(0) != 0) {
    ctx.unsupported(
        "transposed operands are lowered only for a transB weight, which the layout pass stores "
        "transposed; this operand is computed in the graph");
  }
  const Sizes a = ctx.inputSizes(0);
  const Sizes b = ctx.inputSizes(1);
  const Tensor x = ctx.input(0).flat.reshape({a[0], a[1]});
  const Tensor w = ctx.input(1).flat.reshape({b[0], b[1]});
  if (!node.hasInput(2)) {
    bindResult(ctx, callLibrary(ctx, [&] { return kernels::linear(ctx.kernel(), x, w); }));
    return;
  }
  // The bias, broadcast to [M, N] by a stride-0 view, is added as PSUM is drained.
  const Sizes c = ctx.inputSizes(2);
  const std::int64_t m = a[0];
  const std::int64_t n = b[1];
  const Tensor& cFlat = ctx.input(2).flat;
  const std::int64_t count = elementCount(c);
  Tensor r;
  if (count == m * n) {
    r = cFlat.reshape({m, n});
  } else if (count == n) {
    r = cFlat.reshape({1, n}).broadcast(0, m);
  } else if (count == 1) {
    r = cFlat.reshape({1, 1}).broadcast(0, m).broadcast(1, n);
  } else {
    ctx.unsupported(fmt::format("a bias of {} elements for a [{}, {}] product", count, m, n));
  }
  bindResult(ctx, callLibrary(ctx, [&] { return kernels::linearResidual(ctx.kernel(), x, w, r); }));
}

/// The activations a trn.Linear applies (fuse_linear.h), by the attribute's name.
const std::map<std::string, isa::ActivationFunction>& linearActivations() {
  static const std::map<std::string, isa::ActivationFunction> functions = {
      {"Relu", isa::ActivationFunction::kRelu},
      {"Sigmoid", isa::ActivationFunction::kSigmoid},
      {"Tanh", isa::ActivationFunction::kTanh},
      {"Gelu", isa::ActivationFunction::kGelu},
      {"Silu", isa::ActivationFunction::kSilu}};
  return functions;
}

/// A trn.Linear's activation attribute ("" for none).
std::string activationOf(const Node& node) {
  const Attribute* activation = node.attribute("activation");
  const std::string* name =
      activation != nullptr ? std::get_if<std::string>(&activation->value) : nullptr;
  return name != nullptr ? *name : "";
}

/// "library linear (bias and Gelu fused)", "library linear (bias fused)", ..., "library linear
/// (gate multiplied)"
const char* describeLinear(const Graph& /*graph*/, const Node& node) {
  static const std::map<std::pair<bool, std::string>, std::string> descriptions = [] {
    std::map<std::pair<bool, std::string>, std::string> all;
    all[{true, ""}] = "library linear (bias fused)";
    for (const auto& [name, function] : linearActivations()) {
      all[{true, name}] = fmt::format("library linear (bias and {} fused)", name);
      all[{false, name}] = fmt::format("library linear ({} fused)", name);
    }
    return all;
  }();
  if (node.hasInput(3)) {
    return "library linear (gate multiplied)";
  }
  auto it = descriptions.find({node.hasInput(2), activationOf(node)});
  return it == descriptions.end() ? "library linear" : it->second.c_str();
}

/// trn.Linear (fuse_linear.h): x [..., K] as [rows, K] against w [K, N], the bias [N] and the
/// activation applied as the library kernel drains PSUM.
void fusedLinear(LoweringContext& ctx) {
  const Node& node = ctx.node();
  const Sizes a = ctx.inputSizes(0);
  const Sizes b = ctx.inputSizes(1);
  kernels::LinearEpilogue epilogue;
  if (node.hasInput(2)) {
    epilogue.bias = ctx.input(2).flat.reshape({b[1]});
  }
  const std::string name = activationOf(node);
  if (!name.empty()) {
    auto function = linearActivations().find(name);
    if (function == linearActivations().end()) {
      ctx.unsupported(fmt::format("activation '{}' is not one the linear kernel applies", name));
    }
    epilogue.activation = function->second;
  }
  const std::int64_t rows = elementCount(a, 0, a.size() - 1);
  if (node.hasInput(3)) {
    epilogue.multiplier = ctx.input(3).flat.reshape({rows, b[1]});
  }
  const Tensor x = ctx.input(0).flat.reshape({rows, a.back()});
  const Tensor w = ctx.input(1).flat.reshape({b[0], b[1]});
  bindResult(
      ctx, callLibrary(ctx, [&] { return kernels::linearEpilogue(ctx.kernel(), x, w, epilogue); }));
}

/// trn.RmsNorm (fuse_rms_norm.h): x [..., D] as [rows, D] through the library's RMS norm with
/// the model's eps.
void fusedRmsNorm(LoweringContext& ctx) {
  const Sizes x = ctx.inputSizes(0);
  const std::int64_t d = x.back();
  const Tensor in = ctx.input(0).flat.reshape({elementCount(x, 0, x.size() - 1), d});
  const Tensor w = ctx.input(1).flat.reshape({d});
  const float eps = ctx.node().floatAttribute("epsilon").value_or(kernels::kRmsNormEps);
  bindResult(ctx, callLibrary(ctx, [&] { return kernels::rmsNormEps(ctx.kernel(), in, w, eps); }));
}

/// trn.Rope (fuse_rope.h): x [..., S, D] as [rows / S, S, D] through the library's rope with the
/// model's [S, D] tables.
void fusedRope(LoweringContext& ctx) {
  const Sizes x = ctx.inputSizes(0);
  const std::int64_t s = x[x.size() - 2];
  const std::int64_t d = x.back();
  const Tensor in = ctx.input(0).flat.reshape({elementCount(x, 0, x.size() - 2), s, d});
  const Tensor cos = ctx.input(1).flat.reshape({s, d});
  const Tensor sin = ctx.input(2).flat.reshape({s, d});
  bindResult(ctx,
             callLibrary(ctx, [&] { return kernels::ropeFullTables(ctx.kernel(), in, cos, sin); }));
}

/// The last axis of input 0, or an error: these lowerings work along rows of [rows, last].
std::int64_t requireLastAxis(const LoweringContext& ctx, std::int64_t axis, std::size_t rank) {
  if (axis < 0) {
    axis += static_cast<std::int64_t>(rank);
  }
  if (axis != static_cast<std::int64_t>(rank) - 1) {
    ctx.unsupported(
        fmt::format("axis {} of a rank-{} tensor: only the last axis is lowered", axis, rank));
  }
  return axis;
}

/// LayerNormalization over the last axis: x [..., D] as [rows, D] through the library's bn_stats
/// layer norm with the model's eps (and without beta when the node has none).
void layerNormalization(LoweringContext& ctx) {
  const Node& node = ctx.node();
  const Sizes x = ctx.inputSizes(0);
  requireLastAxis(ctx, node.intAttribute("axis").value_or(-1), x.size());
  for (std::size_t i = 1; i < node.outputs.size(); ++i) {
    if (!node.outputs[i].empty()) {
      ctx.unsupported("the Mean and InvStdDev outputs (training) are not lowered");
    }
  }
  const float eps = node.floatAttribute("epsilon").value_or(kernels::kLayerNormEps);
  const std::int64_t d = x.back();
  const Tensor in = ctx.input(0).flat.reshape({elementCount(x, 0, x.size() - 1), d});
  const Tensor gamma = ctx.input(1).flat.reshape({d});
  const std::optional<Tensor> beta =
      node.hasInput(2) ? std::optional(ctx.input(2).flat.reshape({d})) : std::nullopt;
  bindResult(ctx, callLibrary(ctx, [&] {
               return kernels::layerNormBnEps(ctx.kernel(), in, gamma, beta, eps);
             }));
}

void softmax(LoweringContext& ctx) {
  const Sizes x = ctx.inputSizes(0);
  const std::int64_t defaultAxis = ctx.graph().opsetVersion >= 13 ? -1 : 1;
  requireLastAxis(ctx, ctx.node().intAttribute("axis").value_or(defaultAxis), x.size());
  const Tensor in = ctx.input(0).flat.reshape({elementCount(x, 0, x.size() - 1), x.back()});
  bindResult(ctx, callLibrary(ctx, [&] { return kernels::softmax(ctx.kernel(), in); }));
}

/// to = from converted to to's dtype element for element; both contiguous flat tensors of
/// `sizes`.
void convert(LoweringContext& ctx, const Tensor& from, const Tensor& to, const Sizes& sizes) {
  const Sizes strides = contiguousStrides(sizes);
  const DType dtype = to.dtype();
  emitTileLoop(ctx, StridedOperand{to, 0, strides}, {StridedOperand{from, 0, strides}}, sizes,
               [dtype](const std::vector<Tensor>& tiles) { return nl::copy(tiles[0], dtype); });
}

/// trn.FlashAttention (fuse_attention.h): q [B, H, S, D], k and v [B, Hkv, S, D] as the flash
/// kernel's [B H, S, D] and [B Hkv, S, D] (query head b H + h reads kv head b Hkv + h / (H / Hkv),
/// the grouping of each batch's heads), the optional bias [S, S] shared by every head. Under
/// `--auto-cast matmult` the products run in bf16, as the unfused batched products did: q, k and
/// v are rounded to bf16 once (scratch), the kernel runs in bf16 and its bf16 result is widened
/// into the node's fp32 output (one more rounding, of the attention output, than unfused).
void flashAttention(LoweringContext& ctx) {
  const Node& node = ctx.node();
  const Sizes q = ctx.inputSizes(0);
  const Sizes kv = ctx.inputSizes(1);
  const DType dtype = ctx.outputDType(0);
  // The flash kernel transposes its probabilities on the PE, which writes a 1-byte type as 16
  // bits: under an fp8 auto-cast the fused attention keeps bf16 operands.
  const DType matmulType = ctx.kernel().matmulDType(dtype);
  const DType operands = byteSize(matmulType) == 1 ? DType::kBf16 : matmulType;
  const std::string name = ctx.programName(node.outputs.at(0));
  auto operand = [&](std::size_t i, const Sizes& sizes, const char* role) {
    const Tensor& flat = ctx.input(i).flat;
    Tensor converted = flat;
    if (operands != dtype) {
      converted = ctx.kernel().hbmScratch(fmt::format("{}_{}", name, role), {elementCount(sizes)},
                                          operands);
      convert(ctx, flat, converted, sizes);
    }
    return converted.reshape({sizes[0] * sizes[1], sizes[2], sizes[3]});
  };
  const Tensor query = operand(0, q, "q");
  const Tensor key = operand(1, kv, "k");
  const Tensor value = operand(2, kv, "v");
  if (operands != dtype) {
    meetBetweenStages(ctx, value);  // the cores converted their shares; each reads any head
  }
  kernels::AttentionScores scores;
  scores.scale = node.floatAttribute("scale");
  if (node.hasInput(3)) {
    scores.bias = ctx.input(3).flat.reshape({q[2], q[2]});
  }
  const bool causal = node.intAttribute("causal").value_or(0) != 0;
  auto run = [&] {
    return kernels::flashAttention(ctx.kernel(), query, key, value, {.causal = causal}, scores);
  };
  if (operands == dtype) {
    bindResult(ctx, callLibrary(ctx, run));
    return;
  }
  ctx.kernel().redirectOutputs({kernel::OutputRedirect{name + "_o", true, std::nullopt}});
  const Tensor narrow = run();
  ctx.kernel().redirectOutputs({});
  meetBetweenStages(ctx, narrow);
  const DeviceValue out = ctx.declareOutput(0);
  convert(ctx, narrow.reshape({elementCount(out.sizes)}), out.flat, out.sizes);
}

/// Columns of one LogSoftmax chunk: 8 KiB of fp32 per partition, so rows of any width (a
/// vocabulary of 50,257) fit SBUF.
constexpr std::int64_t kLogSoftmaxColumns = 2048;

/// log(softmax(x)) along the last axis, 128 rows at a time: a first sweep over column chunks
/// keeps the running maximum m and the sum s of exp(x - m), rescaled as m grows (the online
/// softmax); a second writes x - (m + log s). A row of one chunk is loaded once.
void logSoftmax(LoweringContext& ctx) {
  const Sizes x = ctx.inputSizes(0);
  const std::int64_t defaultAxis = ctx.graph().opsetVersion >= 13 ? -1 : 1;
  requireLastAxis(ctx, ctx.node().intAttribute("axis").value_or(defaultAxis), x.size());
  const std::int64_t h = x.back();
  const std::int64_t rows = elementCount(x, 0, x.size() - 1);
  const DType dtype = ctx.outputDType(0);
  const DeviceValue& in = ctx.input(0);
  const DeviceValue out = ctx.declareOutput(0);
  for (std::int64_t r0 = 0; r0 < rows; r0 += kPartitions) {
    if (!ctx.takeUnit()) {
      continue;
    }
    const std::int64_t p = std::min(kPartitions, rows - r0);
    auto chunk = [&](const kernel::Tensor& flat, std::int64_t c0) {
      return stridedView(flat, r0 * h + c0, h, p, 1, std::min(kLogSoftmaxColumns, h - c0));
    };
    std::optional<Tensor> single;
    Tensor m;
    Tensor sum;
    for (std::int64_t c0 = 0; c0 < h; c0 += kLogSoftmaxColumns) {
      const Tensor tile = nl::load(chunk(in.flat, c0));
      if (c0 == 0) {
        m = nl::max(tile, 1, true);
        sum = nl::sum(nl::exp(nl::subtract(tile, m)), 1, true);
        single = tile;
        continue;
      }
      single.reset();
      const Tensor grown = nl::maximum(m, nl::max(tile, 1, true));
      const Tensor rescaled = nl::multiply(sum, nl::exp(nl::subtract(m, grown)));
      sum = nl::add(rescaled, nl::sum(nl::exp(nl::subtract(tile, grown)), 1, true));
      m = grown;
    }
    const Tensor logZ = nl::add(m, nl::log(sum));
    for (std::int64_t c0 = 0; c0 < h; c0 += kLogSoftmaxColumns) {
      const Tensor tile = single ? *single : nl::load(chunk(in.flat, c0));
      nl::store(chunk(out.flat, c0), nl::subtract(tile, logZ, dtype));
    }
  }
}

using ReduceTiles = Tensor (*)(const Tensor&);

template <ReduceTiles kOp>
void reduceLastAxis(LoweringContext& ctx) {
  const Node& node = ctx.node();
  const Sizes x = ctx.inputSizes(0);
  const std::optional<std::vector<std::int64_t>> axes = ctx.graph().reductionAxes(node);
  if (!axes || axes->size() != 1) {
    ctx.unsupported("only a reduction over one axis, the last, is lowered");
  }
  requireLastAxis(ctx, (*axes)[0], x.size());
  const std::int64_t h = x.back();
  const std::int64_t rows = elementCount(x, 0, x.size() - 1);
  const DeviceValue& in = ctx.input(0);
  const DeviceValue out = ctx.declareOutput(0);
  for (std::int64_t r0 = 0; r0 < rows; r0 += kPartitions) {
    if (!ctx.takeUnit()) {
      continue;
    }
    const std::int64_t p = std::min(kPartitions, rows - r0);
    const Tensor tile = nl::load(stridedView(in.flat, r0 * h, h, p, 1, h));
    nl::store(stridedView(out.flat, r0, 1, p, 1, 1), kOp(tile));
  }
}

Tensor mean(const Tensor& t) { return nl::mean(t, 1, true); }
Tensor sum(const Tensor& t) { return nl::sum(t, 1, true); }
Tensor max(const Tensor& t) { return nl::max(t, 1, true); }
Tensor min(const Tensor& t) { return nl::min(t, 1, true); }

}  // namespace

void addLibraryLowerings(OpLowerings& table) {
  table["MatMul"] = {matmul, "", describeMatmul};
  table["Gemm"] = {gemm, "library linear (bias fused)"};
  table["LayerNormalization"] = {layerNormalization, "library layer norm (bn_stats)"};
  table["Softmax"] = {softmax, "library softmax"};
  table[fmt::format("{}.{}", kTrnDomain, kFlashAttentionOp)] = {flashAttention,
                                                                "library flash attention"};
  table[fmt::format("{}.{}", kTrnDomain, kLinearOp)] = {fusedLinear, "", describeLinear};
  table[fmt::format("{}.{}", kTrnDomain, kRmsNormOp)] = {fusedRmsNorm, "library rms norm"};
  table[fmt::format("{}.{}", kTrnDomain, kRopeOp)] = {fusedRope, "library rope"};
  table["LogSoftmax"] = {logSoftmax, "tile loop"};
  table["ReduceMean"] = {reduceLastAxis<mean>, "tile loop"};
  table["ReduceSum"] = {reduceLastAxis<sum>, "tile loop"};
  table["ReduceMax"] = {reduceLastAxis<max>, "tile loop"};
  table["ReduceMin"] = {reduceLastAxis<min>, "tile loop"};
}

}  // namespace trn::graph::detail
