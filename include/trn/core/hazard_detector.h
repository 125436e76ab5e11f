// Race detection for one NeuronCore by vector clocks (happens-before). Agents are the five
// sequencers and the DMA queues. Program order orders an agent's own accesses; a semaphore
// update carries the updater's clock and a wait that holds joins the clocks of the updates the
// semaphore has received; a DMA transfer inherits the issuing instruction's clock. Two accesses
// to overlapping bytes from different agents, at least one a write, neither happening before the
// other, are a race (architecture.md "Execution semantics").
//
// A filter over coarse memory cells (SBUF/PSUM: 128 partitions x a column granule; HBM: a band of
// rows x a column granule of one tensor) keeps, per cell and agent, the epoch of the agent's last
// write and last access there, for the agents whose accesses there may still race (a few, in one
// cache line). An agent's recorded accesses can conflict with a new access only
// if one of the cells the new access covers holds an epoch of that agent the new access has not
// seen, so only those agents' histories are scanned; the exact test and the message are those of
// the scan. The cells an operand covers are found once, when its instruction is planned.
//
// Each agent keeps its accesses in epoch order, so the accesses of agent B that are concurrent
// with an access whose clock is V are exactly B's entries with epoch > V[B]: a suffix. Entries
// older than every live agent's view of B can never race again and are pruned. Joining every
// update a semaphore has received (not only those needed to reach the awaited value) can hide a
// race that another interleaving would expose, but never reports a false one.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "trn/base/status.h"
#include "trn/isa/core_limits.h"
#include "trn/isa/engine.h"
#include "trn/isa/footprint.h"
#include "trn/isa/program.h"

namespace trn::core {

using isa::Footprint;

/// Agents: engines 0..4, then DMA queues. The last slot of every clock is no agent: it counts the
/// core barriers the clock has seen complete (cross_core_races.h), and joins like the others.
inline constexpr int kMaxAgents = 24;
inline constexpr int kBarrierSlot = kMaxAgents - 1;
using VectorClock = std::array<std::uint32_t, kMaxAgents>;

/// An operand of an instruction: whether the instruction writes it, and the bounding box of its
/// footprint (as in isa::boxesOverlap), which rules out most pairs before the exact test. The
/// operand's access pattern is not kept (the scheduler decodes instructions into storage it
/// reuses): the exact test, which few accesses reach, decodes it again by `ordinal`
/// (operandPattern).
struct Operand {
  isa::ByteInterval bytes;
  std::int32_t tensor = -1;
  std::int32_t firstPartition = 0;
  std::int32_t endPartition = 1;
  isa::Memory memory = isa::Memory::kSbuf;
  bool write = false;
  /// Its place among the instruction's operands, in the order of isa::forEachAccessPattern.
  std::uint8_t ordinal = 0;
  /// False for a read of an HBM tensor the program never writes: no access of this core can race
  /// with it, so it has no cells and no history entry (cross_core_races.h still checks it).
  bool checked = true;
};

/// Consecutive filter cells an operand covers (one band row of its grid), and how it accesses them.
struct CellRun {
  std::uint32_t first = 0;
  std::uint16_t count = 0;
  bool write = false;
};

/// The data operands of instructions prepared for the race check (HazardDetector::prepare), and
/// per operand the filter cells it covers.
struct PreparedAccesses {
  std::vector<Operand> operands;
  std::vector<CellRun> cellRuns;

  void clear() {
    operands.clear();
    cellRuns.clear();
  }
};

/// One instruction's part of a PreparedAccesses.
struct AccessSpan {
  std::uint32_t firstOperand = 0;
  std::uint32_t operandCount = 0;
  std::uint32_t firstCellRun = 0;
  std::uint32_t cellRunCount = 0;
};

/// Identifies the instruction behind an access, for messages.
struct AccessOwner {
  isa::Engine engine = isa::Engine::kPe;
  std::uint32_t index = 0;
};

/// The most operands an instruction may have for race detection (Operand::ordinal).
inline constexpr std::size_t kMaxOperands = 64;

/// The access pattern of operand `ordinal` of `body` (in the order of isa::forEachAccessPattern).
const isa::AccessPattern& operandPattern(const isa::InstructionBody& body, std::uint8_t ordinal);

/// The access pattern of operand `ordinal` of instruction `owner` of `program`, decoded again
/// (for the exact test of an access whose instruction the scheduler no longer holds).
isa::AccessPattern operandPattern(const isa::Program& program, AccessOwner owner,
                                  std::uint8_t ordinal);

class HazardDetector {
 public:
  /// `describe` renders an instruction ("pe#3 'nc_matmul ...' at kernel.cpp:12") and
  /// `tensorName` an HBM tensor, for race messages.
  /// `limits` gives the semaphores, DMA queues and on-chip memory sizes; `program` (which
  /// outlives the detector) its HBM tensors and, for the exact test, the operands of earlier
  /// accesses. `written` says, per tensor, whether the program writes it (isa::ProgramUse).
  HazardDetector(const isa::CoreLimits& limits, const isa::Program& program,
                 const std::vector<bool>& written, std::function<std::string(AccessOwner)> describe,
                 std::function<std::string(std::int32_t)> tensorName);

