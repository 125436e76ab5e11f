// The scaled fp8 double-row matmul (see matmul_fp8.h). Loop nest: rhs column panels outermost
// (each loaded once, with its slice of the scale row broadcast to the partitions, and the next
// one prefetched while this one is in use), lhsT column blocks inside (loaded once per panel,
// double-buffered), then [128, 512] output tiles whose whole K sum stays in one PSUM bank and
// leaves it through one vector-engine multiply by the scales. Operand groups load in 512-column
// pieces, the first pieces of the first panel and block interleaved, so the PE starts after
// about K x 640 bytes have arrived instead of the whole first panel.
#include "trn/kernels/matmul_fp8.h"

#include <algorithm>
#include <initializer_list>
#include <source_location>
#include <string>
#include <vector>

#include "trn/kernel/nisa.h"
#include "trn/kernels/matmul.h"

namespace trn::kernels {

using kernel::ds;
using kernel::Kernel;
using kernel::Tensor;
namespace nisa = kernel::nisa;

namespace {

using Loc = std::source_location;

/// Rows one double-row matmul contracts: 128 partitions x 2 halves.
constexpr std::int64_t kDoubleRowK = 2 * kMatmulTileK;
/// Per-partition SBUF bytes for one rhs panel and one lhsT block; the allocator double-buffers
/// both, so together they take at most 2 x (48 + 24) KiB of the 224 KiB.
constexpr std::int64_t kRhsPanelBytes = 48 * 1024;
constexpr std::int64_t kLhsBlockBytes = 24 * 1024;
constexpr std::int64_t kMaxPanelN = 4 * kMatmulTileN;
constexpr std::int64_t kMaxBlockM = 4 * kMatmulTileM;

bool isFp8(DType t) { return t == DType::kFp8E4m3 || t == DType::kFp8E5m2; }

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

/// The widest multiple of `step` in [step, most] whose fp8 K-column panel fits `budget` bytes per
/// partition (one byte per element, ceil(K / 128) rows per partition).
std::int64_t panelWidth(std::int64_t k, std::int64_t budget, std::int64_t step, std::int64_t most) {
  const std::int64_t fit = budget / ceilDiv(k, kMatmulTileK) / step * step;
  return std::clamp(fit, step, most);
}

/// One DMA of an operand group: an SBUF view and the HBM view it is loaded from.
struct Load {
  Tensor dst;
  Tensor src;
};

/// The K-row structure of one operand group: double-row tiles [128, 2, width] (rows
/// 256t + 128h + p), then up to two single-row tail tiles [<= 128, width] for K mod 256; and the
/// DMAs that fill them, column piece by column piece (every tile's first piece, then every
/// tile's second, ...), so the first output tiles' operands arrive first.
struct KTiles {
  std::vector<Tensor> doubles;
  std::vector<Tensor> tails;
  std::vector<Load> loads;
};

/// Declares the tiles for rows [0, K) x columns [c0, c0 + width) of `src` [K, C] at the caller's
/// line, loaded in column pieces of `piece`. Each call site gets its own buffer ring, which the
/// allocator sizes to the tiles live at once, so a group declared at one site would load only
/// after the previous group's last use: the kernel alternates two sites (even and odd groups) to
/// load a group while the previous one is still being multiplied.
KTiles declareKTiles(Kernel& k, const Tensor& src, std::int64_t c0, std::int64_t width,
                     std::int64_t piece, const char* name, Loc loc = Loc::current()) {
  const std::int64_t rows = src.shape(0);
  const std::int64_t cols = src.shape(1);
  const std::int64_t doubles = rows / kDoubleRowK;
  KTiles tiles;
  for (std::int64_t t = 0; t < doubles; ++t) {
    tiles.doubles.push_back(k.sbuf({kMatmulTileK, 2, width}, src.dtype(), name, std::nullopt, loc));
  }
  for (std::int64_t r = doubles * kDoubleRowK; r < rows; r += kMatmulTileK) {
    const std::int64_t kk = std::min(kMatmulTileK, rows - r);
    tiles.tails.push_back(k.sbuf({kk, width}, src.dtype(), name, std::nullopt, loc));
  }
  for (std::int64_t p0 = 0; p0 < width; p0 += piece) {
    const std::int64_t pw = std::min(piece, width - p0);
    for (std::int64_t t = 0; t < doubles; ++t) {
      // Partition p, half h, column c <- row 256t + 128h + p: the halves are 128 rows apart.
      Tensor rowsView = src(ds(t * kDoubleRowK, kDoubleRowK), ds(c0 + p0, pw), loc);
      tiles.loads.push_back(
          {tiles.doubles[static_cast<std::size_t>(t)](kernel::all, kernel::all, ds(p0, pw), loc),
           rowsView.pattern(kMatmulTileK, {{kMatmulTileK * cols, 2}, {1, pw}}, 0, loc)});
    }
    for (std::size_t t = 0; t < tiles.tails.size(); ++t) {
      const std::int64_t r = doubles * kDoubleRowK + static_cast<std::int64_t>(t) * kMatmulTileK;
      tiles.loads.push_back({tiles.tails[t](kernel::all, ds(p0, pw), loc),
                             src(ds(r, tiles.tails[t].partitions()), ds(c0 + p0, pw), loc)});
    }
  }
  return tiles;
}

/// Issues the groups' DMAs with their loads interleaved (a0, b0, a1, b1, ...), so the first
/// matmul's two operands arrive first.
void loadKTiles(std::initializer_list<const KTiles*> groups) {
  for (std::size_t i = 0;; ++i) {
    bool any = false;
    for (const KTiles* g : groups) {
      if (i < g->loads.size()) {
        nisa::dmaCopy(g->loads[i].dst, g->loads[i].src);
        any = true;
      }
    }
    if (!any) {
      return;
    }
  }
}

}  // namespace

Tensor matmulFp8Scaled(Kernel& k, Tensor lhsT, Tensor rhs, Tensor scale,
                       MatmulFp8Blocking blocking) {
  const Loc here = Loc::current();
  if (lhsT.rank() != 2 || rhs.rank() != 2 || scale.rank() != 1) {
    k.fail("matmul_fp8_scaled takes 2-D lhsT [K, M], 2-D rhs [K, N] and 1-D scale [N]", here);
  }
  const std::int64_t kSize = lhsT.shape(0);
  const bool doubleRow = k.limits().fp8DoubleRow;
  const std::int64_t m = lhsT.shape(1);
  const std::int64_t n = rhs.shape(1);
  if (rhs.shape(0) != kSize) {
    k.fail("matmul_fp8_scaled: lhsT has K = " + std::to_string(kSize) + " rows but rhs has " +
               std::to_string(rhs.shape(0)),
           here);
  }
  if (scale.shape(0) != n) {
    k.fail("matmul_fp8_scaled: scale has " + std::to_string(scale.shape(0)) +
               " entries but rhs has N = " + std::to_string(n) + " columns",
           here);
  }
  if (!isFp8(lhsT.dtype()) || !isFp8(rhs.dtype())) {
    k.fail(
        "matmul_fp8_scaled: lhsT and rhs must be fp8_e4m3 or fp8_e5m2 (the double-row "
        "matmul's dtypes)",
        here);
  }
  if (scale.dtype() != DType::kFp32) {
    k.fail("matmul_fp8_scaled: scale must be fp32", here);
  }
  if (kSize > kMatmulFp8MaxK) {
    k.fail("matmul_fp8_scaled: K = " + std::to_string(kSize) + " exceeds " +
               std::to_string(kMatmulFp8MaxK) + " (the rhs panel would not fit in SBUF)",
           here);
  }

  if (blocking.panelN < 0 || blocking.panelN % kMatmulTileN != 0 || blocking.blockM < 0 ||
      blocking.blockM % kMatmulTileM != 0) {
    k.fail("matmul_fp8_scaled: panelN must be a multiple of 512 and blockM of 128", here);
  }

  Tensor out = k.output("out", {m, n}, DType::kFp32);
  const std::int64_t panelN = blocking.panelN > 0
                                  ? blocking.panelN
                                  : panelWidth(kSize, kRhsPanelBytes, kMatmulTileN, kMaxPanelN);
  const std::int64_t blockM = blocking.blockM > 0
                                  ? blocking.blockM
                                  : panelWidth(kSize, kLhsBlockBytes, kMatmulTileM, kMaxBlockM);
  Tensor scaleRow = scale.reshape({1, n});
  // rhs panel p at the even or odd sites, with its scales: each 512-column piece of the scale
  // row loads right after the rhs piece it scales (a DMA queue runs its transfers in order, and
  // the first output tiles need their operands and scales before the later pieces).
  struct Panel {
    KTiles rhs;
    Tensor scale;
  };
  auto declarePanel = [&](std::int64_t nb) {
    const std::int64_t nw = std::min(panelN, n - nb);
    Panel panel{nb / panelN % 2 == 0 ? declareKTiles(k, rhs, nb, nw, kMatmulTileN, "rhs_panel_even")
                                     : declareKTiles(k, rhs, nb, nw, kMatmulTileN, "rhs_panel_odd"),
                k.sbuf({kMatmulTileM, nw}, DType::kFp32, "scale_bcast")};
    const std::size_t perPiece = panel.rhs.doubles.size() + panel.rhs.tails.size();
    std::vector<Load> loads;
    for (std::size_t i = 0; i < panel.rhs.loads.size(); ++i) {
      loads.push_back(panel.rhs.loads[i]);
      if ((i + 1) % perPiece == 0) {
        const auto p0 = static_cast<std::int64_t>(i / perPiece) * kMatmulTileN;
        const std::int64_t pw = std::min(kMatmulTileN, nw - p0);
        loads.push_back({panel.scale(kernel::all, ds(p0, pw)),
                         scaleRow(kernel::all, ds(nb + p0, pw)).broadcast(0, kMatmulTileM)});
      }
    }
    panel.rhs.loads = std::move(loads);
    return panel;
  };
  std::int64_t blocks = 0;
  std::int64_t outTiles = 0;
  auto declareBlock = [&](std::int64_t mb) {
    const std::int64_t mw = std::min(blockM, m - mb);
    return blocks++ % 2 == 0 ? declareKTiles(k, lhsT, mb, mw, mw, "lhsT_block_even")
                             : declareKTiles(k, lhsT, mb, mw, mw, "lhsT_block_odd");
  };

  // The first panel and block load interleaved; every later panel is prefetched while the
  // previous one is in use, after that panel's second block (or its only one).
  Panel next = declarePanel(0);
  KTiles firstBlock = declareBlock(0);
  loadKTiles({&next.rhs, &firstBlock});
  for (std::int64_t nb = 0; nb < n; nb += panelN) {
    const std::int64_t nw = std::min(panelN, n - nb);
    const Panel panel = next;
    const KTiles& rhsTiles = panel.rhs;
    const Tensor& scaleTile = panel.scale;
    for (std::int64_t mb = 0; mb < m; mb += blockM) {
      const std::int64_t mw = std::min(blockM, m - mb);
      KTiles lhsTiles = nb == 0 && mb == 0 ? firstBlock : declareBlock(mb);
      if (nb > 0 || mb > 0) {
        loadKTiles({&lhsTiles});
      }
      const bool prefetchPoint = mb == std::min(blockM, (m - 1) / blockM * blockM);
      if (prefetchPoint && nb + panelN < n) {
        next = declarePanel(nb + panelN);
        loadKTiles({&next.rhs});
      }
      for (std::int64_t bn = 0; bn < nw; bn += kMatmulTileN) {
        const std::int64_t nn = std::min(kMatmulTileN, nw - bn);
        for (std::int64_t bm = 0; bm < mw; bm += kMatmulTileM) {
          const std::int64_t mm = std::min(kMatmulTileM, mw - bm);
          Tensor psum = k.psum({mm, nn}, DType::kFp32, "acc");
          bool accumulate = false;
          for (std::size_t t = 0; t < lhsTiles.doubles.size(); ++t) {
            if (doubleRow) {
              nisa::ncMatmul(psum, lhsTiles.doubles[t](kernel::all, kernel::all, ds(bm, mm)),
                             rhsTiles.doubles[t](kernel::all, kernel::all, ds(bn, nn)), accumulate,
                             {0, 0}, {isa::kPeArraySize, isa::kPeArraySize},
                             nisa::MatmulPerfMode::kDoubleRow);
              accumulate = true;
              continue;
            }
            // Without double-row (NC-v2), each half of the pair (128 rows) is one plain matmul,
            // at the plain fp8 rate.
            for (std::int64_t half = 0; half < 2; ++half) {
              nisa::ncMatmul(psum, lhsTiles.doubles[t](kernel::all, half, ds(bm, mm)),
                             rhsTiles.doubles[t](kernel::all, half, ds(bn, nn)), accumulate);
              accumulate = true;
            }
          }
          for (std::size_t t = 0; t < lhsTiles.tails.size(); ++t) {
            nisa::ncMatmul(psum, lhsTiles.tails[t](kernel::all, ds(bm, mm)),
                           rhsTiles.tails[t](kernel::all, ds(bn, nn)), accumulate);
            accumulate = true;
          }
          // Four result buffers (two sites), so a store still queued behind operand loads
          // does not hold up the next evacuations.
          Tensor result = outTiles++ % 2 == 0 ? k.sbuf({mm, nn}, DType::kFp32, "result_even")
                                              : k.sbuf({mm, nn}, DType::kFp32, "result_odd");
          nisa::tensorTensor(result, psum, scaleTile(ds(0, mm), ds(bn, nn)), isa::AluOp::kMultiply);
          nisa::dmaCopy(out(ds(mb + bm, mm), ds(nb + bn, nn)), result);
        }
      }
    }
  }
  return out;
}

}  // namespace trn::kernels
