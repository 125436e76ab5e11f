// The auto-cast pass of `--auto-cast all` (neuronx-cc's option of that name): every fp32
// computation of the model runs in bf16. Weights are rounded to bf16 once on the host (nearest
// even), every fp32 value becomes bf16, Cast nodes to fp32 cast to bf16 instead, and the model
// keeps its interface: fp32 graph inputs are cast to bf16 as they enter, fp32 outputs back to
// fp32 as they leave. Engines still compute in fp32 and round each result to bf16, and products
// accumulate in fp32 PSUM, as on the hardware. (`--auto-cast matmult`, the default of neuronx-cc,
// is not a graph rewrite: the products' weights are stored in bf16 by the layout pass and the
// kernels round their activations as they load them.)
#pragma once

#include "trn/base/status.h"
#include "trn/graph/graph.h"

namespace trn::graph {

/// `t` (fp32) rounded to bf16, nearest even.
Tensor toBf16(const Tensor& t);

/// Rewrites `graph` (shapes inferred) to compute in bf16 as the header says.
Status castAllToBf16(Graph& graph);

}  // namespace trn::graph
