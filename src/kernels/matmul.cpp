// The NKI matmul tutorial ladder in the tile language (see matmul.h). Each kernel follows the
// tutorial's loop structure; min()-clipped tiles and blocks replace its divisibility asserts.
#include "trn/kernels/matmul.h"

#include <algorithm>
#include <source_location>
#include <string>
#include <vector>

#include "tile_util.h"
#include "trn/kernel/nisa.h"

namespace trn::kernels {

using kernel::ds;
using kernel::Kernel;
using kernel::Tensor;
namespace nisa = kernel::nisa;

namespace {

using Loc = std::source_location;

struct MatmulShape {
  std::int64_t k = 0;
  std::int64_t m = 0;
  std::int64_t n = 0;
};

/// Checks lhsT [K, M] and rhs [K, N] (2-D, one contraction size, one dtype).
MatmulShape checkOperands(Kernel& k, const Tensor& lhsT, const Tensor& rhs, const char* kernelName,
                          Loc loc = Loc::current()) {
  if (lhsT.rank() != 2 || rhs.rank() != 2) {
    k.fail(std::string(kernelName) + " takes 2-D lhsT [K, M] and rhs [K, N]", loc);
  }
  if (lhsT.shape(0) != rhs.shape(0)) {
    k.fail(std::string(kernelName) + ": lhsT has K = " + std::to_string(lhsT.shape(0)) +
               " rows but rhs has " + std::to_string(rhs.shape(0)),
           loc);
  }
  if (lhsT.dtype() != rhs.dtype()) {
    k.fail(std::string(kernelName) + ": lhsT and rhs must have one dtype", loc);
  }
  return {lhsT.shape(0), lhsT.shape(1), rhs.shape(1)};
}

std::int64_t clip(std::int64_t tile, std::int64_t start, std::int64_t size) {
  return std::min(tile, size - start);
}

/// The M tiles (result rows, 128 at a time) this SPMD program instance computes in the kernels
/// whose outermost loop runs over M (basic, tiled, hoisted, blocked): each lhsT column of tiles
/// is loaded by one instance only and rhs as often in total as by one instance alone, so the
/// split adds no traffic. (A split of N would load every lhsT tile in every instance.)
detail::ProgramShare rowTiles(const Kernel& k, const MatmulShape& s) {
  return detail::programShare(k, s.m, kMatmulTileM);
}

/// A new SBUF tile holding the HBM view `src`, declared and loaded at the caller's line (so each
/// call site gets its own buffer ring).
Tensor loadTile(Kernel& k, const Tensor& src, const char* name, Loc loc = Loc::current()) {
  Tensor tile = k.sbuf(src.shape(), src.dtype(), name, std::nullopt, loc);
  nisa::dmaCopy(tile, src, std::nullopt, std::nullopt, isa::DmaOobMode::kError, std::nullopt, loc);
  return tile;
}

/// The result [M, N] in the operands' dtype, as the tutorial declares it (dtype=lhsT.dtype).
Tensor declareResult(Kernel& k, const Tensor& lhsT, const MatmulShape& s) {
  return k.output("result", {s.m, s.n}, lhsT.dtype());
}

/// Copies the PSUM tile to a new SBUF tile of `dst`'s dtype at the caller's line (the tutorial's
/// nl.copy(res_psum, dtype=result.dtype)) and stores it to `dst`.
void storePsum(Kernel& k, const Tensor& dst, const Tensor& psum, Loc loc = Loc::current()) {
  Tensor sb = k.sbuf(psum.shape(), dst.dtype(), "res_sb", std::nullopt, loc);
  nisa::tensorCopy(sb, psum, std::nullopt, loc);
  nisa::dmaCopy(dst, sb, std::nullopt, std::nullopt, isa::DmaOobMode::kError, std::nullopt, loc);
}

}  // namespace

Tensor matmulBasic(Kernel& k, Tensor lhsT, Tensor rhs) {
  const MatmulShape s = checkOperands(k, lhsT, rhs, "matmul_basic");
  if (s.k > kMatmulTileK || s.m > kMatmulTileM || s.n > kMatmulTileN) {
    k.fail("matmul_basic takes one tile: K <= 128, M <= 128, N <= 512", Loc::current());
  }
  Tensor result = declareResult(k, lhsT, s);
  if (rowTiles(k, s).empty()) {
    return result;  // one tile: the first SPMD program instance computes it
  }
  Tensor lhsTile = loadTile(k, lhsT, "lhsT_tile");
  Tensor rhsTile = loadTile(k, rhs, "rhs_tile");
  Tensor psum = k.psum({s.m, s.n}, DType::kFp32, "res_psum");
  nisa::ncMatmul(psum, lhsTile, rhsTile);
  storePsum(k, result, psum);
  return result;
}

Tensor matmulTiled(Kernel& k, Tensor lhsT, Tensor rhs) {
  const MatmulShape s = checkOperands(k, lhsT, rhs, "matmul_tiled");
  Tensor result = declareResult(k, lhsT, s);
  const detail::ProgramShare rows = rowTiles(k, s);
  for (std::int64_t m0 = rows.begin; m0 < rows.end(); m0 += kMatmulTileM) {
    const std::int64_t mm = clip(kMatmulTileM, m0, s.m);
    for (std::int64_t n0 = 0; n0 < s.n; n0 += kMatmulTileN) {
      const std::int64_t nn = clip(kMatmulTileN, n0, s.n);
      Tensor psum = k.psum({mm, nn}, DType::kFp32, "res_psum");
      for (std::int64_t k0 = 0; k0 < s.k; k0 += kMatmulTileK) {
        const std::int64_t kk = clip(kMatmulTileK, k0, s.k);
        Tensor lhsTile = loadTile(k, lhsT(ds(k0, kk), ds(m0, mm)), "lhsT_tile");
        Tensor rhsTile = loadTile(k, rhs(ds(k0, kk), ds(n0, nn)), "rhs_tile");
        nisa::ncMatmul(psum, lhsTile, rhsTile, /*accumulate=*/k0 > 0);
      }
      storePsum(k, result(ds(m0, mm), ds(n0, nn)), psum);
    }
  }
  return result;
}

Tensor matmulHoisted(Kernel& k, Tensor lhsT, Tensor rhs) {
  const MatmulShape s = checkOperands(k, lhsT, rhs, "matmul_hoisted");
  Tensor result = declareResult(k, lhsT, s);
  const detail::ProgramShare rows = rowTiles(k, s);
  for (std::int64_t m0 = rows.begin; m0 < rows.end(); m0 += kMatmulTileM) {
    const std::int64_t mm = clip(kMatmulTileM, m0, s.m);
    std::vector<Tensor> lhsTiles;
    for (std::int64_t k0 = 0; k0 < s.k; k0 += kMatmulTileK) {
      const std::int64_t kk = clip(kMatmulTileK, k0, s.k);
      lhsTiles.push_back(loadTile(k, lhsT(ds(k0, kk), ds(m0, mm)), "lhsT_tiles"));
    }
    for (std::int64_t n0 = 0; n0 < s.n; n0 += kMatmulTileN) {
      const std::int64_t nn = clip(kMatmulTileN, n0, s.n);
      std::vector<Tensor> rhsTiles;
      for (std::int64_t k0 = 0; k0 < s.k; k0 += kMatmulTileK) {
        const std::int64_t kk = clip(kMatmulTileK, k0, s.k);
        rhsTiles.push_back(loadTile(k, rhs(ds(k0, kk), ds(n0, nn)), "rhs_tiles"));
      }
      Tensor psum = k.psum({mm, nn}, DType::kFp32, "res_psum");
      for (std::size_t t = 0; t < lhsTiles.size(); ++t) {
        nisa::ncMatmul(psum, lhsTiles[t], rhsTiles[t], /*accumulate=*/t > 0);
      }
      storePsum(k, result(ds(m0, mm), ds(n0, nn)), psum);
    }
  }
  return result;
}

Tensor matmulBlocked(Kernel& k, Tensor lhsT, Tensor rhs) {
  const MatmulShape s = checkOperands(k, lhsT, rhs, "matmul_blocked");
  constexpr std::int64_t kTilesInBlockM = 2;
  constexpr std::int64_t kTilesInBlockN = 2;
  constexpr std::int64_t kBlockM = kMatmulTileM * kTilesInBlockM;
  constexpr std::int64_t kBlockN = kMatmulTileN * kTilesInBlockN;
  Tensor result = declareResult(k, lhsT, s);
  // The M blocks are cut from this instance's rows.
  const detail::ProgramShare rows = rowTiles(k, s);
  for (std::int64_t mb = rows.begin; mb < rows.end(); mb += kBlockM) {
    // lhsTiles[bm][k]: the K column of tiles of each M tile of the block.
    std::vector<std::vector<Tensor>> lhsTiles;
    for (std::int64_t m0 = mb; m0 < std::min(mb + kBlockM, rows.end()); m0 += kMatmulTileM) {
      const std::int64_t mm = clip(kMatmulTileM, m0, s.m);
      lhsTiles.emplace_back();
      for (std::int64_t k0 = 0; k0 < s.k; k0 += kMatmulTileK) {
        const std::int64_t kk = clip(kMatmulTileK, k0, s.k);
        lhsTiles.back().push_back(loadTile(k, lhsT(ds(k0, kk), ds(m0, mm)), "lhsT_tiles"));
      }
    }
    for (std::int64_t nb = 0; nb < s.n; nb += kBlockN) {
      // rhsTiles[bn][k]: the K column of tiles of each N tile of the block.
      std::vector<std::vector<Tensor>> rhsTiles;
      for (std::int64_t n0 = nb; n0 < std::min(nb + kBlockN, s.n); n0 += kMatmulTileN) {
        const std::int64_t nn = clip(kMatmulTileN, n0, s.n);
        rhsTiles.emplace_back();
        for (std::int64_t k0 = 0; k0 < s.k; k0 += kMatmulTileK) {
          const std::int64_t kk = clip(kMatmulTileK, k0, s.k);
          rhsTiles.back().push_back(loadTile(k, rhs(ds(k0, kk), ds(n0, nn)), "rhs_tiles"));
        }
      }
      for (std::size_t bm = 0; bm < lhsTiles.size(); ++bm) {
        const std::int64_t m0 = mb + static_cast<std::int64_t>(bm) * kMatmulTileM;
        const std::int64_t mm = clip(kMatmulTileM, m0, s.m);
        for (std::size_t bn = 0; bn < rhsTiles.size(); ++bn) {
          const std::int64_t n0 = nb + static_cast<std::int64_t>(bn) * kMatmulTileN;
          const std::int64_t nn = clip(kMatmulTileN, n0, s.n);
          Tensor psum = k.psum({mm, nn}, DType::kFp32, "res_psum");
          for (std::size_t t = 0; t < lhsTiles[bm].size(); ++t) {
            nisa::ncMatmul(psum, lhsTiles[bm][t], rhsTiles[bn][t], /*accumulate=*/t > 0);
          }
          storePsum(k, result(ds(m0, mm), ds(n0, nn)), psum);
        }
      }
    }
  }
  return result;
}

Tensor matmulOptimised(Kernel& k, Tensor lhsT, Tensor rhs, MatmulBlocking blocking) {
  const MatmulShape s = checkOperands(k, lhsT, rhs, "matmul_optimised");
  if (blocking.tilesInBlockM < 1 || blocking.tilesInBlockN < 1 || blocking.tilesInBlockK < 1) {
    k.fail("matmul_optimised: tiles per block must be positive", Loc::current());
  }
  const std::int64_t blockM = kMatmulTileM * blocking.tilesInBlockM;
  const std::int64_t blockN = kMatmulTileN * blocking.tilesInBlockN;
  const std::int64_t blockK = kMatmulTileK * blocking.tilesInBlockK;
  Tensor result = declareResult(k, lhsT, s);
  // SPMD: N blocks are the outermost loop, so each program instance takes a block of N tiles
  // (512 columns) and cuts its N blocks from them: each rhs tile is loaded by one instance only
  // and lhsT as often in total as by one instance alone. (A split of M would load every rhs
  // tile in every instance.)
  const detail::ProgramShare columns = detail::programShare(k, s.n, kMatmulTileN);
  for (std::int64_t nb = columns.begin; nb < columns.end(); nb += blockN) {
    const std::int64_t nw = clip(blockN, nb, columns.end());
    // resultRows[t]: the partial sums of M tile t across the N block, zeroed first (the
    // tutorial's result_tiles: nl.zeros in lhsT's dtype, TILES_IN_BLOCK_N [TILE_M, TILE_N] tiles
    // per M tile, here one [TILE_M, BLOCK_N] row of them).
    std::vector<Tensor> resultRows;
    for (std::int64_t m0 = 0; m0 < s.m; m0 += kMatmulTileM) {
      resultRows.push_back(k.sbuf({clip(kMatmulTileM, m0, s.m), nw}, lhsT.dtype(), "result_rows"));
      nisa::memset(resultRows.back(), 0.0f);
    }
    for (std::int64_t kb = 0; kb < s.k; kb += blockK) {
      std::vector<Tensor> rhsTiles;
      for (std::int64_t k0 = kb; k0 < std::min(kb + blockK, s.k); k0 += kMatmulTileK) {
        const std::int64_t kk = clip(kMatmulTileK, k0, s.k);
        rhsTiles.push_back(loadTile(k, rhs(ds(k0, kk), ds(nb, nw)), "rhs_tiles"));
      }
      for (std::int64_t mb = 0; mb < s.m; mb += blockM) {
        const std::int64_t mw = clip(blockM, mb, s.m);
        std::vector<Tensor> lhsTiles;
        for (std::int64_t k0 = kb; k0 < std::min(kb + blockK, s.k); k0 += kMatmulTileK) {
          const std::int64_t kk = clip(kMatmulTileK, k0, s.k);
          lhsTiles.push_back(loadTile(k, lhsT(ds(k0, kk), ds(mb, mw)), "lhsT_tiles"));
        }
        for (std::int64_t bn = 0; bn < nw; bn += kMatmulTileN) {
          const std::int64_t nn = clip(kMatmulTileN, bn, nw);
          for (std::int64_t bm = 0; bm < mw; bm += kMatmulTileM) {
            const std::int64_t mm = clip(kMatmulTileM, bm, mw);
            Tensor psum = k.psum({mm, nn}, DType::kFp32, "res_psum");
            for (std::size_t t = 0; t < lhsTiles.size(); ++t) {
              nisa::ncMatmul(psum, lhsTiles[t](kernel::all, ds(bm, mm)),
                             rhsTiles[t](kernel::all, ds(bn, nn)), /*accumulate=*/t > 0);
            }
            Tensor rows = resultRows[static_cast<std::size_t>((mb + bm) / kMatmulTileM)];
            Tensor partial = rows(kernel::all, ds(bn, nn));
            nisa::tensorTensor(partial, partial, psum, isa::AluOp::kAdd);
          }
        }
      }
    }
    // The tutorial coalesces each M tile's N tiles into one packed tile, TILE_N columns per
    // copy, and stores that.
    for (std::size_t t = 0; t < resultRows.size(); ++t) {
      const std::int64_t m0 = static_cast<std::int64_t>(t) * kMatmulTileM;
      Tensor packed = k.sbuf(resultRows[t].shape(), resultRows[t].dtype(), "result_packed");
      for (std::int64_t bn = 0; bn < nw; bn += kMatmulTileN) {
        const std::int64_t nn = clip(kMatmulTileN, bn, nw);
        nisa::tensorCopy(packed(kernel::all, ds(bn, nn)), resultRows[t](kernel::all, ds(bn, nn)));
      }
      nisa::dmaCopy(result(ds(m0, packed.partitions()), ds(nb, nw)), packed);
    }
  }
  return result;
}

}  // namespace trn::kernels
