// Partitioning a model into the kernels it is compiled to: a layer of a transformer is one
// kernel, and layers that are the same computation on different weights share one compiled
// kernel, as the Neuron compiler's modular flow compiles a repeated layer once. A part is a run
// of consecutive nodes (graph order) of one layer, found from the node names exporters write
// ("/layers.3/mlp/down/MatMul"); the nodes between layers (embeddings, the final norm and head,
// shared shape arithmetic) form parts of their own. Two parts are the same kernel when their
// subgraphs are equal but for value and node names: the same operators, attributes, shapes and
// types, wired the same way, reading the same one-element constants and compile-time integers;
// other weights may differ in data, which the kernel reads from HBM.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "trn/base/status.h"
#include "trn/graph/graph.h"

namespace trn::graph {

/// The layer a node's name places it in: exporters name nodes by module path
/// ("/layers.3/mlp/down/MatMul", "/model/h.0/attn/Softmax", "/0/ln1/LayerNormalization"), and a
/// layer is the first path component that is an indexed module ("layers.3", "h.0", or "0" for
/// an nn.Sequential's child), else the first component ("norm"); names without a path are in
/// "(graph)".
std::string layerOf(const std::string& nodeName);

/// The indexed module ("layers.3") a node's name places it in, or nullopt when it is in none.
std::optional<std::string> indexedLayerOf(const std::string& nodeName);

/// How a model is split into kernels.
enum class Partition {
  kAuto,      ///< one kernel per layer when two or more layers are the same kernel, else one
  kOne,       ///< the whole model as one kernel
  kPerLayer,  ///< one kernel per layer
};

/// "auto", "one" or "per-layer", or an error naming the accepted spellings.
Result<Partition> parsePartition(const std::string& text);

/// Nodes [first, first + count) of a graph.
struct NodeRange {
  std::size_t first = 0;
  std::size_t count = 0;
};

/// The parts of `graph` one per layer, in graph order, covering every node once (how
/// Partition::kAuto and kPerLayer split a model; compileGraph decides between them and one part).
std::vector<NodeRange> layerRanges(const Graph& graph);

/// The nodes `range` of `graph` as a graph of their own: its inputs are the values the nodes read
/// as data that no node of the range produces and that are not initializers (graph inputs and
/// earlier parts' results, in order of first reading; not shape arguments, which are known at
/// compile time), its initializers those the nodes read, its outputs
/// the values of the range that a later node or the graph's outputs read (in order of
/// production), with their shapes, types and compile-time integers.
Graph extractPart(const Graph& graph, NodeRange range);

/// A key equal for two parts exactly when they compile to the same kernel (the header comment):
/// `part` as extractPart returns it, with every name replaced by its position.
std::string partKey(const Graph& part);

}  // namespace trn::graph
