// Internal to lowering: the state one model kernel is traced with (each graph value's HBM tensor,
// the node being lowered, the weights known at compile time), the strided operands the tile
// loops read and write, and the per-operator lowering tables of the lower_*.cpp files.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fusion.h"
#include "trn/graph/graph.h"
#include "trn/kernel/kernel.h"
#include "trn/kernel/tensor.h"

namespace trn::graph::detail {

using Sizes = std::vector<std::int64_t>;

/// A graph value on the device: a contiguous HBM tensor viewed flat ([elements]) and its shape.
/// Views of any rank are made from the flat tensor as an operation needs them, so graph ranks
/// above the hardware's five access-pattern dimensions are no obstacle.
struct DeviceValue {
  kernel::Tensor flat;
  Sizes sizes;
};

/// An operand of a tile loop: elements of `flat` at `offset` plus the sum of index × stride over
/// the loop's dimensions (strides in elements; 0 broadcasts).
struct StridedOperand {
  kernel::Tensor flat;
  std::int64_t offset = 0;
  Sizes strides;
};

/// Partitions of an on-chip tile: rows per tile of every generated loop.
inline constexpr std::int64_t kPartitions = 128;

/// Row-major strides of a contiguous tensor of `sizes`.
Sizes contiguousStrides(const Sizes& sizes);

/// Strides that read a contiguous tensor of `sizes` as if broadcast to `out` (numpy rules:
/// shapes aligned at the right, size-1 dimensions repeated with stride 0).
Sizes broadcastStrides(const Sizes& sizes, const Sizes& out);

/// Elements in dimensions [begin, end) of `sizes` (shape inference checked that counts fit).
std::int64_t elementCount(const Sizes& sizes, std::size_t begin, std::size_t end);
inline std::int64_t elementCount(const Sizes& sizes) {
  return elementCount(sizes, 0, sizes.size());
}

/// Steps `index` to the next position of `sizes` in row-major order; false after the last.
bool nextIndex(std::vector<std::int64_t>& index, const Sizes& sizes);

class LoweringContext {
 public:
  LoweringContext(kernel::Kernel& k, const Graph& graph) : k_(k), graph_(graph) {}

  [[nodiscard]] kernel::Kernel& kernel() const { return k_; }
  [[nodiscard]] const Graph& graph() const { return graph_; }
  [[nodiscard]] const Node& node() const { return *node_; }
  /// Makes `node`, the `index`-th of the graph, the one being lowered.
  void setNode(const Node& node, std::int64_t index) {
    node_ = &node;
    nodeIndex_ = index;
    unit_ = index;  // each node deals its first unit to the next core, so one-tile nodes spread
  }
  [[nodiscard]] std::int64_t nodeIndex() const { return nodeIndex_; }
  /// Whether this core computes the next unit of the current node's work (an output tile, one
  /// product of a batch). A kernel launched over the cores of a logical core is traced once per
  /// core, each tracing the same units in the same order: they are dealt to the cores in turn,
  /// so that each core computes its share and the cores' shares make the whole. Every generated
  /// loop asks before it emits a unit; on one core every unit is taken.
  [[nodiscard]] bool takeUnit();
  /// The element-wise fusion groups of the graph (fusion.h).
  void setFusion(const FusionPlan* fusion) { fusion_ = fusion; }
  /// The nodes the current node's tile loop computes, in graph order, the current node last:
  /// its fusion group, or the node alone.
  [[nodiscard]] std::vector<std::size_t> fusedGroup() const;
  /// The index of the last node that reads each value (graph outputs: never released).
  void setLastUses(std::map<std::string, std::int64_t> lastUses) {
    lastUses_ = std::move(lastUses);
  }
  /// Returns the scratch buffers no later node reads to the pool later nodes' values of the
  /// same shape and dtype take theirs from (liveness-based reuse of HBM, as the Neuron compiler
  /// does: a model's intermediates would not fit HBM otherwise). The backend orders a reuse
  /// after the reads of the value that held the buffer before.
  void releaseDeadScratch();

  /// Stops tracing with an error naming the node, its op type and its inputs.
  [[noreturn]] void fail(const std::string& message) const;
  [[noreturn]] void unsupported(const std::string& message) const;

  /// The device value of input i of the current node (a graph input, a weight or an earlier
  /// node's result).
  [[nodiscard]] const DeviceValue& input(std::size_t i) const;
  [[nodiscard]] Sizes inputSizes(std::size_t i) const;
  /// The graph's static shape and device dtype of output i.
  [[nodiscard]] Sizes outputSizes(std::size_t i) const;
  [[nodiscard]] DType outputDType(std::size_t i) const;
  /// The weight input i holds when it is a one-element floating-point initializer (a scalar
  /// the device code takes as an immediate), else nullopt.
  [[nodiscard]] std::optional<float> scalarConstant(std::size_t i) const;

  /// True when output i of the current node is a graph output (it then needs its own tensor).
  [[nodiscard]] bool isGraphOutput(std::size_t i) const;
  /// Declares output i of the current node as a new HBM tensor: the kernel output of that name
  /// when it is a graph output, else scratch.
  DeviceValue declareOutput(std::size_t i);
  /// The redirections for a library kernel that declares the current node's outputs
  /// (kernel::Kernel::redirectOutputs), offering each a pooled buffer of its shape.
  [[nodiscard]] std::vector<kernel::OutputRedirect> outputRedirects();
  /// Makes `value` output i of the current node (a view, or a library kernel's result).
  void bind(std::size_t i, DeviceValue value);
  void bindValue(const std::string& name, DeviceValue value) { values_[name] = std::move(value); }
  /// The device value of graph value `name`, or nullptr.
  [[nodiscard]] const DeviceValue* find(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }

