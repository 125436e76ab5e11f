// The lowering of Conv (1-D and 2-D, any kernel, strides, dilations, padding and groups, with or
// without a bias) as an implicit GEMM on the tensor engine. Output channels are the PSUM
// partitions and up to 512 output positions its columns; the contraction runs over input
// channels (the partitions of both operands) and kernel taps (a loop of matmuls accumulating in
// PSUM). No im2col buffer is built: each tile's input band is loaded once into SBUF, zero-filled
// where it overlaps the padding, and every tap is a strided view of it (the strides, dilations
// and the tap's offset in the access pattern), read directly as the moving operand. When a
// group has few input channels (an image network's RGB stem, depthwise convolutions), the taps
// are packed on the partitions too (conv_layout.h: packedTaps): the band is loaded once per tap,
// shifted by the tap's offset, so one matmul contracts over channels x taps (the stem's 3 x 49
// products in 2 matmuls instead of 49). The weights come from the layout pass in blocks of 128
// output channels (conv_layout.h), one DMA of contiguous rows per weight tile; the bias is added
// per partition as PSUM is drained.
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
/// PSUM tiles one input band serves (of the 8 banks: two bands can be in flight).
constexpr std::int64_t kBanksPerBand = 4;
/// SBUF bytes per partition one input band may take.
constexpr std::int64_t kBandBytes = 64 * 1024;

struct ConvShape {
  WindowGeometry g;
  std::int64_t groups = 1;
  std::int64_t channelsPerGroup = 0;  ///< input channels of a group (the contraction)
  std::int64_t outChannels = 0;       ///< M, all groups
  std::int64_t outPerGroup = 0;
  std::int64_t taps = 1;    ///< kH x kW
  std::int64_t packed = 1;  ///< taps per matmul on the partitions (packedTaps)
};

ConvShape convShape(const LoweringContext& ctx) {
  const Node& node = ctx.node();
  const Attribute* layout = node.attribute(kConvWeightLayout);
  if (layout == nullptr || std::get_if<std::string>(&layout->value) == nullptr ||
      std::get<std::string>(layout->value) != kConvWeightLayoutBlocked) {
    ctx.unsupported(fmt::format(
        "the weight '{}' must be an initializer read only by Convs of one group count (the "
        "layout pass stores it in the tensor engine's order); a weight computed in the graph is "
        "not lowered",
        node.inputs.at(1)));
  }
  const Sizes x = ctx.inputSizes(0);
  ConvShape s;
  s.g = windowGeometry(ctx, node.intsAttribute("kernel_shape").value_or(Sizes{}));
  s.groups = node.intAttribute("group").value_or(1);
  s.channelsPerGroup = x[1] / s.groups;
  s.outChannels = ctx.outputSizes(0)[1];
  s.outPerGroup = s.outChannels / s.groups;
  s.taps = s.g.kernelH * s.g.kernelW;
  s.packed = packedTaps(s.channelsPerGroup, s.taps);
  if (ctx.input(0).flat.dtype() != ctx.input(1).flat.dtype() || !isFloat(ctx.outputDType(0))) {
    ctx.unsupported("X and W must have one floating-point type");
  }
  return s;
}

/// The weights of one block of output channels over one block of the contraction: a tile
/// [rows, taps, outputs] whose rows are the partitions of the matmuls (input channels, or taps x
/// channels when packed) and whose taps are the matmuls over them (one when packed).
struct WeightBlock {
  std::int64_t channel0 = 0;  ///< first input channel of the group in the block
  std::int64_t channels = 0;
  std::int64_t tap0 = 0;  ///< first tap in the block
  Tensor weights;
};

std::vector<WeightBlock> loadWeights(const Tensor& weight, const ConvShape& s, std::int64_t out0,
                                     std::int64_t outs) {
  const std::int64_t base = s.channelsPerGroup * s.taps * out0;  // the block (conv_layout.h)
  kernel::Kernel& k = weight.kernel();
  std::vector<WeightBlock> blocks;
  if (s.packed > 1) {
    // Rows (t, c), each the block's outputs.
    for (std::int64_t t0 = 0; t0 < s.taps; t0 += s.packed) {
      const std::int64_t rows = std::min(s.packed, s.taps - t0) * s.channelsPerGroup;
      Tensor t = k.sbuf({rows, 1, outs}, weight.dtype(), "conv_w");
      nisa::dmaCopy(t, hbmView(weight, base + t0 * s.channelsPerGroup * outs, outs, rows,
                               {isa::Dim{outs, 1}, {1, outs}}));
      blocks.push_back({0, s.channelsPerGroup, t0, t});
    }
    return blocks;
  }
  // Rows c, each all taps of the block's outputs.
  for (std::int64_t c0 = 0; c0 < s.channelsPerGroup; c0 += kPartitions) {
    const std::int64_t cs = std::min(kPartitions, s.channelsPerGroup - c0);
    Tensor t = k.sbuf({cs, s.taps, outs}, weight.dtype(), "conv_w");
    nisa::dmaCopy(t, hbmView(weight, base + c0 * s.taps * outs, s.taps * outs, cs,
                             {isa::Dim{outs, s.taps}, {1, outs}}));
    blocks.push_back({c0, cs, 0, t});
  }
  return blocks;
}

