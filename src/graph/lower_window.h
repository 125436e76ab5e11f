// Internal to lowering: what convolutions and pools share. The sliding-window geometry of a node
// (kernel, strides, dilations and the padding ONNX's pads or auto_pad give, 1-D windows as 2-D
// ones of height 1), the output tiles of at most 512 positions a PSUM bank or a reduce takes, and
// the padded input band a tile reads: input rows and columns loaded into SBUF by one DMA, the
// positions outside the image filled first (zeros for convolutions, -inf for max pools).
#pragma once

#include <cstdint>
#include <vector>

#include "lowering_context.h"
#include "trn/kernel/tensor.h"

namespace trn::graph::detail {

/// A 2-D sliding window over [N, C, H, W] images (a 1-D one over [N, C, L] has H = 1).
struct WindowGeometry {
  std::int64_t batch = 0;
  std::int64_t channels = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;
  std::int64_t kernelH = 1;
  std::int64_t kernelW = 1;
  std::int64_t strideH = 1;
  std::int64_t strideW = 1;
  std::int64_t dilationH = 1;
  std::int64_t dilationW = 1;
  std::int64_t padTop = 0;
  std::int64_t padLeft = 0;
  std::int64_t padBottom = 0;
  std::int64_t padRight = 0;
  std::int64_t outH = 0;
  std::int64_t outW = 0;
};

/// The geometry of the current node (Conv or a pool) for input 0 and a kernel of `kernel`
/// (the spatial sizes, one or two); output sizes come from shape inference. Fails (naming the
/// node) for 3-D and higher windows.
WindowGeometry windowGeometry(const LoweringContext& ctx, const Sizes& kernel);

/// A block of output positions: rows [row0, row0 + rows) by columns [col0, col0 + cols).
struct OutputTile {
  std::int64_t row0 = 0;
  std::int64_t rows = 0;
  std::int64_t col0 = 0;
  std::int64_t cols = 0;
};

/// Output tiles of at most `positions` positions (whole rows when a row fits) whose input band
/// (bandOf with the same kernel reach) takes at most `bandBytes` per partition of
/// `elementBytes`-byte elements. Fails, naming the node, when not even one position fits.
std::vector<OutputTile> outputTiles(const LoweringContext& ctx, const WindowGeometry& g,
                                    std::int64_t positions, std::int64_t kernelRows,
                                    std::int64_t kernelCols, std::int64_t elementBytes,
                                    std::int64_t bandBytes);

/// `tile` cut into tiles of at most `positions` positions (whole rows when a row fits).
std::vector<OutputTile> splitTile(const OutputTile& tile, std::int64_t positions);

/// The input rows and columns a tile reads, in input coordinates (negative and past the end in
/// the padding), for a kernel of `kernelRows` x `kernelCols` taps (1 x 1 when the taps are
/// packed on the partitions, each in a band of its own).
struct Band {
  std::int64_t row0 = 0;
  std::int64_t rows = 0;
  std::int64_t col0 = 0;
  std::int64_t cols = 0;
};
Band bandOf(const WindowGeometry& g, const OutputTile& tile, std::int64_t kernelRows,
            std::int64_t kernelCols);

/// True when part of `band` lies outside the H x W image.
bool bandIsClipped(const WindowGeometry& g, const Band& band);

/// Loads the in-image part of `band` of the planes (channel images, H x W each) starting at
/// element `planeOffset` of `flat` into `dst` [planes, band.rows, band.cols] (one DMA; the rest
/// of dst is left as it is: fill it first when bandIsClipped).
void loadBand(const kernel::Tensor& dst, const kernel::Tensor& flat, std::int64_t planeOffset,
              const WindowGeometry& g, const Band& band);

/// A view of `flat` with `rows` rows `rowStride` (> 0) elements apart and the given free
/// dimensions, starting `offset` elements in.
kernel::Tensor hbmView(const kernel::Tensor& flat, std::int64_t offset, std::int64_t rowStride,
                       std::int64_t rows, std::vector<isa::Dim> free);

/// The window positions of `tile` (a part of the tile `b` is the band of) in `band`, the tile
/// loadBand filled for `b`: [partitions, tile rows, tile cols] for kernel tap (tapRow, tapCol).
kernel::Tensor tapView(const kernel::Tensor& band, const WindowGeometry& g, const Band& b,
                       const OutputTile& tile, std::int64_t tapRow, std::int64_t tapCol);

}  // namespace trn::graph::detail
