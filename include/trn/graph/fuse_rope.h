// Rotary-embedding fusion, the pass after RMS-norm fusion: x * cos + rotate_half(x) * sin as
// PyTorch exports Hugging Face's rotate_half (two Slices of the last axis, a Neg, a Concat)
// becomes one node, trn.Rope, which lowering runs as the library's rope kernel with the model's
// [S, D] tables (kernels/rope.h, ropeFullTables): x is read once instead of by four loops.
//
// Matched, for x [..., S, D] with D even and at most 512:
//   Concat(Neg(Slice(x, D/2 : end)), Slice(x, 0 : D/2), axis = last)  (rotate_half(x))
//   -> Mul(., sin) or Mul(sin, .) -> Add with Mul(x, cos) or Mul(cos, x), either side
// where the Slices are of the last axis with step 1, cos and sin are of [S, D] elements (leading
// dimensions of 1: one table for every head), every intermediate has no other reader (x may
// have others), and x, cos, sin and the result are of one type, fp32 or bf16. The fused node:
// inputs (x, cos, sin), output the Add's. Anything else is left as it was.
#pragma once

#include "trn/base/status.h"
#include "trn/graph/fuse_attention.h"
#include "trn/graph/graph.h"

namespace trn::graph {

/// The fused node's op type (domain kTrnDomain).
inline constexpr const char* kRopeOp = "Rope";

/// Fuses `graph` in place (shapes inferred, constants folded); returns how many rotary
/// embeddings became trn.Rope nodes.
Result<int> fuseRope(Graph& graph);

}  // namespace trn::graph