/// The input of one output tile for one weight block, on chip, zero-filled where it overlaps
/// the padding: the band of the whole kernel, or with packed taps one band per tap of the block
/// (block i of the partitions holds the band shifted by tap tap0 + i's offset).
Tensor loadInput(const Tensor& x, const ConvShape& s, const WeightBlock& block,
                 std::int64_t channelOffset, const Band& band) {
  const WindowGeometry& g = s.g;
  const std::int64_t copies = block.weights.partitions() / block.channels;
  const Tensor t =
      x.kernel().sbuf({block.weights.partitions(), band.rows, band.cols}, x.dtype(), "conv_in");
  std::vector<Band> shifted(static_cast<std::size_t>(copies), band);
  bool clipped = false;
  for (std::int64_t i = 0; i < copies && s.packed > 1; ++i) {
    const std::int64_t tap = block.tap0 + i;
    shifted[static_cast<std::size_t>(i)].row0 += tap / g.kernelW * g.dilationH;
    shifted[static_cast<std::size_t>(i)].col0 += tap % g.kernelW * g.dilationW;
  }
  for (const Band& b : shifted) {
    clipped = clipped || bandIsClipped(g, b);
  }
  if (clipped) {
    nisa::memset(t, 0.0f, isa::Engine::kPool);  // GpSimd: otherwise idle here
  }
  const std::int64_t plane = g.height * g.width;
  for (std::int64_t i = 0; i < copies; ++i) {
    loadBand(t(ds(i * block.channels, block.channels)), x, channelOffset + block.channel0 * plane,
             g, shifted[static_cast<std::size_t>(i)]);
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
  // With packed taps each band is a 1 x 1 window's; else the whole kernel's.
  const std::int64_t reachRows = s.packed > 1 ? 1 : g.kernelH;
  const std::int64_t reachCols = s.packed > 1 ? 1 : g.kernelW;
  // One input band serves up to kBanksPerBand PSUM tiles.
  const std::vector<OutputTile> bandTiles =
      outputTiles(ctx, g, kBanksPerBand * kTilePositions, reachRows, reachCols,
                  byteSize(x.flat.dtype()), kBandBytes);
  const std::int64_t inPlane = g.height * g.width;
  const std::int64_t outPlane = g.outH * g.outW;
  for (std::int64_t group = 0; group < s.groups; ++group) {
    for (std::int64_t o0 = 0; o0 < s.outPerGroup; o0 += kConvOutputBlock) {
      const std::int64_t os = std::min(kConvOutputBlock, s.outPerGroup - o0);
      const std::int64_t out0 = group * s.outPerGroup + o0;
      // Loaded when this core first takes a band of the block (on a logical core of two, a
      // block whose bands all go to the other core loads nothing here).
      std::vector<WeightBlock> blocks;
      std::optional<Tensor> bias;
      for (std::int64_t n = 0; n < g.batch; ++n) {
        const std::int64_t inputOffset = (n * g.channels + group * s.channelsPerGroup) * inPlane;
        for (const OutputTile& bandTile : bandTiles) {
          if (!ctx.takeUnit()) {
            continue;
          }
          if (blocks.empty()) {
            blocks = loadWeights(weight, s, out0, os);
            if (node.hasInput(2)) {
              bias = nl::load(hbmView(ctx.input(2).flat, out0, 1, os, {isa::Dim{1, 1}}));
            }
          }
          const Band band = bandOf(g, bandTile, reachRows, reachCols);
          const std::vector<OutputTile> tiles = splitTile(bandTile, kTilePositions);
          std::vector<Tensor> accs;
          for (const OutputTile& tile : tiles) {
            accs.push_back(ctx.kernel().psum({os, tile.rows, tile.cols}, DType::kFp32, "conv"));
          }
          bool first = true;
          for (const WeightBlock& block : blocks) {
            const Tensor in = loadInput(x.flat, s, block, inputOffset, band);
            for (std::int64_t t = 0; t < block.weights.shape(1); ++t) {
              // Packed: the tap offsets are in the band copies, so the view is the 1 x 1 one.
              const std::int64_t tapRow = s.packed > 1 ? 0 : t / g.kernelW;
              const std::int64_t tapCol = s.packed > 1 ? 0 : t % g.kernelW;
              for (std::size_t j = 0; j < tiles.size(); ++j) {
                nl::matmulAccumulate(accs[j], block.weights(all, t),
                                     tapView(in, g, band, tiles[j], tapRow, tapCol), !first, true);
              }
              first = false;
            }
          }
          for (std::size_t j = 0; j < tiles.size(); ++j) {
            const OutputTile& tile = tiles[j];
            // A bias column is added along the free dimension, or element for element where
            // the tile is one position (a 1 x 1 output, where both are columns).
            const std::optional<Tensor> shift =
                bias && tile.rows * tile.cols == 1 ? bias->reshape({os, 1, 1}) : bias;
            const Tensor result =
                shift ? nl::add(accs[j], *shift, dtype) : nl::copy(accs[j], dtype);
            nl::store(
                hbmView(out.flat,
                        (n * s.outChannels + out0) * outPlane + tile.row0 * g.outW + tile.col0,
                        outPlane, os, {isa::Dim{g.outW, tile.rows}, {1, tile.cols}}),
                result);
          }
        }
      }
    }
  }
}

}  // namespace

void addConvLowerings(OpLowerings& table) { table["Conv"] = {conv, "implicit GEMM (PSUM taps)"}; }

}  // namespace trn::graph::detail
