// Layout choice, the pass after folding: weights are stored in the layout the device kernels
// read. A Gemm with transB (PyTorch's Linear exports its weight as [out, in]) gets its weight
// transposed once on the host into [in, out], the contraction dimension on the partitions, so no
// transposing DMA runs on the device. Under auto-cast (LayoutOptions::productWeights) the fp32
// weights of matrix products are stored in the auto-cast type (bf16, fp16 or fp8_e4m3), rounded
// once to nearest even on the host, as the products read them so anyway: a half or a quarter of
// the bytes to load.
#pragma once

#include <optional>

#include "trn/base/status.h"
#include "trn/graph/graph.h"

namespace trn::graph {

struct LayoutOptions {
  /// Store the fp32 weights that only matrix products read (MatMul's and Gemm's B) in this type.
  std::optional<ElementType> productWeights;
};

/// Rewrites `graph` in place (shapes inferred, constants folded).
Status chooseLayouts(Graph& graph, const LayoutOptions& options = {});

}  // namespace trn::graph