  /// The program tensor name of graph value `name` (ONNX names may hold characters program
  /// tensor names may not).
  [[nodiscard]] std::string programName(const std::string& name) const;
  void setProgramNames(std::map<std::string, std::string> names) {
    programNames_ = std::move(names);
  }

 private:
  /// Scratch of `sizes` viewed as rows of their last dimension: a recycled buffer when the pool
  /// has one, else a new one named `name`.
  kernel::Tensor acquireScratch(const std::string& name, const Sizes& sizes, DType dtype);
  /// Records that value `name` lives in `flat`'s buffer until its last use.
  void track(const std::string& name, const kernel::Tensor& flat);

  using PoolKey = std::pair<DType, Sizes>;
  static PoolKey poolKey(const Sizes& sizes, DType dtype);

  kernel::Kernel& k_;
  const Graph& graph_;
  const Node* node_ = nullptr;
  std::int64_t nodeIndex_ = 0;
  std::int64_t unit_ = 0;  ///< units of work dealt so far, counted from the node's index
  const FusionPlan* fusion_ = nullptr;
  std::map<std::string, DeviceValue> values_;
  std::map<std::string, std::string> programNames_;
  std::map<std::string, std::int64_t> lastUses_;
  /// Scratch buffers (by buffer index) the lowering may recycle: the whole 2-D tensor and the
  /// index of the last node that reads a value living in it.
  struct Recyclable {
    kernel::Tensor whole;
    std::int64_t lastUse = -1;
  };
  std::map<std::int32_t, Recyclable> recyclable_;
  std::map<PoolKey, std::vector<kernel::Tensor>> pool_;
  /// Output i of the current node -> the pooled buffer offered to a library kernel for it.
  std::map<std::size_t, kernel::Tensor> offered_;
};

/// A 2-D HBM view [rows, cols] of `flat` with the given row and column strides (elements; 0
/// broadcasts) starting `offset` elements in.
kernel::Tensor stridedView(const kernel::Tensor& flat, std::int64_t offset, std::int64_t rowStride,
                           std::int64_t rows, std::int64_t colStride, std::int64_t cols);
/// The same with the free dimensions given as (stride, count) pairs, outermost first.
kernel::Tensor stridedView(const kernel::Tensor& flat, std::int64_t offset, std::int64_t rowStride,
                           std::int64_t rows, std::vector<isa::Dim> free);

/// After a node that computed its result on a launch over several cores (each its share of the
/// units, LoweringContext::takeUnit): a barrier with the other cores of the logical core, so that
/// every later node, on any core, reads the whole result, and a buffer the node read is reused
/// only after every core has read it. Views of an input compute nothing and need none.
void meetOtherCores(LoweringContext& ctx);

/// Within a node of several stages whose units the cores share (a conversion, then a library
/// kernel reading it): on a launch over several cores, a barrier after a stage whose result
/// (`written`, an HBM tensor) a later stage reads on another core; nothing on one core.
void meetBetweenStages(LoweringContext& ctx, const kernel::Tensor& written);

/// Computes one on-chip result tile from the loaded tiles of the inputs, in input order.
using TileFn = std::function<kernel::Tensor(const std::vector<kernel::Tensor>& tiles)>;

/// The tile loop every element-wise and data-movement operator lowers to: over the index space
/// `sizes`, loads each input's elements (as its strides say), applies `fn` tile by tile and
/// stores the result through `out`'s strides. Dimensions are coalesced first, so that a
/// broadcast bias over [batch, tokens, hidden] runs as [batch × tokens, hidden] tiles of 128
/// rows.
void emitTileLoop(LoweringContext& ctx, const StridedOperand& out,
                  const std::vector<StridedOperand>& inputs, const Sizes& sizes, const TileFn& fn);

/// emitTileLoop for a copy of `in` through `out`'s strides (Transpose, Concat, Split, Slice): where
/// the coalesced columns are short (at most half a tile's width), tiles are three-dimensional —
/// the larger of the next two dimensions as partitions, a block of the other and the columns as
/// free dimensions — so that a transpose of [H, S, D] to [S, H, D] or back moves 128 rows of
/// several heads per DMA instead of H rows (or 128 rows) of one D-element run.
void emitCopyLoop(LoweringContext& ctx, const StridedOperand& out, const StridedOperand& in,
                  const Sizes& sizes);

/// How one operator type lowers: the emitter and a few words for reports ("library linear"),
/// or, for operators lowered more than one way, a function that names the way a node takes.
struct OpLowering {
  void (*emit)(LoweringContext&) = nullptr;
  const char* how = "";
  const char* (*describe)(const Graph&, const Node&) = nullptr;
};
/// By op type; operators of another domain than ONNX's default as "domain.OpType" (the graph
/// compiler's own fused nodes, "trn.FlashAttention").
using OpLowerings = std::map<std::string, OpLowering>;

/// The key of `node`'s lowering in OpLowerings.
std::string loweringKey(const Node& node);

void addElementwiseLowerings(OpLowerings& table);  // lower_elementwise.cpp
void addMovementLowerings(OpLowerings& table);     // lower_movement.cpp
void addLibraryLowerings(OpLowerings& table);      // lower_library.cpp
void addConvLowerings(OpLowerings& table);         // lower_conv.cpp
void addPoolLowerings(OpLowerings& table);         // lower_pool.cpp
void addBatchNormLowerings(OpLowerings& table);    // lower_batchnorm.cpp
void addCollectiveLowerings(OpLowerings& table);   // lower_collective.cpp

}  // namespace trn::graph::detail
