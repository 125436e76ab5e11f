// Pass: on-chip allocation. Places every SBUF and PSUM tile the kernel uses at a byte offset
// (all tiles start at partition 0 unless the author gave an address) and rebases the operands of
// every instruction onto those physical addresses.
//
// Guarantees:
// - Two tiles that are live at the same time never share a byte (but for the in-place rule
//   below). With multi-buffering
//   (bufs = n > 1), the tiles declared at one source line with one shape and dtype (one per loop
//   iteration) share a ring of n slots (more when more of them are live at once), tile k in
//   slot k mod slots, reserved from the first use of
//   the first tile to the last use of the last: a tile's space is reused only n iterations
//   later, so the loads of the next iterations overlap the compute of this one. Rings and
//   single tiles of different lines share space whenever their lifetimes do not overlap.
// - A ring whose tiles are live several at a time (a block, such as the K tiles of one matmul
//   column) and that the tensor engine reads gets n times that many slots, so that the next
//   block loads while the tensor engine works through this one. Other blocks (the rows of a
//   DMA-bound row kernel) keep one block: there deeper prefetch only splits the DMA bandwidth
//   between more transfers, and the first tile arrives later. A ring of one tile per iteration
//   that DMA loads and the tensor engine reads gets one slot more than bufs: a load's fixed
//   cost (about 1.3 us) outlasts a matmul, so with bufs slots the load into a slot freed by one
//   matmul would start only after the next matmul, and the DMA would idle between them. When
//   the deeper rings do not fit, allocation is retried without them.
// - With bufs = 1 every tile is reserved from its first to its last use only.
// - In place: an element-wise instruction (tensor_tensor, tensor_scalar, scalar_tensor_tensor,
//   tensor_copy, reciprocal, activation) outside any dynamic loop that writes all of a tile at
//   its first use writes it over an input tile that dies there, when the two have one memory,
//   dtype, partition count and size per partition and the instruction reads that input with
//   exactly the pattern it writes the result with (element k read before element k is written,
//   at the same address). The result takes the input's space (ring slot included), and that
//   space stays live to the result's last use; chains of such steps hold one tile. Two tiles then
//   share bytes at the one instruction where the first ends and the second starts.
// - Tiles are aligned to kAllocationAlignment bytes; a PSUM tile of at most one bank never
//   crosses a bank boundary, larger ones start on a bank.
// - Author-placed tiles keep their address; the allocator works around them.
// - When the rings do not fit, the sites (declaration lines) whose space the tile that did not
//   fit needed are made single one at a time, each time the one of the largest tiles (of one
//   size, one no DMA loads or stores first), and allocation is retried: the large tiles go
//   single and the small per-iteration tiles keep their second slot, so their loads still
//   overlap the compute. When no such site is left, the allocation runs with spilling
//   (spilling.h), the sites still multi-buffered kept so: each tile that does not fit spills
//   single tiles live across it to HBM, chosen in that one pass; the pass's spills are applied
//   to the IR and the allocation runs once more over it. The spills are planned twice, the
//   candidates once the tiles unused over the whole lifetime of the tile that does not fit,
//   once also those unused where it starts and used again before it ends (each reloaded then,
//   into room made when the allocation reaches the reload), and the plan whose stores and
//   reloads move fewer bytes is kept. When that does not fit either, every
//   tile is single and spilling is tried again; if the tiles still do not fit, the error names
//   the line that declared the tile that did not fit, its size, and every tile live at that
//   point with its size and line.
// Dependencies between tiles that reuse an address are left to the dependency analysis, which
// works on the physical addresses this pass produces.
#pragma once

#include <cstdint>
#include <vector>

#include "trn/base/status.h"
#include "trn/isa/core_limits.h"
#include "trn/kernel/kernel_ir.h"

namespace trn::kernel {

inline constexpr std::int64_t kAllocationAlignment = 64;

/// Where one used on-chip tile went and when it is live (trace-order instruction indices).
struct TilePlacement {
  std::int32_t buffer = 0;
  Address at;
  std::int64_t bytes = 0;  ///< per partition
  std::int64_t firstOp = 0;
  std::int64_t lastOp = 0;
};

struct AllocationSummary {
  std::int64_t sbufPeakBytes = 0;  ///< highest byte used per partition
  std::int64_t psumPeakBytes = 0;
  int bufs = 1;    ///< the multi-buffering depth that fitted
  int spills = 0;  ///< tiles moved out through HBM to fit (spilling.h), counted per reload
  std::int64_t spillBytes = 0;  ///< bytes the spills' stores and reloads move
  int singleSites = 0;  ///< with bufs > 1: declaration sites made single so that the rest fit
  std::vector<TilePlacement> tiles;
};

Result<AllocationSummary> allocateOnChip(KernelIR& ir, const isa::CoreLimits& limits, int bufs);

}  // namespace trn::kernel
