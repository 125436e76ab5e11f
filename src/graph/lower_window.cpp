// The sliding-window geometry, output tiles and padded input bands of convolutions and pools
// (lower_window.h).
#include "lower_window.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <string>

#include "trn/kernel/nisa.h"

namespace trn::graph::detail {
namespace {

/// Padding at the beginning and end of one spatial dimension, as ONNX defines it.
struct Padding {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

Padding paddingOf(const Node& node, std::size_t dim, std::size_t spatial, std::int64_t in,
                  std::int64_t out, std::int64_t kernel, std::int64_t stride,
                  std::int64_t dilation) {
  std::string autoPad = "NOTSET";
  if (const Attribute* a = node.attribute("auto_pad")) {
    if (const auto* s = std::get_if<std::string>(&a->value)) {
      autoPad = *s;
    }
  }
  if (autoPad == "VALID") {
    return {};
  }
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    // Shape inference bounded every term, so the total fits.
    const std::int64_t total =
        std::max<std::int64_t>(0, (out - 1) * stride + (kernel - 1) * dilation + 1 - in);
    const std::int64_t begin = autoPad == "SAME_UPPER" ? total / 2 : (total + 1) / 2;
    return {begin, total - begin};
  }
  const std::vector<std::int64_t> pads =
      node.intsAttribute("pads").value_or(std::vector<std::int64_t>(2 * spatial, 0));
  return {pads[dim], pads[dim + spatial]};
}

std::int64_t attributeAt(const Node& node, const char* name, std::size_t dim) {
  const std::optional<std::vector<std::int64_t>> values = node.intsAttribute(name);
  return values ? (*values)[dim] : 1;
}

/// Input rows or columns a tile of `count` output positions reads.
std::int64_t reach(std::int64_t count, std::int64_t stride, std::int64_t kernel,
                   std::int64_t dilation) {
  return (count - 1) * stride + (kernel - 1) * dilation + 1;
}

}  // namespace

WindowGeometry windowGeometry(const LoweringContext& ctx, const Sizes& kernel) {
  const Sizes x = ctx.inputSizes(0);
  const Sizes y = ctx.outputSizes(0);
  const std::size_t spatial = x.size() - 2;
  if (x.size() < 3 || spatial > 2 || kernel.size() != spatial) {
    ctx.unsupported(fmt::format(
        "only 1-D and 2-D windows are lowered (input of rank 3 or 4); this one has {} spatial "
        "dimensions",
        x.size() < 2 ? 0 : spatial));
  }
  const Node& node = ctx.node();
  WindowGeometry g;
  g.batch = x[0];
  g.channels = x[1];
  // A 1-D window is a 2-D one of height 1: its only spatial dimension is the width.
  const std::size_t w = spatial - 1;
  g.width = x[2 + w];
  g.outW = y[2 + w];
  g.kernelW = kernel[w];
  g.strideW = attributeAt(node, "strides", w);
  g.dilationW = attributeAt(node, "dilations", w);
  const Padding cols =
      paddingOf(node, w, spatial, g.width, g.outW, g.kernelW, g.strideW, g.dilationW);
  g.padLeft = cols.begin;
  g.padRight = cols.end;
  g.height = 1;
  g.outH = 1;
  if (spatial == 2) {
    g.height = x[2];
    g.outH = y[2];
    g.kernelH = kernel[0];
    g.strideH = attributeAt(node, "strides", 0);
    g.dilationH = attributeAt(node, "dilations", 0);
    const Padding rows =
        paddingOf(node, 0, spatial, g.height, g.outH, g.kernelH, g.strideH, g.dilationH);
    g.padTop = rows.begin;
    g.padBottom = rows.end;
  }
  return g;
}

std::vector<OutputTile> outputTiles(const LoweringContext& ctx, const WindowGeometry& g,
                                    std::int64_t positions, std::int64_t kernelRows,
                                    std::int64_t kernelCols, std::int64_t elementBytes,
                                    std::int64_t bandBytes) {
  std::int64_t cols = std::min(g.outW, positions);
  std::int64_t rows = std::max<std::int64_t>(1, std::min(g.outH, positions / cols));
  auto fits = [&] {
    const std::int64_t r = reach(rows, g.strideH, kernelRows, g.dilationH);
    const std::int64_t c = reach(cols, g.strideW, kernelCols, g.dilationW);
    std::int64_t bytes = 0;
    return !__builtin_mul_overflow(r, c, &bytes) &&
           !__builtin_mul_overflow(bytes, elementBytes, &bytes) && bytes <= bandBytes;
  };
  while (!fits()) {
    if (rows > 1) {
      rows = (rows + 1) / 2;
    } else if (cols > 1) {
      cols = (cols + 1) / 2;
    } else {
      ctx.unsupported(fmt::format(
          "one window ({} x {}, dilations {} x {}) needs more than the {} bytes of SBUF per "
          "partition an input band may take",
          kernelRows, kernelCols, g.dilationH, g.dilationW, bandBytes));
    }
  }
  std::vector<OutputTile> tiles;
  for (std::int64_t r0 = 0; r0 < g.outH; r0 += rows) {
    for (std::int64_t c0 = 0; c0 < g.outW; c0 += cols) {
      tiles.push_back({r0, std::min(rows, g.outH - r0), c0, std::min(cols, g.outW - c0)});
    }
  }
  return tiles;
}

std::vector<OutputTile> splitTile(const OutputTile& tile, std::int64_t positions) {
  const std::int64_t cols = std::min(tile.cols, positions);
  const std::int64_t rows = std::max<std::int64_t>(1, positions / cols);
  std::vector<OutputTile> parts;
  for (std::int64_t r = 0; r < tile.rows; r += rows) {
    for (std::int64_t c = 0; c < tile.cols; c += cols) {
      parts.push_back({tile.row0 + r, std::min(rows, tile.rows - r), tile.col0 + c,
                       std::min(cols, tile.cols - c)});
    }
  }
  return parts;
}

Band bandOf(const WindowGeometry& g, const OutputTile& tile, std::int64_t kernelRows,
            std::int64_t kernelCols) {
  return Band{
      tile.row0 * g.strideH - g.padTop, reach(tile.rows, g.strideH, kernelRows, g.dilationH),
      tile.col0 * g.strideW - g.padLeft, reach(tile.cols, g.strideW, kernelCols, g.dilationW)};
}

bool bandIsClipped(const WindowGeometry& g, const Band& band) {
  return band.row0 < 0 || band.col0 < 0 || band.row0 + band.rows > g.height ||
         band.col0 + band.cols > g.width;
}

void loadBand(const kernel::Tensor& dst, const kernel::Tensor& flat, std::int64_t planeOffset,
              const WindowGeometry& g, const Band& band) {
  const std::int64_t r0 = std::max<std::int64_t>(band.row0, 0);
  const std::int64_t r1 = std::min(band.row0 + band.rows, g.height);
  const std::int64_t c0 = std::max<std::int64_t>(band.col0, 0);
  const std::int64_t c1 = std::min(band.col0 + band.cols, g.width);
  if (r1 <= r0 || c1 <= c0) {
    return;  // the band lies wholly in the padding
  }
  const std::int64_t planes = dst.partitions();
  const kernel::Tensor src = hbmView(flat, planeOffset + r0 * g.width + c0, g.height * g.width,
                                     planes, {isa::Dim{g.width, r1 - r0}, isa::Dim{1, c1 - c0}});
  kernel::nisa::dmaCopy(
      dst(kernel::all, kernel::ds(r0 - band.row0, r1 - r0), kernel::ds(c0 - band.col0, c1 - c0)),
      src);
}

kernel::Tensor hbmView(const kernel::Tensor& flat, std::int64_t offset, std::int64_t rowStride,
                       std::int64_t rows, std::vector<isa::Dim> free) {
  // Rows of `unit` elements (a divisor of the count), every (rowStride / unit)-th of them.
  const std::int64_t n = flat.shape(0);
  const std::int64_t unit = std::gcd(n, rowStride);
  kernel::Tensor base = flat.reshape({n / unit, unit});
  if (rowStride != unit) {
    base = base(kernel::Slice{0, std::nullopt, rowStride / unit});
  }
  return base.pattern(rows, std::move(free), offset);
}

kernel::Tensor tapView(const kernel::Tensor& band, const WindowGeometry& g, const Band& b,
                       const OutputTile& tile, std::int64_t tapRow, std::int64_t tapCol) {
  const std::int64_t row = tile.row0 * g.strideH - g.padTop - b.row0 + tapRow * g.dilationH;
  const std::int64_t col = tile.col0 * g.strideW - g.padLeft - b.col0 + tapCol * g.dilationW;
  return band.pattern(band.partitions(),
                      {isa::Dim{g.strideH * b.cols, tile.rows}, isa::Dim{g.strideW, tile.cols}},
                      row * b.cols + col);
}

}  // namespace trn::graph::detail
