// The graph IR as text (what `trnsim graph show` and --dump-after print): a header with the
// source, opset, parameter count and bytes; the inputs, initializers and outputs with their
// types and shapes; one line per node, `%out: type[shape] = OpType(%in, ...) {attributes}`
// followed by the node's name. A sharded graph (shard.h) shows each value's layout over the ranks
// after its type.
#pragma once

#include <string>

#include "trn/graph/graph.h"

namespace trn::graph {

std::string formatGraph(const Graph& graph);

}  // namespace trn::graph
