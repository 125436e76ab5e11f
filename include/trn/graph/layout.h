// Layout choice, the pass after folding: weights are stored in the layout the device kernels
// read. A Gemm with transB (PyTorch's Linear exports its weight as [out, in]) gets its weight
// transposed once on the host into [in, out], the contraction dimension on the partitions, so no
// transposing DMA runs on the device. Under auto-cast (LayoutOptions::bf16Weights) the fp32
// weights of matrix products are stored in bf16, rounded once to nearest even on the host, as
// the products read them in bf16 anyway: half the bytes to load.
#pragma once

#include "trn/base/status.h"
#include "trn/graph/graph.h"

namespace trn::graph {

struct LayoutOptions {
  /// Store the fp32 weights that only matrix products read (MatMul's and Gemm's B) in bf16.
  bool bf16Weights = false;
};

/// Rewrites `graph` in place (shapes inferred, constants folded).
Status chooseLayouts(Graph& graph, const LayoutOptions& options = {});

}  // namespace trn::graph
