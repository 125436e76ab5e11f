// Timing of the DMA subsystem of the cores of one chip (hardware-trn2.md §9). A transfer is
// issued on one of a core's queues; after the fixed issue-to-start cost, and after a hardware
// descriptor-generation block has built its descriptors (NC-v3: 2 blocks, ~600 ns each), it joins
// its queue. Each queue is FIFO; only its head moves data. A transfer spreads its rows over
// min(rows, 16) of the core's DMA engines, and each engine shares its bandwidth equally among the
// queue heads using it (round-robin across queues, as a fluid). Every contiguous buffer costs a
// fixed overhead equal to the spec's overhead-bound size (256 B on Trn2), so a buffer of that size
// runs at 50 % efficiency, 2 KiB at 89 % and 4 KiB at 94 %: the knee of the spec, not a tuned
// curve. Transfers that touch HBM also share the bandwidth of the HBM stacks their bytes lie in
// with every other transfer there, from any core; a transfer slows down in proportion to the
// most oversubscribed of its stacks. Reaching another pair's stack costs no more than reaching
// one's own (no source gives the cost of the on-chip network; docs/chip.md).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "trn/base/units.h"
#include "trn/isa/instruction_set.h"
#include "trn/spec/chip_spec.h"

namespace trn::core {

/// What a DMA instruction asks the engines to do.
struct TransferShape {
  std::int64_t bytes = 0;     ///< payload: max(bytes read, bytes written)
  std::int64_t hbmBytes = 0;  ///< HBM bytes read plus written
  /// The HBM stacks the bytes lie in: firstStackBytes of them in stacks[0], the rest in
  /// stacks[1]; -1 where no stack is known (then the issuing core's own). A dma_compute whose
  /// tensors lie in more than two stacks counts the others' bytes in stacks[1]. (Two small
  /// entries: the shape is copied into every plan and transfer, and a larger one costs time.)
  std::int64_t firstStackBytes = 0;
  std::array<std::int8_t, 2> stacks{-1, -1};
  std::int64_t descriptors = 0;  ///< contiguous buffers
  std::int64_t rows = 1;         ///< partitions or rows that can go to different engines
  double efficiency = 1.0;       ///< transpose / compute throughput factor (1 for copies)
};

/// The shape of a DMA instruction (dma_copy, dma_transpose, dma_compute); `maxBufferBytes` caps
/// the length of one descriptor. `tensorStacks[t]` is the HBM stack program tensor t lies in
/// (empty: unknown, so every HBM byte is the issuing core's stack's).
TransferShape transferShape(const isa::InstructionBody& body, std::int64_t maxBufferBytes,
                            const spec::Dma& dma, std::span<const std::int32_t> tensorStacks = {});

/// Calls fn(stack, bytes) for each stack `shape`'s HBM bytes lie in; `ownStack` takes the bytes
/// of no entry.
template <typename Fn>
void forEachStackShare(const TransferShape& shape, std::int32_t ownStack, Fn&& fn) {
  std::int64_t rest = shape.hbmBytes;
  if (shape.stacks[0] >= 0 && shape.firstStackBytes > 0) {
    fn(static_cast<std::int32_t>(shape.stacks[0]), shape.firstStackBytes);
    rest -= shape.firstStackBytes;
  }
  if (rest > 0) {
    fn(shape.stacks[1] >= 0 ? static_cast<std::int32_t>(shape.stacks[1]) : ownStack, rest);
  }
}

class DmaModel {
 public:
  /// `physicalCores[slot]` is the physical index of each simulated core (for its HBM stack) and
  /// `deviceOfSlot[slot]` the device (chip) it is on (empty: all on one), so that cores of
  /// different chips share no stack.
  DmaModel(const spec::ChipSpec& chip, std::vector<int> physicalCores,
           std::vector<int> deviceOfSlot = {});

  /// How long `shape` moves data alone on a core's idle engines, in ps (no queueing, no sharing).
  [[nodiscard]] std::int64_t aloneTime(const TransferShape& shape) const;

  /// Issues a transfer at `issued` on `queue` of core `slot`; returns its id. On
  /// collectiveQueue() it is a collective's stream, which the collective cores issue: it joins
  /// the queue at `issued`, without the core's fixed cost or descriptor generation.
  std::uint32_t submit(int slot, int queue, Picoseconds issued, const TransferShape& shape);

  /// The queue of each core kept for the streams of collectives (after the chip's own queues), so
  /// that they share the engines and HBM stacks with the kernel's transfers without queueing
  /// behind them.
  [[nodiscard]] int collectiveQueue() const { return static_cast<int>(queuesPerCore_) - 1; }

  /// The next time the model changes state (a transfer joins its queue or finishes), if any.
  /// Inline: an optional returned out of line goes through the stack and stalls the caller on
  /// store forwarding.
  [[nodiscard]] std::optional<Picoseconds> nextEvent() const {
    const std::int64_t next = nextEventTime();
    return next != kNever ? std::optional(Picoseconds(next)) : std::nullopt;
  }

  /// Processes everything up to and including `now`; appends the ids that finished.
  void advance(Picoseconds now, std::vector<std::uint32_t>& finished);

  struct Transfer {
    int slot = 0;
    int queue = 0;
    Picoseconds issued{};
    Picoseconds queued{};   ///< fixed cost and descriptor generation done
    Picoseconds started{};  ///< became the head of its queue and began moving data
    Picoseconds finished{};
    TransferShape shape;
    double work = 0;  ///< engine-bytes: payload / efficiency + descriptor overheads
    int engines = 1;
    int firstEngine = 0;
    double remaining = 0;  ///< engine-bytes still to move
    double rate = 0;       ///< engine-bytes per second while active
    std::int64_t finishAt = std::numeric_limits<std::int64_t>::max();
    bool active = false;
  };
  [[nodiscard]] const Transfer& transfer(std::uint32_t id) const { return transfers_[id]; }

