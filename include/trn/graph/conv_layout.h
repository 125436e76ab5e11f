// Convolution weight layout, part of the layout pass: a Conv's weight W [M, C/group, kH, kW]
// (ONNX's order, output channels first) is stored once on the host as [kW, kH, C/group, M], so
// that for each kernel tap the input channels are rows (the contraction on the partitions) and
// the output channels contiguous columns: the stationary operand of the tensor engine comes from
// HBM in one plain DMA. The node gets the attribute weight_layout = "kw_kh_c_m" saying so (1-D
// convolutions have kH = 1). Weights computed in the graph, or read by anything but Convs, stay
// as they are, and lowering reports them.
#pragma once

#include "trn/base/status.h"
#include "trn/graph/graph.h"

namespace trn::graph {

/// The attribute a Conv whose weight the pass rearranged carries, and its value.
inline constexpr const char* kConvWeightLayout = "weight_layout";
inline constexpr const char* kConvWeightLayoutTaps = "kw_kh_c_m";

/// Rearranges the Conv weights of `graph` in place (shapes inferred).
Status layOutConvWeights(Graph& graph);

}  // namespace trn::graph
