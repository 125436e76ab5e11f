// Convolution weight layout, part of the layout pass: a Conv's weight W [M, C/group, kH, kW]
// (ONNX's order, output channels first) is stored once on the host in the order the tensor
// engine reads it, so that each weight tile of the lowering (lower_conv.cpp) is one DMA of long
// contiguous runs. The output channels are cut into blocks of at most 128 (the PSUM partitions;
// blocks never straddle groups) stored one after the other, block b of `os` channels starting at
// element (C/group) * taps * (its first output channel). Within a block, with taps t = kh * kW + kw
// and c the channel within the group:
//  - taps packed on the partitions (packedTaps > 1: few channels, e.g. an image network's RGB
//    stem): element ((t * C/group + c) * os + o), the rows (t, c) of the contraction in order;
//  - otherwise: element ((c * taps + t) * os + o), each input channel's row holding all its taps.
// The weight becomes flat and the node gets weight_layout = "blocked" (and kernel_shape, if it
// had none). Weights computed in the graph, read by anything but Convs, or shared by Convs of
// different group counts stay as they are, and lowering reports them.
#pragma once

#include <cstdint>

#include "trn/base/status.h"
#include "trn/graph/graph.h"

namespace trn::graph {

/// The attribute a Conv whose weight the pass rearranged carries, and its value.
inline constexpr const char* kConvWeightLayout = "weight_layout";
inline constexpr const char* kConvWeightLayoutBlocked = "blocked";
/// Output channels per weight block: the PSUM partitions.
inline constexpr std::int64_t kConvOutputBlock = 128;

/// Kernel taps one matmul contracts over together with `channelsPerGroup` input channels (on the
/// 128 partitions): at least 4 when that many fit, else 1 (taps then loop as matmuls).
std::int64_t packedTaps(std::int64_t channelsPerGroup, std::int64_t taps);

/// Rearranges the Conv weights of `graph` in place (shapes inferred).
Status layOutConvWeights(Graph& graph);

}  // namespace trn::graph
