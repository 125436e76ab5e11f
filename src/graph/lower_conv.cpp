// The lowering of Conv (1-D and 2-D, any kernel, strides, dilations, padding and groups, with or
// without a bias) as an implicit GEMM on the tensor engine. Output channels are the PSUM
// partitions and up to 512 output positions its columns; the contraction runs over input
// channels (the partitions of both operands) and kernel taps (a loop of matmuls accumulating in
// PSUM). No im2col buffer is built: each tile's input band is loaded once into SBUF, zero-filled
// where it overlaps the padding, and every tap is a strided view of it (the strides, dilations
// and the tap's offset in the access pattern), read directly as the moving operand. The weights
// come from the layout pass as [kW, kH, C/group, M] (conv_layout.h), one DMA per channel block.
// When a group's input channels times the kernel rows fit the 128 partitions (the 3-channel stem
// of an image network), the rows are packed on the partitions too: the band is loaded kH times,
// each copy shifted by one kernel row, and only the kW column taps remain as matmuls. The bias is
// added per partition as PSUM is drained.
#include <fmt/format.h>

#include <algorithm>

#include "lower_window.h"
#include "lowering_context.h"
#include "trn/graph/conv_layout.h"
#include "trn/kernel/nisa.h"
#include "trn/kernel/nl.h"

