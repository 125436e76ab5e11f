// Lowering: a folded graph becomes one tile kernel, the model kernel, whose body emits each node's
// device code in graph order. Matrix products, layer norms and softmaxes call the kernel
// library's kernels (their outputs redirected to the model's HBM intermediates); element-wise
// operators and data movement (transposes, concatenation, slices, broadcasts) are generated as
// tile loops over 128-row tiles. The backend then schedules the whole model at once, so the
// engines overlap across nodes, and every instruction carries its node as its source location:
// "line" n of the model file is the n-th node of the lowered graph (LoweredModel::nodeNames).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "trn/base/status.h"
#include "trn/graph/graph.h"
#include "trn/kernel/compiler.h"

namespace trn::graph {

/// A tensor of the model kernel: a graph input, a weight or a graph output, with its program
/// tensor (name, shape, dtype). Program tensor names are the graph's value names with characters
/// programs do not allow ('/', ':', ...) replaced by '_' (and a suffix where that collides).
struct ModelTensor {
  std::string value;
  kernel::TensorSpec spec;
};

struct LoweredModel {
  std::shared_ptr<const Graph> graph;
  kernel::KernelDef kernel;
  /// The kernel's inputs in order: the graph inputs (graph->inputs), then the weights the
  /// device reads.
  std::vector<ModelTensor> inputs;
  /// The graph outputs in order.
  std::vector<ModelTensor> outputs;
  /// The node traced at each source line of the model kernel (line firstNode + n: nodeNames[n -
  /// 1]), and how each was lowered ("library linear", "tile loop", "view").
  std::vector<std::string> nodeNames;
  std::vector<std::string> nodeLowerings;
  /// The index in the model of the graph's first node, when the graph is a part cut from a model
  /// (partition.h): lines count the model's nodes.
  std::size_t firstNode = 0;
};

/// Lowers a graph whose shapes are inferred and whose constants are folded; `firstNode` is the
/// index of its first node in the model it was cut from (0 for a whole model). Operators without
/// a lowering and values with no device type (int64, bool, fp64) are errors naming the node.
Result<LoweredModel> lowerGraph(Graph graph, std::size_t firstNode = 0);

}  // namespace trn::graph
