// Linear fusion, the pass after layout: a product against a 2-D weight, its bias and its
// activation become one node, trn.Linear, which lowering runs as the library's linear kernel with
// the bias added and the activation applied as PSUM is drained (kernels/linear.h,
// LinearEpilogue): the product never goes to HBM before them.
//
// Matched, for activations x [..., K] and a weight W [K, N], an initializer or a graph input of
// x's type (by now the layout pass has stored a Gemm's transB weight as [K, N], and under
// auto-cast a product's weight in the auto-cast type, which the fused node keeps):
//   MatMul(x, W) -> Add(., b) or Add(b, .) (optional), or Gemm(x, W[, b]) with alpha = beta = 1
//     and no transposes
//   -> Relu, Sigmoid, Tanh, exact Gelu, the erf form of GELU PyTorch exports,
//      Mul(Mul(v, Add(Erf(Div(v, sqrt 2)), 1)), 0.5), or SiLU as it exports it, Mul(v, Sigmoid(v))
//      (a SwiGLU MLP's gate) (optional)
//   or, with neither a bias nor an activation, -> Mul(., m) or Mul(m, .) with m another value of
//      the product's sizes and type (a SwiGLU MLP's gate times its up projection)
// with b of [N] elements, at least one of the bias, the activation and the multiplier there (a
// bare product is the library's linear already), every intermediate read by nothing else, and x,
// b, m and the result of one type, fp32 or bf16. The fused node: inputs (x, W[, b]) or
// (x, W, "", m), output the last matched node's, attribute activation (a string: "", "Relu",
// "Sigmoid", "Tanh", "Gelu" or "Silu"). Anything else is left as it was.
#pragma once

#include "trn/base/status.h"
#include "trn/graph/fuse_attention.h"
#include "trn/graph/graph.h"

namespace trn::graph {

/// The fused node's op type (domain kTrnDomain).
inline constexpr const char* kLinearOp = "Linear";

/// Fuses `graph` in place (shapes inferred, constants folded, layouts chosen); returns how many
/// products became trn.Linear nodes.
Result<int> fuseLinear(Graph& graph);

}  // namespace trn::graph
