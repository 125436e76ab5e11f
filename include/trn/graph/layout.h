// Layout choice, the pass after folding: weights are stored in the layout the device kernels
// read. A Gemm with transB (PyTorch's Linear exports its weight as [out, in]) gets its weight
// transposed once on the host into [in, out], the contraction dimension on the partitions, so no
// transposing DMA runs on the device.
#pragma once

#include "trn/base/status.h"
#include "trn/graph/graph.h"

namespace trn::graph {

/// Rewrites `graph` in place (shapes inferred, constants folded).
Status chooseLayouts(Graph& graph);

}  // namespace trn::graph
