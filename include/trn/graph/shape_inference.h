// Shape inference: gives every value of a graph its element type and static shape, node by node
// in topological order, with ONNX's semantics (multidirectional broadcasting, negative axes,
// the shape inputs of Reshape, Expand, Slice, ...). Constant integer tensors (initializers,
// Constant nodes, Shape outputs and small arithmetic on them) are tracked so that shapes computed
// inside the graph resolve. Unsupported operators and shapes it cannot resolve are errors naming
// the node, its op type and its inputs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trn/base/status.h"
#include "trn/graph/graph.h"

namespace trn::graph {

struct ShapeOptions {
  /// Sizes for symbolic input dimensions, e.g. {"batch", 8}.
  std::map<std::string, std::int64_t> symbols;
};

/// Infers and checks every value's type and shape in place.
Status inferShapes(Graph& graph, const ShapeOptions& options = {});

/// The operator types shape inference supports, sorted.
std::vector<std::string> supportedShapeOps();

}  // namespace trn::graph
