// Constant folding, the pass after shape inference: what shape inference resolved at compile time
// leaves the graph. Constant nodes become initializers; Identity and inference-mode Dropout are
// removed (their consumers read the input); and every node whose results are used only as shape
// arguments that inference has already resolved (the Shape → Gather → Unsqueeze → Concat chains
// PyTorch builds for Reshape targets, Split sizes, Unsqueeze axes, ...) is removed with the
// initializers only it used. What remains is the computation the device runs.
#pragma once

#include <cstddef>

#include "trn/base/status.h"
#include "trn/graph/graph.h"

namespace trn::graph {

/// True when input `input` of a node of `opType` is a shape argument: read at compile time for
/// the output's shape or the operator's parameters (Reshape's shape, Slice's starts, a
/// reduction's axes, ...), never by the device.
bool isShapeArgument(const std::string& opType, std::size_t input);

/// Folds `graph` in place (shapes must have been inferred).
Status foldConstants(Graph& graph);

}  // namespace trn::graph
