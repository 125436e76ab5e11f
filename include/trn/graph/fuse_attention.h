// Attention fusion, the pass after batch-norm folding: the scaled dot-product attention subgraph
// as PyTorch exports it becomes one node, trn.FlashAttention, which lowering runs as the
// library's flash-attention kernel (kernels/attention.h), so the [B, H, S, S] scores and
// probabilities never reach HBM.
//
// Matched, for Q [B, H, S, D] and D <= 128, S <= 8192:
//   MatMul(Q, Transpose(K')) -> Div or Mul by a one-element constant (optional)
//     -> Add(., M) with an additive mask M of [S, S] elements (a graph input or a weight), or
//        Where(C, ., fill) with C a constant causal (lower-triangular) boolean mask and fill a
//        constant <= -1e30 (masked_fill with the dtype's minimum), or neither
//     -> Softmax over the last axis -> MatMul(., V')
// where every intermediate has no other reader. K' and V' are [B, H, S, D]; a transpose that
// produced K' from another layout (PyTorch merges the head transpose into k^T) is re-expressed as
// one Transpose to [B, H, S, D], and the grouped-query head expansion Reshape(Expand(Unsqueeze(X,
// axes=[2]))) of K' and V' is folded away, the node reading X [B, Hkv, S, D] directly. The
// fused node: inputs (q, k, v[, bias]), output the second MatMul's, attributes scale (float) and
// causal (int). Anything else is left as it was.
#pragma once

#include "trn/base/status.h"
#include "trn/graph/graph.h"

namespace trn::graph {

/// The fused node's domain and op type.
inline constexpr const char* kTrnDomain = "trn";
inline constexpr const char* kFlashAttentionOp = "FlashAttention";

/// Fuses `graph` in place (shapes inferred, constants folded); returns how many attention
/// subgraphs became trn.FlashAttention nodes.
Result<int> fuseAttention(Graph& graph);

}  // namespace trn::graph
