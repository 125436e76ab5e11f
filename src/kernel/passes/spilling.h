// Spilling, for the allocation pass: when the tiles live at some point do not fit SBUF, one tile
// that is live across that point but unused there moves out through HBM. It is stored to an HBM
// scratch tensor after its last use before the gap, reloaded into a new tile before its first use
// after it, and the later instructions read the new tile; the dependency analysis then orders the
// store, the reload and their neighbours like any other DMA.
//
// A tile qualifies when it is an automatically placed SBUF tile, one instruction before the gap
// wrote all of it (so the store reads no never-written byte), its free size fits one access-
// pattern dimension, and neither the store nor the reload would fall inside a dynamic loop (where
// it would repeat). Among those the largest tile is taken, then the one with the longest gap.
#pragma once

#include <cstdint>

#include "trn/kernel/kernel_ir.h"

namespace trn::kernel {

/// Whether `ap` (an operand of an on-chip tile `buffer`) covers every element of the tile: all its
/// partitions and as many elements as the tile holds, with no broadcast (zero) stride.
bool coversWholeTile(const isa::AccessPattern& ap, const Buffer& buffer);

/// Spills one SBUF tile whose gap between two uses covers ops [first, last]; false when no tile
/// qualifies. `freeDimMaxCount` bounds the one pattern dimension a tile's free elements take.
bool spillAcross(KernelIR& ir, std::int64_t first, std::int64_t last, std::int64_t freeDimMaxCount);

}  // namespace trn::kernel