  [[nodiscard]] static int engineAgent(isa::Engine engine) { return static_cast<int>(engine); }
  [[nodiscard]] static int queueAgent(int queue) { return isa::kNumEngines + queue; }

  /// The clock of `agent`'s current instruction.
  [[nodiscard]] const VectorClock& clock(int agent) const { return clocks_[agent]; }

  /// `agent` passed a wait on `semaphore`.
  void acquire(int agent, int semaphore);
  /// `agent` now also happens after `other` (a DMA transfer after its issuing instruction).
  void join(int agent, const VectorClock& other);
  /// A semaphore update made by an instruction whose clock was `updater`.
  void release(int semaphore, const VectorClock& updater);

  /// Appends the data operands `body` reads and writes to `out`, in the order of
  /// isa::operandFootprints, with their cells; returns where they are.
  AccessSpan prepare(const isa::InstructionBody& body, PreparedAccesses& out);

  /// Checks the accesses of `agent`'s current instruction (`span` of `prepared`) against every
  /// concurrent access and records them. Returns the first race found.
  Status access(int agent, AccessOwner owner, const PreparedAccesses& prepared, AccessSpan span);

  /// Ends `agent`'s current instruction (program order: the next one happens after it).
  void tick(int agent) { ++clocks_[agent][static_cast<std::size_t>(agent)]; }

  /// `engine` has no further instructions (its view no longer holds history back).
  void engineFinished(isa::Engine engine) { finished_[static_cast<std::size_t>(engine)] = true; }

 private:
  /// One operand of a recorded access: its bounding box, and where its pattern is (40 bytes).
  struct Entry {
    isa::ByteInterval bytes;
    std::uint32_t epoch = 0;
    std::uint32_t index = 0;  ///< of the instruction, in its engine's stream
    std::int32_t tensor = -1;
    std::int16_t firstPartition = 0;
    std::int16_t endPartition = 1;
    isa::Engine engine = isa::Engine::kPe;
    isa::Memory memory = isa::Memory::kSbuf;
    bool write = false;
    std::uint8_t ordinal = 0;

    [[nodiscard]] AccessOwner owner() const { return {engine, index}; }
  };
  /// An agent's recorded operands in epoch order. Pruning moves the live entries (a few) to the
  /// front, so that the entries recorded between two prunes reuse the same few cache lines
  /// instead of cycling through a larger buffer.
  class History {
   public:
    [[nodiscard]] std::size_t size() const { return size_; }
    [[nodiscard]] const Entry& at(std::size_t i) const { return entries_[i]; }
    /// A new last entry, for the caller to fill.
    Entry& push() {
      if (size_ == entries_.size()) {
        grow();
      }
      return entries_[size_++];
    }
    /// Drops the first `count` entries; the others move to the front.
    void dropFirst(std::size_t count);

   private:
    void grow();

    std::vector<Entry> entries_;
    std::size_t size_ = 0;  ///< entries in use, at the front of entries_
  };

  /// The cells of one memory region (SBUF, PSUM or one HBM tensor): `bands` bands of
  /// 2^bandShift rows (partitions, or tensor rows of rowBytes bytes) times `granules` column
  /// granules of 2^granuleShift bytes. Its band rows are numbered from `firstBand`.
  struct Grid {
    std::int64_t rows = 1;
    std::int64_t rowBytes = 0;
    int bandShift = 0;
    int granuleShift = 0;
    std::int32_t bands = 1;
    std::int32_t granules = 1;
    std::uint32_t firstBand = 0;
  };
  /// The accesses recorded in one cell: per agent with an access there, the epochs of its last
  /// write and last access (0: none), in one cache line for up to kSlots agents. A slot whose
  /// access every unfinished engine has seen is freed when a full cell needs it; a cell whose
  /// kSlots slots are all live and needs another moves to a dense pair of clocks (`dense`, an
  /// index into dense_) and stays there.
  struct alignas(64) Cell {
    static constexpr std::uint8_t kSlots = 6;
    static constexpr std::uint8_t kDense = 0xff;  ///< `count` of a cell kept in dense_
    std::array<std::uint32_t, kSlots> lastWrite{};
    std::array<std::uint32_t, kSlots> lastAccess{};
    std::array<std::uint8_t, kSlots> agents{};
    std::uint8_t count = 0;  ///< slots used, or kDense
    std::uint32_t dense = 0;
  };
  static_assert(sizeof(Cell) == 64);
  /// The epochs of a cell with more live agents than its slots hold: per agent, of its last write
  /// and of its last access there.
  struct DenseCell {
    VectorClock written{};
    VectorClock accessed{};
  };

