// Lowerings of the pools. MaxPool and AveragePool put the channel images (batch x channels of
// them) on the partitions, load each output tile's input band into SBUF (filled with -inf for a
// max, 0 for an average, where it overlaps the padding or ceil_mode's overhang) and reduce every
// window of the tile with one vector-engine reduce: a 4-D access pattern whose two inner
// dimensions are the window's rows and columns (strides, dilations and all). An average divides
// by the window size, or, where windows reach past the counted area (the image, or the padded
// image with count_include_pad), by each window's count of counted positions: the same reduce
// over a 0/1 mask band. GlobalAveragePool and GlobalMaxPool reduce each image along the free
// dimension.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "lower_window.h"
#include "lowering_context.h"
#include "trn/kernel/nisa.h"
#include "trn/kernel/nl.h"

namespace trn::graph::detail {
namespace {

namespace nl = kernel::nl;
namespace nisa = kernel::nisa;
using isa::AluOp;
using kernel::all;
using kernel::ds;
using kernel::Tensor;

/// Output positions per tile and SBUF bytes per partition of one input band.
constexpr std::int64_t kTilePositions = 1024;
constexpr std::int64_t kBandBytes = 64 * 1024;
/// Elements per partition of one tile of a global pool.
constexpr std::int64_t kGlobalColumns = 8192;

enum class PoolKind { kMax, kAverage };

/// The windows of `tile` in `band`: [planes, rows, cols, kernel rows, kernel cols].
Tensor windowsOf(const Tensor& band, const WindowGeometry& g, const Band& b,
                 const OutputTile& tile) {
  return band.pattern(
      band.partitions(),
      {isa::Dim{g.strideH * b.cols, tile.rows}, isa::Dim{g.strideW, tile.cols},
       isa::Dim{g.dilationH * b.cols, g.kernelH}, isa::Dim{g.dilationW, g.kernelW}});
}

/// The positions an average counts, in input coordinates: the image, or with count_include_pad
/// the padded image.
struct CountedArea {
  std::int64_t row0, row1, col0, col1;
};

/// sums / (the counted positions of each window), or / the window size when every window of the
/// tile lies in the counted area.
void divideByCounts(const Tensor& dst, const Tensor& sums, const WindowGeometry& g, const Band& b,
                    const OutputTile& tile, const CountedArea& area) {
  if (b.row0 >= area.row0 && b.row0 + b.rows <= area.row1 && b.col0 >= area.col0 &&
      b.col0 + b.cols <= area.col1) {
    nisa::tensorScalar(dst, sums, AluOp::kDivide, static_cast<float>(g.kernelH * g.kernelW));
    return;
  }
  kernel::Kernel& k = sums.kernel();
  const std::int64_t planes = sums.partitions();
  const Tensor mask = k.sbuf({planes, b.rows, b.cols}, DType::kFp32, "pool_mask");
  nisa::memset(mask, 0.0f);
  const std::int64_t r0 = std::max(area.row0, b.row0);
  const std::int64_t r1 = std::min(area.row1, b.row0 + b.rows);
  const std::int64_t c0 = std::max(area.col0, b.col0);
  const std::int64_t c1 = std::min(area.col1, b.col0 + b.cols);
  if (r1 > r0 && c1 > c0) {
    nisa::memset(mask(all, ds(r0 - b.row0, r1 - r0), ds(c0 - b.col0, c1 - c0)), 1.0f);
  }
  const Tensor counts = k.sbuf({planes, tile.rows, tile.cols}, DType::kFp32, "pool_counts");
  nisa::tensorReduce(counts, windowsOf(mask, g, b, tile), AluOp::kAdd, 3);
  nisa::tensorTensor(dst, sums, counts, AluOp::kDivide);
}

template <PoolKind kKind>
void pool(LoweringContext& ctx) {
  const Node& node = ctx.node();
  if (node.outputs.size() > 1 && !node.outputs[1].empty()) {
    ctx.unsupported("MaxPool's Indices output is not lowered");
  }
  const std::optional<Sizes> kernelShape = node.intsAttribute("kernel_shape");
  const WindowGeometry g = windowGeometry(ctx, kernelShape.value_or(Sizes{}));
  const DeviceValue& x = ctx.input(0);
  const DType dtype = ctx.outputDType(0);
  const DeviceValue out = ctx.declareOutput(0);
  const std::vector<OutputTile> tiles = outputTiles(ctx, g, kTilePositions, g.kernelH, g.kernelW,
                                                    byteSize(x.flat.dtype()), kBandBytes);
  const bool includePad = node.intAttribute("count_include_pad").value_or(0) != 0;
  const CountedArea area =
      includePad ? CountedArea{-g.padTop, g.height + g.padBottom, -g.padLeft, g.width + g.padRight}
                 : CountedArea{0, g.height, 0, g.width};
  const float fill = kKind == PoolKind::kMax ? -std::numeric_limits<float>::infinity() : 0.0f;
  const std::int64_t planes = g.batch * g.channels;
  const std::int64_t inPlane = g.height * g.width;
  const std::int64_t outPlane = g.outH * g.outW;
  kernel::Kernel& k = ctx.kernel();
  for (std::int64_t p0 = 0; p0 < planes; p0 += kPartitions) {
    const std::int64_t ps = std::min(kPartitions, planes - p0);
    for (const OutputTile& tile : tiles) {
      if (!ctx.takeUnit()) {
        continue;
      }
      const Band b = bandOf(g, tile, g.kernelH, g.kernelW);
      const Tensor band = k.sbuf({ps, b.rows, b.cols}, x.flat.dtype(), "pool_in");
      if (bandIsClipped(g, b)) {
        nisa::memset(band, fill, isa::Engine::kPool);
      }
      loadBand(band, x.flat, p0 * inPlane, g, b);
      const Tensor result = k.sbuf({ps, tile.rows, tile.cols}, dtype, "pool_out");
      if constexpr (kKind == PoolKind::kMax) {
        nisa::tensorReduce(result, windowsOf(band, g, b, tile), AluOp::kMax, 3);
      } else {
        const Tensor sums = k.sbuf({ps, tile.rows, tile.cols}, DType::kFp32, "pool_sums");
        nisa::tensorReduce(sums, windowsOf(band, g, b, tile), AluOp::kAdd, 3);
        divideByCounts(result, sums, g, b, tile, area);
      }
      nl::store(hbmView(out.flat, p0 * outPlane + tile.row0 * g.outW + tile.col0, outPlane, ps,
                        {isa::Dim{g.outW, tile.rows}, {1, tile.cols}}),
                result);
    }
  }
}

/// Each channel image reduced to one value: partial reductions of up to kGlobalColumns
/// elements, then one over the partials; an average divides the sum by the image size.
template <PoolKind kKind>
void globalPool(LoweringContext& ctx) {
  const Sizes x = ctx.inputSizes(0);
  const std::int64_t planes = elementCount(x, 0, 2);
  const std::int64_t size = elementCount(x, 2, x.size());
  const DType dtype = ctx.outputDType(0);
  const DeviceValue& in = ctx.input(0);
  const DeviceValue out = ctx.declareOutput(0);
  const AluOp op = kKind == PoolKind::kMax ? AluOp::kMax : AluOp::kAdd;
  const std::int64_t chunks = (size + kGlobalColumns - 1) / kGlobalColumns;
  kernel::Kernel& k = ctx.kernel();
  for (std::int64_t p0 = 0; p0 < planes; p0 += kPartitions) {
    if (!ctx.takeUnit()) {
      continue;
    }
    const std::int64_t ps = std::min(kPartitions, planes - p0);
    const Tensor partial = k.sbuf({ps, chunks}, DType::kFp32, "global_partial");
    for (std::int64_t j = 0; j < chunks; ++j) {
      const std::int64_t c0 = j * kGlobalColumns;
      const std::int64_t cs = std::min(kGlobalColumns, size - c0);
      const Tensor tile = nl::load(hbmView(in.flat, p0 * size + c0, size, ps, {isa::Dim{1, cs}}));
      nisa::tensorReduce(partial(all, ds(j, 1)), tile, op, 1);
    }
    Tensor reduced = partial;
    if (chunks > 1) {
      reduced = k.sbuf({ps, 1}, DType::kFp32, "global_reduced");
      nisa::tensorReduce(reduced, partial, op, 1);
    }
    const Tensor result = k.sbuf({ps, 1}, dtype, "global_out");
    if constexpr (kKind == PoolKind::kMax) {
      nisa::tensorCopy(result, reduced);
    } else {
      nisa::tensorScalar(result, reduced, AluOp::kDivide, static_cast<float>(size));
    }
    nl::store(hbmView(out.flat, p0, 1, ps, {isa::Dim{1, 1}}), result);
  }
}

}  // namespace

void addPoolLowerings(OpLowerings& table) {
  table["MaxPool"] = {pool<PoolKind::kMax>, "window reduce (strided SBUF view)"};
  table["AveragePool"] = {pool<PoolKind::kAverage>, "window reduce (strided SBUF view)"};
  table["GlobalAveragePool"] = {globalPool<PoolKind::kAverage>, "row reduce"};
  table["GlobalMaxPool"] = {globalPool<PoolKind::kMax>, "row reduce"};
}

}  // namespace trn::graph::detail