  /// Frees a finished transfer's id for reuse (after its record has been read).
  void release(std::uint32_t id) { freeIds_.push_back(id); }

  /// Time during which at least one transfer of core `slot` moved data.
  [[nodiscard]] Picoseconds busyTime(int slot) const {
    return Picoseconds(slots_[static_cast<std::size_t>(slot)].busy);
  }

 private:
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
  static constexpr std::uint32_t kNoTransfer = std::numeric_limits<std::uint32_t>::max();

  struct Pending {
    std::int64_t queued;
    std::uint32_t id;
    bool operator<(const Pending& other) const {
      return queued != other.queued ? queued < other.queued : id < other.id;
    }
  };
  /// A FIFO queue as a list linked through nextInQueue_.
  struct QueueEnds {
    std::uint32_t head = kNoTransfer;
    std::uint32_t tail = kNoTransfer;
  };
  /// Per core: transfers moving data and the union of their active times; how the heads share
  /// the engines: those using every engine, and the most heads on one engine among the others
  /// (whose users per engine are in partialUsers_).
  struct SlotActivity {
    int active = 0;
    std::int64_t since = 0;
    std::int64_t busy = 0;
    int everyEngineHeads = 0;
    int busiestPartial = 0;
  };

  [[nodiscard]] std::int64_t nextEventTime() const {
    const std::int64_t pending =
        pendingFront_ < pending_.size() ? pending_[pendingFront_].queued : kNever;
    return std::min(pending, firstFinish_);
  }
  void addPending(Pending pending);
  void popPending();
  /// Engine-bytes `shape` moves: payload over efficiency plus the descriptors' overheads.
  [[nodiscard]] double workOf(const TransferShape& shape) const;
  /// The engines of its core `shape` spreads over.
  [[nodiscard]] int enginesFor(const TransferShape& shape) const;
  [[nodiscard]] std::int32_t ownStack(const Transfer& t) const {
    return stackOfSlot_[static_cast<std::size_t>(t.slot)];
  }
  /// Index into stackDemand_ of stack `stack` of the device of `t`'s core.
  [[nodiscard]] std::size_t stackIndex(const Transfer& t, std::int32_t stack) const {
    return static_cast<std::size_t>(stackBaseOfSlot_[static_cast<std::size_t>(t.slot)] + stack);
  }
  [[nodiscard]] std::size_t queueIndex(const Transfer& t) const {
    return static_cast<std::size_t>(t.slot) * queuesPerCore_ + static_cast<std::size_t>(t.queue);
  }
  void progressTo(std::int64_t t);
  /// Retires the heads finishing at `t`; their successors take their places in active_.
  void finishHeads(std::int64_t t, std::vector<std::uint32_t>& finished);
  /// Appends a transfer to its queue; returns whether it became the head.
  bool join(std::uint32_t id);
  /// Counts a new head's engines / stops counting a finished head's.
  void addHead(const Transfer& head);
  void removeHead(const Transfer& head);
  [[nodiscard]] int* slotEngineUsers(int slot);
  /// Rates of all heads (after the set of heads changed), then their finish times.
  void recomputeRates(std::int64_t t);
  /// Finish times of all heads from their remaining work at `t` and their (unchanged) rates.
  void recomputeFinishTimes(std::int64_t t);

  std::vector<std::int32_t> stackOfSlot_;      ///< the HBM stack of each simulated core
  std::vector<std::int32_t> stackBaseOfSlot_;  ///< its device's first entry of stackDemand_
  int enginesPerCore_;
  std::size_t queuesPerCore_;  ///< the chip's queues and collectiveQueue()
  std::size_t dgeBlocks_;      ///< hardware descriptor-generation blocks per core
  std::int64_t fixedCost_;
  std::int64_t dgeCost_;    ///< per instruction and block
  double engineBandwidth_;  ///< bytes per second
  double stackBandwidth_;   ///< bytes per second per HBM stack
  double overheadBytes_;    ///< per descriptor

  std::vector<Transfer> transfers_;
  std::vector<std::uint32_t> nextInQueue_;  ///< [id] the transfer behind it in its queue
  std::vector<std::uint32_t> freeIds_;
  std::vector<SlotActivity> slots_;
  std::vector<QueueEnds> queues_;      ///< [slot * queuesPerCore_ + queue]
  std::vector<std::int64_t> dgeFree_;  ///< [slot * dgeBlocks_ + block] free time
  std::vector<int> nextEngine_;        ///< [slot] rotation
  /// Transfers waiting to join their queues, sorted by (queued, id) from pendingFront_ on (the
  /// entries before it have joined).
  std::vector<Pending> pending_;
  std::size_t pendingFront_ = 0;
  /// Queue heads (transfers moving data) in queue order: the order of every sum over heads and
  /// of the finished list.
  std::vector<std::uint32_t> active_;
  /// activeQueues_[i] is queueIndex of active_[i], so that join finds its place without reading
  /// the transfers.
  std::vector<std::uint32_t> activeQueues_;
  std::int64_t firstFinish_ = kNever;  ///< over active_
  /// [slot * enginesPerCore_ + engine] heads using the engine, among those not using every one.
  std::vector<int> partialUsers_;
  std::vector<double> stackDemand_;  ///< scratch: HBM bytes/s asked of each stack
  std::int64_t now_ = 0;
};

}  // namespace trn::core