  void addGrid(std::int64_t rows, std::int64_t rowBytes, int bandShift, int maxGranules);
  /// Appends `ap` (written or read) to `out`: its bounding box and its cells.
  void prepareOperand(const isa::AccessPattern& ap, bool write, std::uint8_t ordinal,
                      PreparedAccesses& out);
  /// Gives band row `band` its cells; returns the index of the first.
  std::uint32_t allocateRow(std::uint32_t band);
  /// The agents with an access in the cells of `runs` that `now` has not seen and that may conflict
  /// with `agent`'s access there; records that access at `epoch` in those cells.
  std::uint32_t filterAndRecord(std::span<const CellRun> runs, int agent, std::uint32_t epoch,
                                const VectorClock& now);
  /// filterAndRecord for one cell.
  std::uint32_t filterAndRecordCell(Cell& cell, int agent, std::uint32_t epoch, bool write,
                                    const VectorClock& now);
  /// Moves `cell`, whose slots are all live and none is `agent`'s, to a pair of dense clocks, and
  /// records `agent`'s access there (out of line: it is rare, and its clocks would otherwise
  /// give filterAndRecordCell a large stack frame).
  [[gnu::noinline]] void moveToDense(Cell& cell, int agent, std::uint32_t epoch, bool write);
  /// Frees the slots of `cell` that every unfinished engine has seen (as of the last prune) and
  /// zeroes them; returns whether a slot is free.
  [[gnu::noinline]] bool reclaimDeadSlots(Cell& cell) const;
  /// The race between one of `operands` and the newest access in `other`'s history that `now`
  /// has not seen and conflicts with it; OK when there is none.
  [[nodiscard]] Status scan(int other, const VectorClock& now, AccessOwner owner,
                            std::span<const Operand> operands);
  /// The footprint of `operands[i]` of instruction `owner`, computed on first use for the access
  /// being checked (the instruction decoded again into currentBody_).
  const Footprint& footprint(AccessOwner owner, std::span<const Operand> operands, std::size_t i);
  /// The footprint of a recorded operand (its pattern decoded into earlierPattern_).
  Footprint recordedFootprint(const Entry& entry);
  void prune();

  int agents_;
  std::vector<Grid> grids_;  ///< SBUF, PSUM, each HBM tensor, then one cell for unknown tensors
  std::vector<std::uint8_t> readOnly_;  ///< per tensor: the program never writes it
  /// Per band row of every grid: the index into cells_ of its first cell (0: untouched) and its
  /// number of cells. A row's cells are allocated together, when an operand first covers it.
  std::vector<std::uint32_t> rowCell_;
  std::vector<std::uint16_t> rowCells_;
  std::vector<Cell> cells_;  ///< cells_[0] is unused
  std::vector<DenseCell> dense_;
  const isa::Program& program_;
  /// Of the access being checked, when a scan needs them: footprints_[i] is computed when bit i
  /// of footprintsComputed_ is set.
  std::vector<Footprint> footprints_ = std::vector<Footprint>(kMaxOperands);
  std::uint64_t footprintsComputed_ = 0;
  isa::InstructionBody currentBody_;   ///< the access being checked, once a footprint needs it
  isa::AccessPattern earlierPattern_;  ///< of the recorded operand being tested
  std::vector<VectorClock> clocks_;
  std::vector<VectorClock> semaphoreClocks_;
  std::vector<History> history_;  ///< per agent
  std::array<bool, isa::kNumEngines> finished_{};
  /// Per agent, an epoch every unfinished engine has seen (as of the last prune): accesses at or
  /// before it can never race again.
  VectorClock dead_{};
  std::uint64_t sincePrune_ = 0;
  std::function<std::string(AccessOwner)> describe_;
  std::function<std::string(std::int32_t)> tensorName_;
};

}  // namespace trn::core
