// Lowerings of the operators that move data without computing: shape changes are views of the
// same HBM bytes (a copy only where the result is a graph output, which needs its own tensor);
// Transpose, Concat, Split, Slice and Expand are tile loops whose operands' strides do the moving.
#include <fmt/format.h>

#include "lowering_context.h"
#include "shape_rules.h"
#include "trn/kernel/nisa.h"
#include "trn/kernel/nl.h"

namespace trn::graph::detail {
namespace {

using kernel::Tensor;

/// Reshape, Flatten, Squeeze, Unsqueeze, and Identity: the same bytes with another shape.
void view(LoweringContext& ctx) {
  const DeviceValue& in = ctx.input(0);
  if (!ctx.isGraphOutput(0)) {
    ctx.bind(0, DeviceValue{in.flat, ctx.outputSizes(0)});
    return;
  }
  const DeviceValue out = ctx.declareOutput(0);
  const Sizes strides = contiguousStrides(out.sizes);
  emitCopyLoop(ctx, StridedOperand{out.flat, 0, strides}, StridedOperand{in.flat, 0, strides},
               out.sizes);
}

void transpose(LoweringContext& ctx) {
  const Sizes inSizes = ctx.inputSizes(0);
  std::vector<std::int64_t> perm;
  if (std::optional<std::vector<std::int64_t>> attr = ctx.node().intsAttribute("perm")) {
    perm = *attr;
  } else {
    for (std::size_t d = inSizes.size(); d-- > 0;) {
      perm.push_back(static_cast<std::int64_t>(d));
    }
  }
  const Sizes inStrides = contiguousStrides(inSizes);
  Sizes strides;
  for (const std::int64_t p : perm) {
    strides.push_back(inStrides.at(static_cast<std::size_t>(p)));
  }
  const DeviceValue out = ctx.declareOutput(0);
  emitCopyLoop(ctx, StridedOperand{out.flat, 0, contiguousStrides(out.sizes)},
               StridedOperand{ctx.input(0).flat, 0, strides}, out.sizes);
}

std::size_t axisOf(const LoweringContext& ctx, std::size_t rank) {
  std::int64_t axis = ctx.node().intAttribute("axis").value_or(0);
  if (axis < 0) {
    axis += static_cast<std::int64_t>(rank);
  }
  return static_cast<std::size_t>(axis);  // shape inference checked the range
}

void concat(LoweringContext& ctx) {
  const DeviceValue out = ctx.declareOutput(0);
  const std::size_t axis = axisOf(ctx, out.sizes.size());
  const Sizes outStrides = contiguousStrides(out.sizes);
  std::int64_t at = 0;
  for (std::size_t i = 0; i < ctx.node().inputs.size(); ++i) {
    const DeviceValue& in = ctx.input(i);
    emitCopyLoop(ctx, StridedOperand{out.flat, at * outStrides[axis], outStrides},
                 StridedOperand{in.flat, 0, contiguousStrides(in.sizes)}, in.sizes);
    at += in.sizes[axis];
  }
}

void split(LoweringContext& ctx) {
  const DeviceValue& in = ctx.input(0);
  const std::size_t axis = axisOf(ctx, in.sizes.size());
  const Sizes inStrides = contiguousStrides(in.sizes);
  std::int64_t at = 0;
  for (std::size_t i = 0; i < ctx.node().outputs.size(); ++i) {
    if (ctx.node().outputs[i].empty()) {
      continue;
    }
    const DeviceValue out = ctx.declareOutput(i);
    emitCopyLoop(ctx, StridedOperand{out.flat, 0, contiguousStrides(out.sizes)},
                 StridedOperand{in.flat, at * inStrides[axis], inStrides}, out.sizes);
    at += out.sizes[axis];
  }
}

/// The integer values of input i (known at compile time), or of attribute `name` before opset 10.
std::vector<std::int64_t> sliceParameter(const LoweringContext& ctx, std::size_t i,
                                         const char* name) {
  const Node& node = ctx.node();
  if (ctx.graph().opsetVersion < 10) {
    return node.intsAttribute(name).value_or(std::vector<std::int64_t>{});
  }
  if (!node.hasInput(i)) {
    return {};
  }
  auto it = ctx.graph().knownIntegers.find(node.inputs[i]);
  if (it == ctx.graph().knownIntegers.end()) {
    ctx.unsupported(
        fmt::format("Slice's {} ('{}') are not known at compile time", name, node.inputs[i]));
  }
  return it->second;
}

/// Elements along axes sliced with negative steps (x.flip) are copied one index at a time, which
/// is cheap for the small axes flips reverse (heads, a few positions) and not for long ones.
constexpr std::int64_t kMaxReversedElements = 64;

void slice(LoweringContext& ctx) {
  const DeviceValue& in = ctx.input(0);
  const std::vector<std::int64_t> starts = sliceParameter(ctx, 1, "starts");
  const std::vector<std::int64_t> ends = sliceParameter(ctx, 2, "ends");
  std::vector<std::int64_t> axes = sliceParameter(ctx, 3, "axes");
  std::vector<std::int64_t> steps = sliceParameter(ctx, 4, "steps");
  const auto rank = static_cast<std::int64_t>(in.sizes.size());
  const Sizes contiguous = contiguousStrides(in.sizes);
  Sizes strides = contiguous;
  std::int64_t offset = 0;
  struct Reversed {
    std::size_t axis;
    std::int64_t first;
    std::int64_t step;
  };
  std::vector<Reversed> reversed;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    // Shape inference checked the lengths, ranges and steps.
    std::int64_t axis = axes.empty() ? static_cast<std::int64_t>(k) : axes[k];
    axis = axis < 0 ? axis + rank : axis;
    const std::int64_t step = steps.empty() ? 1 : steps[k];
    const auto ax = static_cast<std::size_t>(axis);
    std::int64_t first = 0;
    sliceLength(in.sizes[ax], starts[k], ends[k], step, &first);
    if (step < 0) {
      reversed.push_back({ax, first, step});
      continue;
    }
    offset += first * strides[ax];
    strides[ax] *= step;
  }
  const DeviceValue out = ctx.declareOutput(0);
  const Sizes outStrides = contiguousStrides(out.sizes);
  Sizes loop = out.sizes;
  Sizes counts;
  for (const Reversed& r : reversed) {
    counts.push_back(out.sizes[r.axis]);
    loop[r.axis] = 1;
  }
  if (!reversed.empty() && elementCount(counts) > kMaxReversedElements) {
    ctx.unsupported(
        fmt::format("negative Slice steps over {} elements are not lowered (at most {})",
                    elementCount(counts), kMaxReversedElements));
  }
  // Each index of the reversed axes: the slab of the other axes, copied from its mirrored place.
  std::vector<std::int64_t> index(counts.size(), 0);
  do {
    std::int64_t from = offset;
    std::int64_t to = 0;
    for (std::size_t r = 0; r < reversed.size(); ++r) {
      from += (reversed[r].first + index[r] * reversed[r].step) * contiguous[reversed[r].axis];
      to += index[r] * outStrides[reversed[r].axis];
    }
    emitCopyLoop(ctx, StridedOperand{out.flat, to, outStrides},
                 StridedOperand{in.flat, from, strides}, loop);
  } while (!counts.empty() && nextIndex(index, counts));
}

/// Rows of a 2-D table picked by integer indices (an embedding lookup): a tile of indices at a time
/// are loaded to SBUF and the DMA gathers their rows (an index outside the table stops the run).
/// Indices known at compile time up to this many are copied slice by slice; more take the
/// device's row lookup.
constexpr std::size_t kMaxKnownGatherIndices = 64;

/// Gather with indices known at compile time (x[:, -1] for the last token): along any axis, each
/// index one strided copy of data's slice into its place in the output.
void gatherKnown(LoweringContext& ctx, const std::vector<std::int64_t>& indices,
                 std::int64_t axis) {
  const DeviceValue& data = ctx.input(0);
  const auto ax = static_cast<std::size_t>(axis);
  const std::int64_t size = data.sizes[ax];
  const std::int64_t pre = elementCount(data.sizes, 0, ax);
  const std::int64_t post = elementCount(data.sizes, ax + 1, data.sizes.size());
  const auto count = static_cast<std::int64_t>(indices.size());
  const DeviceValue out = ctx.declareOutput(0);
  for (std::int64_t j = 0; j < count; ++j) {
    std::int64_t index = indices[static_cast<std::size_t>(j)];
    if (index < -size || index >= size) {
      ctx.fail(fmt::format("index {} is outside the {} elements of axis {}", index, size, axis));
    }
    index = index < 0 ? index + size : index;
    emitCopyLoop(ctx, StridedOperand{out.flat, j * post, {count * post, 1}},
                 StridedOperand{data.flat, index * post, {size * post, 1}}, {pre, post});
  }
}

const char* describeGather(const Graph& graph, const Node& node) {
  auto known = graph.knownIntegers.find(node.inputs.at(1));
  return known != graph.knownIntegers.end() && known->second.size() <= kMaxKnownGatherIndices
             ? "tile loop (known indices)"
             : "DMA gather of rows";
}

void gather(LoweringContext& ctx) {
  const DeviceValue& data = ctx.input(0);
  std::int64_t axis = ctx.node().intAttribute("axis").value_or(0);
  axis = axis < 0 ? axis + static_cast<std::int64_t>(data.sizes.size()) : axis;
  auto known = ctx.graph().knownIntegers.find(ctx.node().inputs.at(1));
  if (known != ctx.graph().knownIntegers.end() && known->second.size() <= kMaxKnownGatherIndices) {
    gatherKnown(ctx, known->second, axis);
    return;
  }
  const DeviceValue& indices = ctx.input(1);
  if (data.sizes.size() != 2 || axis != 0) {
    ctx.unsupported("only row lookups (axis 0 of a 2-D table, as embeddings) are lowered");
  }
  if (indices.flat.dtype() != DType::kInt32) {
    ctx.unsupported("the indices must be a graph input or an integer weight");
  }
  const std::int64_t width = data.sizes[1];
  const std::int64_t rows = indices.flat.shape(0);
  const Tensor table = data.flat.reshape({data.sizes[0], width});
  const DeviceValue out = ctx.declareOutput(0);
  for (std::int64_t r0 = 0; r0 < rows; r0 += kPartitions) {
    if (!ctx.takeUnit()) {
      continue;
    }
    const std::int64_t p = std::min(kPartitions, rows - r0);
    const Tensor index = kernel::nl::load(stridedView(indices.flat, r0, 1, p, 1, 1));
    const Tensor picked = ctx.kernel().sbuf({p, width}, data.flat.dtype());
    kernel::nisa::dmaCopy(picked, table, std::nullopt, index);
    kernel::nl::store(stridedView(out.flat, r0 * width, width, p, 1, width), picked);
  }
}

void expand(LoweringContext& ctx) {
  const DeviceValue& in = ctx.input(0);
  const DeviceValue out = ctx.declareOutput(0);
  emitCopyLoop(ctx, StridedOperand{out.flat, 0, contiguousStrides(out.sizes)},
               StridedOperand{in.flat, 0, broadcastStrides(in.sizes, out.sizes)}, out.sizes);
}

}  // namespace

void addMovementLowerings(OpLowerings& table) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"}) {
    table[op] = {view, "view"};
  }
  table["Transpose"] = {transpose, "tile loop (strided DMA)"};
  table["Concat"] = {concat, "tile loop (strided DMA)"};
  table["Split"] = {split, "tile loop (strided DMA)"};
  table["Expand"] = {expand, "tile loop (broadcast DMA)"};
  table["Slice"] = {slice, "tile loop (strided DMA)"};
  table["Gather"] = {gather, "", describeGather};
}

}  // namespace trn::graph::detail
