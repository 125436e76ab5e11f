// The tile loops of element-wise and data-movement lowerings (lowering_context.h: emitTileLoop,
// emitCopyLoop).
#include <fmt/format.h>

#include <algorithm>

#include "lowering_context.h"
#include "trn/kernel/nl.h"

namespace trn::graph::detail {
namespace {

/// Free elements per partition of one tile: 8 KiB of fp32, so that a binary operator's two
/// inputs and its result, double-buffered, take 48 KiB of a partition's SBUF.
constexpr std::int64_t kTileColumns = 2048;

struct LoopSpace {
  Sizes sizes;
  std::vector<Sizes> strides;  ///< per operand (the output first)
};

/// Drops size-1 dimensions and merges neighbours every operand steps through contiguously, then
/// makes at least two dimensions (rows, columns).
LoopSpace coalesce(const std::vector<const StridedOperand*>& operands, const Sizes& sizes) {
  LoopSpace s;
  s.strides.resize(operands.size());
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) {
      continue;
    }
    bool mergeable = !s.sizes.empty();
    for (std::size_t o = 0; o < operands.size() && mergeable; ++o) {
      mergeable = s.strides[o].back() == operands[o]->strides[d] * sizes[d];
    }
    for (std::size_t o = 0; o < operands.size(); ++o) {
      if (mergeable) {
        s.strides[o].back() = operands[o]->strides[d];
      } else {
        s.strides[o].push_back(operands[o]->strides[d]);
      }
    }
    if (mergeable) {
      s.sizes.back() *= sizes[d];
    } else {
      s.sizes.push_back(sizes[d]);
    }
  }
  if (s.sizes.empty()) {
    s.sizes = {1};
    for (Sizes& st : s.strides) {
      st = {1};
    }
  }
  const std::int64_t cols = s.sizes.back();
  if (cols > kTileColumns && (s.sizes.size() == 1 || s.sizes[s.sizes.size() - 2] < kPartitions)) {
    // Few rows of long columns (a flat tensor; heads times a head's elements): split the columns
    // into rows of at most a tile's width, so that a tile is a block of whole rows (its DMA rows
    // contiguous, the backend's dependency analysis seeing blocks) and fills the partitions.
    std::int64_t width = kTileColumns;
    while (cols % width != 0) {
      --width;
    }
    if (width >= kTileColumns / 32) {
      s.sizes.back() = cols / width;
      s.sizes.push_back(width);
      for (Sizes& st : s.strides) {
        st.push_back(st.back());
        st[st.size() - 2] *= width;
      }
    }
  }
  if (s.sizes.size() == 1) {
    // One dimension: spread it over the partitions when it divides evenly, else one row.
    const std::int64_t n = s.sizes[0];
    const std::int64_t rows = n % kPartitions == 0 && n >= 2 * kPartitions ? kPartitions : 1;
    s.sizes = {rows, n / rows};
    for (Sizes& st : s.strides) {
      st = {rows == 1 ? 0 : st[0] * (n / rows), st[0]};
    }
  }
  return s;
}

/// Per operand, the element where the tiles of the outer index `outer` (over the leading
/// dimensions of `space`) start.
std::vector<std::int64_t> firstElements(const std::vector<const StridedOperand*>& operands,
                                        const LoopSpace& space,
                                        const std::vector<std::int64_t>& outer) {
  std::vector<std::int64_t> base(operands.size());
  for (std::size_t o = 0; o < operands.size(); ++o) {
    base[o] = operands[o]->offset;
    for (std::size_t d = 0; d < outer.size(); ++d) {
      base[o] += outer[d] * space.strides[o][d];
    }
  }
  return base;
}

}  // namespace

