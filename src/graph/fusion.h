// Internal to lowering: element-wise fusion. Chains of element-wise nodes of one shape (a norm's
// scale and shift, SiLU times the up projection, rotary embeddings' multiply-adds, a score's scale
// plus mask) are computed in one tile loop, so their intermediates never go to HBM: each tile of
// the group's inputs is loaded once, every node of the group is applied to it in SBUF, and only
// the last node's result is stored. Results are bit-identical to one loop per node (each node
// computes in its own output type either way). A node joins the group of the node that reads it
// when that node is its only reader, the shapes are equal, and its result is not an output.
#pragma once

#include <cstddef>
#include <map>
#include <vector>

#include "trn/graph/graph.h"

namespace trn::graph::detail {

struct FusionPlan {
  /// Per node: the node whose tile loop computes it (itself unless it is fused into a later one).
  std::vector<std::size_t> computedBy;
  /// Per group of more than one node, by its last node: the nodes in graph order.
  std::map<std::size_t, std::vector<std::size_t>> groups;
};

/// Whether nodes of `opType` are element-wise lowerings that can be fused (lower_elementwise.cpp).
bool isFusibleElementwise(const std::string& opType);

/// The fusion groups of `graph` (nodes in topological order).
FusionPlan planElementwiseFusion(const Graph& graph);

}  // namespace trn::graph::detail
