// Spilling, for the allocation pass: when a tile does not fit SBUF, tiles live across its lifetime
// but unused during it (or, in the allocator's second plan, unused where it starts) move out
// through HBM, chosen while the allocation places tiles (one pass, no re-allocation per spilled
// tile; allocation.h keeps the plan that moves fewer bytes). A spilled tile ends at its last use
// before the gap; a new tile, reloaded just before its first use after the gap, takes the later
// uses and is placed when the allocation reaches it (so it may itself be spilled across a later
// gap: live-range splitting). The store and the reload are DMA instructions of the program, ordered
// by the dependency analysis like any other.
//
// What a spill moves:
// - A clean tile (its value is still in HBM) is reloaded with no store: a tile whose only write
//   is one DMA load of the whole tile from an HBM tensor that no op writes between that load and
//   the reload is reloaded by that same load (an input, or the scratch tensor of an earlier
//   spill); a tile reloaded earlier in the pass and not written since is reloaded from where it
//   came.
// - Any other tile is stored to an HBM scratch tensor (one per spilled tile, reused by its later
//   spills) after its last use before the gap and reloaded from it. It qualifies only when one
//   instruction before the gap wrote all of it (so the store reads no never-written byte) and its
//   free size fits one access-pattern dimension.
// Neither the store nor the reload may fall inside a dynamic loop (where it would repeat). A tile
// whose space later tiles take (the allocator's in-place rule) may leave across a gap between its
// own uses: those tiles start at its last use, after any such gap.
//
// Time in the planner is doubled op indices: op i is at 2i, a store after op i at 2i + 1 and a
// reload before op i at 2i - 1, so the allocator's intervals order them against every op.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "trn/kernel/kernel_ir.h"

namespace trn::kernel {

/// Whether `ap` (an operand of an on-chip tile `buffer`) covers every element of the tile: all its
/// partitions and as many elements as the tile holds, with no broadcast (zero) stride.
bool coversWholeTile(const isa::AccessPattern& ap, const Buffer& buffer);

/// Where a tile can leave and come back: after op `lastBefore`, before op `firstAfter`.
struct SpillGap {
  std::int64_t lastBefore = 0;
  std::int64_t firstAfter = 0;
  bool store = false;  ///< the tile is dirty: stored to scratch before it leaves
  /// A clean tile whose value is its HBM source's: the op that loaded it, repeated to reload it
  /// (-1: reloaded from the scratch tensor).
  std::int64_t sourceLoad = -1;
};

/// One planned spill: `tile` (a buffer, or a tile reloaded earlier in the pass) leaves across
/// `gap`, and `reload` (a new tile id) holds it from the reload on.
struct PlannedSpill {
  std::int32_t tile = 0;
  std::int32_t reload = 0;
  SpillGap gap;
};

/// The spill choices of one allocation pass over one IR. Tile ids below the IR's buffer count are
/// its buffers; the planner numbers reloaded tiles from there on, in order of planning.
class SpillPlanner {
 public:
  SpillPlanner(const KernelIR& ir, std::int64_t freeDimMaxCount);

  /// The gap of `tile` around doubled times [first, last] when it may spill there: it is used
  /// before and after, never within.
  [[nodiscard]] std::optional<SpillGap> gapAround(std::int32_t tile, std::int64_t first,
                                                  std::int64_t last);
  /// The ops that use `tile` (from its reload on, for a reloaded tile), in order.
  [[nodiscard]] std::vector<std::int64_t> usesOf(std::int32_t tile);
  /// Plans `tile`'s spill across `gap`; returns the reloaded tile's id.
  std::int32_t plan(std::int32_t tile, const SpillGap& gap);
  [[nodiscard]] const std::vector<PlannedSpill>& planned() const { return planned_; }
  /// The buffer whose uses `tile` (a buffer or a reloaded tile) takes.
  [[nodiscard]] std::int32_t originOf(std::int32_t tile) const;

 private:
  struct TileUses {
    std::int32_t origin = 0;  ///< the buffer whose uses it takes
    std::size_t fromUse = 0;  ///< its first use, an index into uses_[origin]
  };
  void index();
  /// Whether an op between `load` (a DMA load) and `reload` writes the HBM tensor it reads.
  [[nodiscard]] bool writtenBetween(std::int64_t load, std::int64_t reload) const;

  const KernelIR& ir_;
  std::int64_t freeDimMaxCount_;
  bool indexed_ = false;
  std::vector<std::vector<std::int64_t>> uses_;    ///< per buffer: ops that touch it, in order
  std::vector<std::vector<std::uint8_t>> writes_;  ///< per buffer and use: the op writes it
  std::vector<std::int64_t> firstWholeWrite_;      ///< per buffer; -1 when none
  std::vector<std::int64_t> sourceLoad_;  ///< per buffer: its only write, a whole load from HBM
  std::vector<std::uint8_t> inLoop_;      ///< per op: strictly inside a dynamic loop
  std::vector<TileUses> reloaded_;        ///< per planned reload
  std::vector<PlannedSpill> planned_;
};

/// What applying spills added to the program.
struct SpillTraffic {
  int spills = 0;
  std::int64_t bytes = 0;  ///< bytes the stores and reloads move
};

/// Rewrites `ir` with the spills `planned` over it: the reloaded tiles and scratch tensors become
/// buffers, the stores and reloads DMA ops, and every use after a reload reads the reloaded tile.
SpillTraffic applySpills(KernelIR& ir, const std::vector<PlannedSpill>& planned);

}  // namespace trn::kernel
