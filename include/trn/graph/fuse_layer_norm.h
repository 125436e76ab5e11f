// Layer-norm fusion, the pass after linear fusion and before RMS-norm fusion: a LayerNorm written
// out — as PyTorch exports nn.LayerNorm below opset 17, or a model's own
// weight * (x - mean) / sqrt(var + eps) + bias — becomes one ONNX LayerNormalization node over the
// last axis, which lowering runs as one tile loop of nl.layer_norm instead of two reductions and
// a chain of element-wise loops. (Left as it was, the RMS-norm pass would take its tail as an RMS
// norm of x - mean.)
//
// Matched, for x [..., D]:
//   ReduceMean(x) over the last axis (keepdims) -> Sub(x, mean) = d;
//   Pow(d, 2) or Mul(d, d) -> ReduceMean over the last axis (keepdims) -> Add(., eps) or
//   Add(eps, .) -> Sqrt -> Div(d, .), or Div(1, .) or Reciprocal then Mul(d, .) or Mul(., d)
//   -> Mul(., w) or Mul(w, .) -> optionally Add(., b) or Add(b, .)
// where w and b have D elements, eps is a one-element fp32 constant, d is read by the square and
// the division alone, every other intermediate by the next node alone (x may have other readers),
// and x, w, b and the result are of one type, fp32 or bf16. The fused node: inputs (x, w[, b]),
// the last node's output, attributes axis -1 and epsilon. Anything else is left as it was.
#pragma once

#include "trn/base/status.h"
#include "trn/graph/graph.h"

namespace trn::graph {

/// Fuses `graph` in place (shapes inferred, constants folded); returns how many layer norms
/// became LayerNormalization nodes.
Result<int> fuseLayerNorm(Graph& graph);

}  // namespace trn::graph