void emitTileLoop(LoweringContext& ctx, const StridedOperand& out,
                  const std::vector<StridedOperand>& inputs, const Sizes& sizes, const TileFn& fn) {
  std::vector<const StridedOperand*> operands = {&out};
  for (const StridedOperand& in : inputs) {
    operands.push_back(&in);
  }
  for (const StridedOperand* op : operands) {
    if (op->strides.size() != sizes.size()) {
      ctx.fail(fmt::format("internal: an operand has {} strides for {} loop dimensions",
                           op->strides.size(), sizes.size()));
    }
  }
  const LoopSpace space = coalesce(operands, sizes);
  const std::size_t rank = space.sizes.size();
  const std::size_t rowDim = rank - 2;
  const std::size_t colDim = rank - 1;
  const std::int64_t rows = space.sizes[rowDim];
  const std::int64_t cols = space.sizes[colDim];
  std::vector<std::int64_t> outer(rowDim, 0);
  while (true) {
    const std::vector<std::int64_t> base = firstElements(operands, space, outer);
    for (std::int64_t r0 = 0; r0 < rows; r0 += kPartitions) {
      const std::int64_t p = std::min(kPartitions, rows - r0);
      for (std::int64_t c0 = 0; c0 < cols; c0 += kTileColumns) {
        if (!ctx.takeUnit()) {
          continue;  // another core of the logical core computes this tile
        }
        const std::int64_t f = std::min(kTileColumns, cols - c0);
        // Operand o's tile, `width` columns of it.
        auto view = [&](std::size_t o, std::int64_t width) {
          const Sizes& st = space.strides[o];
          return stridedView(operands[o]->flat, base[o] + r0 * st[rowDim] + c0 * st[colDim],
                             st[rowDim], p, st[colDim], width);
        };
        std::vector<kernel::Tensor> tiles;
        for (std::size_t o = 1; o < operands.size(); ++o) {
          // Repeated along the row (a norm's per-row scale): one element per partition loaded and
          // read back along the free dimension with stride 0, rather than a DMA descriptor per
          // repeated element.
          const bool column = space.strides[o][colDim] == 0 && f > 1;
          tiles.push_back(column ? kernel::nl::load(view(o, 1)).broadcast(1, f)
                                 : kernel::nl::load(view(o, f)));
        }
        kernel::nl::store(view(0, f), fn(tiles));
      }
    }
    if (!nextIndex(outer, space.sizes)) {
      break;
    }
  }
}

void emitCopyLoop(LoweringContext& ctx, const StridedOperand& out, const StridedOperand& in,
                  const Sizes& sizes) {
  const TileFn pass = [](const std::vector<kernel::Tensor>& tiles) { return tiles[0]; };
  if (out.strides.size() != sizes.size() || in.strides.size() != sizes.size()) {
    emitTileLoop(ctx, out, {in}, sizes, pass);  // which reports the mismatch
    return;
  }
  const LoopSpace space = coalesce({&out, &in}, sizes);
  const std::size_t rank = space.sizes.size();
  if (rank < 3) {
    emitTileLoop(ctx, out, {in}, sizes, pass);
    return;
  }
  // Of the two dimensions outside the columns, the larger gives the partitions and the other a
  // block of the free dimensions.
  const std::size_t colDim = rank - 1;
  const bool outerParts = space.sizes[rank - 3] > space.sizes[rank - 2];
  const std::size_t partDim = outerParts ? rank - 3 : rank - 2;
  const std::size_t midDim = outerParts ? rank - 2 : rank - 3;
  const std::int64_t parts = space.sizes[partDim];
  const std::int64_t mids = space.sizes[midDim];
  const std::int64_t cols = space.sizes[colDim];
  // Broadcasts (stride 0), reversals (negative strides) and partition strides that do not divide
  // the operand (a strided slice; stridedView's rows) keep the general loop.
  const std::vector<const StridedOperand*> operands = {&out, &in};
  bool regular = true;
  for (std::size_t o = 0; o < operands.size(); ++o) {
    const Sizes& st = space.strides[o];
    regular = regular && st[partDim] > 0 && st[midDim] > 0 && st[colDim] > 0 &&
              operands[o]->flat.shape(0) % st[partDim] == 0;
  }
  if (2 * cols > kTileColumns || !regular) {
    emitTileLoop(ctx, out, {in}, sizes, pass);
    return;
  }
  // Tiles of [128 of partDim, a block of midDim, colDim]: at most kTileColumns free elements.
  const std::int64_t block = std::clamp<std::int64_t>(kTileColumns / cols, 1, mids);
  std::vector<std::int64_t> outer(rank - 3, 0);
  while (true) {
    const std::vector<std::int64_t> base = firstElements(operands, space, outer);
    for (std::int64_t p0 = 0; p0 < parts; p0 += kPartitions) {
      const std::int64_t p = std::min(kPartitions, parts - p0);
      for (std::int64_t m0 = 0; m0 < mids; m0 += block) {
        if (!ctx.takeUnit()) {
          continue;  // another core of the logical core copies this tile
        }
        const std::int64_t m = std::min(block, mids - m0);
        auto view = [&](std::size_t o) {
          const Sizes& st = space.strides[o];
          return stridedView(operands[o]->flat, base[o] + p0 * st[partDim] + m0 * st[midDim],
                             st[partDim], p, {isa::Dim{st[midDim], m}, isa::Dim{st[colDim], cols}});
        };
        kernel::nl::store(view(0), kernel::nl::load(view(1)));
      }
    }
    if (!nextIndex(outer, space.sizes)) {
      break;
    }
  }
}

}  // namespace trn::graph::detail
