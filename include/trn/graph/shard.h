// Tensor-parallel sharding (issue 19), the pass after auto-cast (`--tp N`): every value of the
// graph gets a layout over N ranks (rank_layout.h) by Megatron's rules, propagated in graph order.
// A product against a 2-D weight whose input is replicated splits the weight's columns
// (column-parallel: the result split along its last axis); one whose input is split along its
// contraction axis splits the weight's rows (row-parallel: the result a partial sum, made whole by
// a trn.AllReduce inserted after it; a Gemm's bias held by rank 0 only); a fused trn.Linear the
// same, row-parallel only without an activation or a multiplier. Element-wise operators keep a
// common split (broadcast operands replicated); Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
// Expand and Slice, Concat, Split, Gather, softmaxes, layer norms and reductions along other
// axes, and the fused trn.RmsNorm and trn.Rope over the axes before their rows, carry a split
// (the heads of attention: Q, K, V split by heads, so the attention runs on each rank's heads);
// anything else reads its split inputs gathered (a trn.AllGather inserted
// before it), and so do the graph outputs. Weights and graph inputs take the layout their first
// use asks for: the host gives each rank its share. Shapes stay global; rankGraph makes the graph
// a rank runs.
#pragma once

#include "trn/base/status.h"
#include "trn/graph/graph.h"

namespace trn::graph {

/// The collective nodes' op types (domain kTrnDomain). AllReduce sums its input over the ranks;
/// AllGather {axis, outer, ranks} makes a split value whole.
inline constexpr const char* kAllReduceOp = "AllReduce";
inline constexpr const char* kAllGatherOp = "AllGather";

/// Shards `graph` (shapes inferred, constants folded) over `ranks` ranks in place: sets
/// graph.ranks and graph.layouts and inserts the collectives. A head count or dimension a split
/// needs that does not divide by `ranks` is an error naming the node. One rank leaves the graph
/// as it was.
Status shardGraph(Graph& graph, int ranks);

/// Rank `rank`'s share of the weight `whole` laid out as `layout` over `ranks` ranks.
Tensor rankTensor(const Tensor& whole, const RankLayout& layout, int rank, int ranks);

/// The graph rank `rank` of a sharded graph runs: every split value at its rank's sizes, every
/// weight laid out over the ranks replaced by the rank's share. Every rank's graph has the same
/// shapes and nodes, so they lower to the same kernel.
Graph rankGraph(const Graph& sharded, int rank);

}  // namespace trn::graph
