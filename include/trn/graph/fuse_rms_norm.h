// RMS-norm fusion, the pass after linear fusion: Llama's RMSNorm written out, as PyTorch exports
// x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w, becomes one node, trn.RmsNorm,
// which lowering runs as the library's RMS norm kernel (kernels/normalization.h): one pass over
// x in SBUF instead of a reduction and a chain of element-wise loops.
//
// Matched, for x [..., D]:
//   Pow(x, 2) or Mul(x, x) -> ReduceMean over the last axis (keepdims) -> Add(., eps) or
//   Add(eps, .) -> Sqrt -> Div(1, .) or Reciprocal -> Mul(x, .) or Mul(., x); or Sqrt ->
//   Div(x, .)
//   -> Mul(., w) or Mul(w, .) with w of [D] elements (a weight or a graph input)
// where eps is a one-element fp32 constant, every intermediate has no other reader (x may have
// others), and x, w and the result are of one type, fp32 or bf16. The fused node: inputs (x, w),
// output the last Mul's, attribute epsilon (float). Anything else is left as it was.
#pragma once

#include "trn/base/status.h"
#include "trn/graph/fuse_attention.h"
#include "trn/graph/graph.h"

namespace trn::graph {

/// The fused node's op type (domain kTrnDomain).
inline constexpr const char* kRmsNormOp = "RmsNorm";

/// Fuses `graph` in place (shapes inferred, constants folded); returns how many RMS norms became
/// trn.RmsNorm nodes.
Result<int> fuseRmsNorm(Graph& graph);

}  // namespace trn::graph