namespace trn::graph::detail {
namespace {

namespace nl = kernel::nl;
namespace nisa = kernel::nisa;
using kernel::all;
using kernel::ds;
using kernel::Tensor;

/// Output positions per tile: one PSUM bank of fp32.
constexpr std::int64_t kTilePositions = 512;
/// SBUF bytes per partition one input band may take.
constexpr std::int64_t kBandBytes = 64 * 1024;

struct ConvShape {
  WindowGeometry g;
  std::int64_t groups = 1;
  std::int64_t channelsPerGroup = 0;  ///< input channels of a group (the contraction)
  std::int64_t outChannels = 0;       ///< M, all groups
  std::int64_t outPerGroup = 0;
  /// Kernel rows packed on the partitions with the channels (kH when they fit, else 1).
  std::int64_t packedRows = 1;
};

ConvShape convShape(const LoweringContext& ctx) {
  const Node& node = ctx.node();
  const Attribute* layout = node.attribute(kConvWeightLayout);
  if (layout == nullptr || std::get_if<std::string>(&layout->value) == nullptr ||
      std::get<std::string>(layout->value) != kConvWeightLayoutTaps) {
    ctx.unsupported(fmt::format(
        "the weight '{}' must be an initializer read only by Convs (the layout pass stores it "
        "kernel taps first); a weight computed in the graph is not lowered",
        node.inputs.at(1)));
  }
  // The weight is [kW, kH, C/group, M] (conv_layout.h).
  const Sizes w = ctx.inputSizes(1);
  const Sizes x = ctx.inputSizes(0);
  const Sizes kernel = x.size() == 4 ? Sizes{w[1], w[0]} : Sizes{w[0]};
  ConvShape s;
  s.g = windowGeometry(ctx, kernel);
  s.groups = node.intAttribute("group").value_or(1);
  s.channelsPerGroup = w[2];
  s.outChannels = w[3];
  s.outPerGroup = s.outChannels / s.groups;
  if (s.g.kernelH > 1 && s.channelsPerGroup * s.g.kernelH <= kPartitions) {
    s.packedRows = s.g.kernelH;
  }
  return s;
}

/// The weights of one block of output channels: for each block of input channels a tile
/// [rows, taps, outputs] whose rows are the contraction (channels, or kernel rows x channels
/// when packed) and whose taps are the matmuls over it.
struct WeightBlock {
  std::int64_t channel0 = 0;  ///< first input channel of the group in the block
  std::int64_t channels = 0;
  Tensor taps;
};

std::vector<WeightBlock> loadWeights(const Tensor& weight, const ConvShape& s, std::int64_t out0,
                                     std::int64_t outs) {
  const WindowGeometry& g = s.g;
  const std::int64_t m = s.outChannels;
  std::vector<WeightBlock> blocks;
  if (s.packedRows > 1) {
    // Rows (kh, c) are contiguous in [kW, kH, C/group, M]; the taps are the kW columns.
    const std::int64_t rows = g.kernelH * s.channelsPerGroup;
    Tensor t = weight.kernel().sbuf({rows, g.kernelW, outs}, weight.dtype(), "conv_w");
    nisa::dmaCopy(t, hbmView(weight, out0, m, rows, {isa::Dim{rows * m, g.kernelW}, {1, outs}}));
    blocks.push_back({0, s.channelsPerGroup, t});
    return blocks;
  }
  const std::int64_t taps = g.kernelH * g.kernelW;
  for (std::int64_t c0 = 0; c0 < s.channelsPerGroup; c0 += kPartitions) {
    const std::int64_t cs = std::min(kPartitions, s.channelsPerGroup - c0);
    Tensor t = weight.kernel().sbuf({cs, taps, outs}, weight.dtype(), "conv_w");
    nisa::dmaCopy(t, hbmView(weight, c0 * m + out0, m, cs,
                             {isa::Dim{s.channelsPerGroup * m, taps}, {1, outs}}));
    blocks.push_back({c0, cs, t});
  }
  return blocks;
}

/// The input band of one output tile for one block of input channels, on chip: zero-filled
/// where it overlaps the padding; with packed rows, block kh of the partitions holds the band
/// shifted down by kh kernel rows.
Tensor loadInput(const Tensor& x, const ConvShape& s, const WeightBlock& block,
                 std::int64_t channelOffset, const OutputTile& tile) {
  const WindowGeometry& g = s.g;
  const Band band = bandOf(g, tile, s.packedRows > 1 ? 1 : g.kernelH);
  const std::int64_t plane = g.height * g.width;
  const Tensor t =
      x.kernel().sbuf({block.channels * s.packedRows, band.rows, band.cols}, x.dtype(), "conv_in");
  bool clipped = false;
  for (std::int64_t r = 0; r < s.packedRows; ++r) {
    Band shifted = band;
    shifted.row0 += r * g.dilationH;
    clipped = clipped || bandIsClipped(g, shifted);
  }
  if (clipped) {
    nisa::memset(t, 0.0f);
  }
  for (std::int64_t r = 0; r < s.packedRows; ++r) {
    Band shifted = band;
    shifted.row0 += r * g.dilationH;
    loadBand(t(ds(r * block.channels, block.channels)), x, channelOffset + block.channel0 * plane,
             g, shifted);
  }
  return t;
}

void conv(LoweringContext& ctx) {
  const ConvShape s = convShape(ctx);
  const WindowGeometry& g = s.g;
  const DeviceValue& x = ctx.input(0);
  const Tensor& weight = ctx.input(1).flat;
  const Node& node = ctx.node();
  const DType dtype = ctx.outputDType(0);
  const DeviceValue out = ctx.declareOutput(0);
  const std::int64_t kernelRows = s.packedRows > 1 ? 1 : g.kernelH;
  const std::vector<OutputTile> tiles =
      outputTiles(ctx, g, kTilePositions, kernelRows, byteSize(x.flat.dtype()), kBandBytes);
  const std::int64_t inPlane = g.height * g.width;
  const std::int64_t outPlane = g.outH * g.outW;
  for (std::int64_t group = 0; group < s.groups; ++group) {
    for (std::int64_t o0 = 0; o0 < s.outPerGroup; o0 += kPartitions) {
      const std::int64_t os = std::min(kPartitions, s.outPerGroup - o0);
      const std::int64_t out0 = group * s.outPerGroup + o0;
      const std::vector<WeightBlock> blocks = loadWeights(weight, s, out0, os);
      std::optional<Tensor> bias;
      if (node.hasInput(2)) {
        bias = nl::load(hbmView(ctx.input(2).flat, out0, 1, os, {isa::Dim{1, 1}}));
      }
      for (std::int64_t n = 0; n < g.batch; ++n) {
        const std::int64_t inputOffset = (n * g.channels + group * s.channelsPerGroup) * inPlane;
        for (const OutputTile& tile : tiles) {
          const Tensor acc = ctx.kernel().psum({os, tile.rows, tile.cols}, DType::kFp32, "conv");
          bool first = true;
          for (const WeightBlock& block : blocks) {
            const Tensor in = loadInput(x.flat, s, block, inputOffset, tile);
            const Band band = bandOf(g, tile, kernelRows);
            const std::int64_t taps = block.taps.shape(1);
            for (std::int64_t t = 0; t < taps; ++t) {
              // Taps are kW-major in the weight layout: t = kw * kH + kh (kw alone when packed).
              const std::int64_t kh = s.packedRows > 1 ? 0 : t % g.kernelH;
              const std::int64_t kw = s.packedRows > 1 ? t : t / g.kernelH;
              nl::matmulAccumulate(acc, block.taps(all, t), tapView(in, g, band, tile, kh, kw),
                                   !first, true);
              first = false;
            }
          }
          const Tensor result = bias ? nl::add(acc, *bias, dtype) : nl::copy(acc, dtype);
          nl::store(hbmView(out.flat,
                            (n * s.outChannels + out0) * outPlane + tile.row0 * g.outW + tile.col0,
                            outPlane, os, {isa::Dim{g.outW, tile.rows}, {1, tile.cols}}),
                    result);
        }
      }
    }
  }
}

}  // namespace

void addConvLowerings(OpLowerings& table) { table["Conv"] = {conv, "implicit GEMM (PSUM taps)"}; }

}  // namespace trn::graph::detail
