// Batch-normalisation folding, the pass after constant folding: an inference-mode
// BatchNormalization whose input is a Conv's output read by nothing else becomes part of the
// Conv. With s = scale / sqrt(var + epsilon) per output channel, the Conv's weight becomes
// W * s and its bias (B - mean) * s + beta (B = 0 when the Conv has none), computed in float64
// on the host and rounded once to fp32; the BatchNormalization node goes. A BatchNormalization
// after anything else, or with parameters computed in the graph, stays and is lowered by itself.
#pragma once

#include "trn/base/status.h"
#include "trn/graph/graph.h"

namespace trn::graph {

/// Folds `graph` in place (shapes inferred); returns how many BatchNormalizations were folded.
Result<int> foldBatchNorms(Graph& graph);

}  // namespace trn::graph
