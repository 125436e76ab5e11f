// The auto-cast pass of `--auto-cast all` (neuronx-cc's option of that name): every fp32
// computation of the model runs in bf16 (neuronx-cc's other `--auto-cast-type`s are taken by
// `--auto-cast matmult` only). Weights are rounded to it once on the host (nearest even), every
// fp32 value takes it, Cast nodes to fp32 cast to it instead, and the model keeps its interface:
// fp32 graph inputs are cast as they enter, fp32 outputs back to fp32 as they leave. Engines still
// compute in fp32 and round each result, and products accumulate in fp32 PSUM, as on the
// hardware. (`--auto-cast matmult`, the default of neuronx-cc, is not a graph rewrite: the
// products' weights are stored in the auto-cast type by the layout pass and the kernels round
// their activations as they load them.)
#pragma once

#include "trn/base/status.h"
#include "trn/graph/graph.h"

namespace trn::graph {

/// `t` (fp32) rounded to `type` (a floating-point type), nearest even.
Tensor roundedTo(const Tensor& t, ElementType type);

/// Rewrites `graph` (shapes inferred) to compute in `type` as the header says: bf16 (an error
/// names any other type and why).
Status castAll(Graph& graph, ElementType type);

}  // namespace trn::graph
