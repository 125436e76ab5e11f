// Matrix-multiplication reference kernels: the NKI matmul tutorial's optimisation ladder (basic,
// tiled, hoisted loads, blocked free dimension, fully optimised) written in the tile language.
// Every kernel computes result[M, N] = lhsT[K, M]^T @ rhs[K, N] with lhsT and rhs in HBM (both
// bf16 or both fp32), accumulates in fp32 in PSUM and returns the result in the operands' dtype,
// as the tutorial does (dtype=lhsT.dtype). Unlike the tutorial, sizes need not be multiples of
// the tile or block sizes: the last tile or block along each dimension is clipped. Under an SPMD
// launch grid each program instance takes a block of the tiles of the kernel's outermost loop:
// 128-row M tiles (basic, tiled, hoisted, blocked; the blocked kernel cuts its blocks from the
// share) or 512-column N tiles (optimised), so no operand is loaded more often in total than by a
// single instance.
#pragma once

#include <cstdint>

#include "trn/kernel/kernel.h"

namespace trn::kernels {

/// Tile sizes of the tensor engine (NKI nl.tile_size): pmax, gemm_stationary_fmax,
/// gemm_moving_fmax.
inline constexpr std::int64_t kMatmulTileK = 128;
inline constexpr std::int64_t kMatmulTileM = 128;
inline constexpr std::int64_t kMatmulTileN = 512;

/// One tile: K <= 128, M <= 128, N <= 512; load both operands, one matmul, copy, store.
kernel::Tensor matmulBasic(kernel::Kernel& k, kernel::Tensor lhsT, kernel::Tensor rhs);

/// Loops over M (128), N (512) and K (128), both operand tiles loaded in the innermost loop and
/// the K steps accumulated in one PSUM tile.
kernel::Tensor matmulTiled(kernel::Kernel& k, kernel::Tensor lhsT, kernel::Tensor rhs);

/// As matmulTiled, with the lhsT column of tiles loaded once per M tile and the rhs column once
/// per N tile, outside the K loop.
kernel::Tensor matmulHoisted(kernel::Kernel& k, kernel::Tensor lhsT, kernel::Tensor rhs);

/// As matmulHoisted, with the free dimensions blocked (the tutorial's TILES_IN_BLOCK_M =
/// TILES_IN_BLOCK_N = 2): the lhsT tiles of 2 M tiles are loaded once per M block and the rhs
/// tiles of 2 N tiles once per (M block, N block), so each loaded rhs tile serves 2 M tiles.
kernel::Tensor matmulBlocked(kernel::Kernel& k, kernel::Tensor lhsT, kernel::Tensor rhs);

/// Tiles per block of the fully optimised kernel (the tutorial's defaults).
struct MatmulBlocking {
  std::int64_t tilesInBlockM = 16;
  std::int64_t tilesInBlockN = 2;
  std::int64_t tilesInBlockK = 8;
};

/// The tutorial's fully optimised kernel: N blocks outermost; for each K block the rhs block is
/// loaded once and each M block's lhsT block once, every tile pair is multiplied over the K block
/// into PSUM, and the partial sums accumulate in zeroed SBUF rows of the N block in the operands'
/// dtype (the tutorial's result_tiles), copied to a packed tile and stored once the K blocks are
/// done.
kernel::Tensor matmulOptimised(kernel::Kernel& k, kernel::Tensor lhsT, kernel::Tensor rhs,
                               MatmulBlocking blocking = {});

}  // namespace trn::kernels
