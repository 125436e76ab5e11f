#include "trn/core/dma_model.h"

#include <algorithm>
#include <variant>

#include "trn/base/check.h"

namespace trn::core {

using isa::AccessPattern;

namespace {

constexpr double kPsPerSecond = 1e12;

/// std::ceil(x) as an integer, for -2^63 < x < 2^63, without a library call.
std::int64_t ceilToInt(double x) {
  const auto truncated = static_cast<std::int64_t>(x);
  return static_cast<double>(truncated) < x ? truncated + 1 : truncated;
}

/// When a transfer with `remaining` engine-bytes at `rate` bytes/s at time `t` finishes; past
/// kMaxSimulatedTime (or at a zero rate) just after it, which the scheduler reports as an overflow.
std::int64_t finishTime(std::int64_t t, double remaining, double rate) {
  const double duration = remaining * kPsPerSecond / rate - 1e-6;
  if (!(duration < static_cast<double>(kMaxSimulatedTime.count() - t))) {
    return kMaxSimulatedTime.count() + 1;
  }
  return t + ceilToInt(duration);
}

/// The elements of an access pattern and how many of them each contiguous run holds.
struct Extent {
  std::int64_t elements;
  std::int64_t run;
};

/// The extent of `ap` placed in `memory`: runs merge dimensions that continue each other, and
/// HBM rows that follow each other.
inline Extent extentOf(const AccessPattern& ap, isa::Memory memory) {
  std::int64_t freeSize = 1;
  std::int64_t run = 1;
  bool contiguous = true;
  for (int d = ap.numDims - 1; d >= 0; --d) {
    const isa::Dim& dim = ap.dims[static_cast<std::size_t>(d)];
    freeSize *= dim.count;
    if (contiguous && dim.count != 1) {
      if (dim.stride == run) {
        run *= dim.count;
      } else {
        contiguous = false;
      }
    }
  }
  if (contiguous && memory == isa::Memory::kHbm && ap.partitionCount > 1 &&
      ap.partitionStride == run) {
    run *= ap.partitionCount;
  }
  return {ap.partitionCount * freeSize, run};
}

/// Adds `bytes` of HBM tensor `tensor` to the stack of `shape` it lies in (TransferShape::stacks).
void addStackBytes(TransferShape& shape, std::int32_t tensor, std::int64_t bytes,
                   std::span<const std::int32_t> tensorStacks) {
  if (tensor < 0 || static_cast<std::size_t>(tensor) >= tensorStacks.size()) {
    return;
  }
  const auto stack = static_cast<std::int8_t>(tensorStacks[static_cast<std::size_t>(tensor)]);
  if (shape.stacks[0] < 0 || shape.stacks[0] == stack) {
    shape.stacks[0] = stack;
    shape.firstStackBytes += bytes;
  } else if (shape.stacks[1] < 0) {
    shape.stacks[1] = stack;
  }
}

/// Accumulates one side of a transfer into `shape` and its bytes into `sideBytes`: the elements
/// of `ap`, in `memory` as `dtype`, in HBM tensor `tensor` when memory is HBM. (Inline, like
/// extentOf: both run for every DMA instruction.)
inline void addSide(TransferShape& shape, const AccessPattern& ap, isa::Memory memory, DType dtype,
                    std::int32_t tensor, std::span<const std::int32_t> tensorStacks,
                    std::int64_t& sideBytes) {
  const Extent extent = extentOf(ap, memory);
  const std::int64_t bytes = extent.elements * byteSize(dtype);
  sideBytes += bytes;
  if (memory == isa::Memory::kHbm) {
    shape.hbmBytes += bytes;
    addStackBytes(shape, tensor, bytes, tensorStacks);
  }
  shape.descriptors = std::max(shape.descriptors, extent.elements / extent.run);
  shape.rows = std::max(shape.rows, ap.partitionCount);
}

void addSide(TransferShape& shape, const AccessPattern& ap,
             std::span<const std::int32_t> tensorStacks, std::int64_t& sideBytes) {
  addSide(shape, ap, ap.memory, ap.dtype, ap.tensor, tensorStacks, sideBytes);
}

}  // namespace

TransferShape transferShape(const isa::InstructionBody& body, std::int64_t maxBufferBytes,
                            const spec::Dma& dma, std::span<const std::int32_t> tensorStacks) {
  TransferShape shape;
  std::int64_t read = 0;
  std::int64_t written = 0;
  if (const auto* copy = std::get_if<isa::DmaCopy>(&body)) {
    if (!copy->srcIndex && !copy->dstIndex) {
      addSide(shape, copy->src, tensorStacks, read);
      addSide(shape, copy->dst, tensorStacks, written);
    } else {
      // The indexed side (a whole table) moves as many rows as the other side holds.
      const AccessPattern& plain = copy->srcIndex ? copy->dst : copy->src;
      addSide(shape, plain, copy->src.memory, copy->src.dtype, copy->src.tensor, tensorStacks,
              read);
      addSide(shape, plain, copy->dst.memory, copy->dst.dtype, copy->dst.tensor, tensorStacks,
              written);
    }
  } else if (const auto* transpose = std::get_if<isa::DmaTranspose>(&body)) {
    addSide(shape, transpose->src, tensorStacks, read);
    addSide(shape, transpose->dst, tensorStacks, written);
    const bool fromHbm = transpose->src.memory == isa::Memory::kHbm;
    shape.efficiency =
        (fromHbm ? dma.transpose.hbmToSbufEfficiency : dma.transpose.sbufToSbufEfficiency)
            .toDouble();
    // The published efficiency is of the whole transpose: the descriptors are those of a copy
    // between the same two layouts.
  } else if (const auto* compute = std::get_if<isa::DmaCompute>(&body)) {
    for (const auto& [source, scale] : compute->sources()) {
      if (*source) {
        addSide(shape, **source, tensorStacks, read);
      }
    }
    addSide(shape, compute->dst, tensorStacks, written);
    shape.efficiency = dma.computeEfficiency.toDouble();
  } else {
    std::visit(
        []<typename I>(const I&) {
          TRN_UNREACHABLE() << "not a DMA instruction: " << I::kInfo.mnemonic;
        },
        body);
  }
  shape.bytes = std::max(read, written);
  if (maxBufferBytes > 0) {
    shape.descriptors =
        std::max(shape.descriptors, (shape.bytes + maxBufferBytes - 1) / maxBufferBytes);
  }
  shape.descriptors = std::max<std::int64_t>(shape.descriptors, 1);
  return shape;
}

DmaModel::DmaModel(const spec::ChipSpec& chip, std::vector<int> physicalCores,
                   std::vector<int> deviceOfSlot)
    : enginesPerCore_(static_cast<int>(chip.core.dma.enginesPerCore)),
      queuesPerCore_(static_cast<std::size_t>(chip.core.dma.queuesPerEngine) + 1),
      dgeBlocks_(static_cast<std::size_t>(chip.core.dma.dge.hardwareBlocks)),
      fixedCost_(chip.core.dma.fixedCost.count()),
      dgeCost_(chip.core.dma.dge.instructionCost.count()),
      engineBandwidth_(static_cast<double>(chip.core.dma.engineBandwidth.count())),
      stackBandwidth_(static_cast<double>(chip.hbm.bandwidth.count()) /
                      static_cast<double>(std::max<std::int64_t>(chip.hbm.stacks, 1))),
      overheadBytes_(static_cast<double>(chip.core.dma.efficiency.overheadBoundBelow.count())) {
  const auto stacks = static_cast<std::int32_t>(std::max<std::int64_t>(chip.hbm.stacks, 1));
  int devices = 1;
  for (std::size_t slot = 0; slot < physicalCores.size(); ++slot) {
    stackOfSlot_.push_back(chip.hbm.stackOf(physicalCores[slot]));
    const int device = slot < deviceOfSlot.size() ? deviceOfSlot[slot] : 0;
    stackBaseOfSlot_.push_back(device * stacks);
    devices = std::max(devices, device + 1);
  }
  const std::size_t slots = physicalCores.size();
  queues_.assign(slots * queuesPerCore_, QueueEnds{});
  dgeFree_.assign(slots * dgeBlocks_, 0);
  nextEngine_.assign(slots, 0);
  slots_.assign(slots, SlotActivity{});
  partialUsers_.assign(slots * static_cast<std::size_t>(enginesPerCore_), 0);
  stackDemand_.assign(static_cast<std::size_t>(devices) * static_cast<std::size_t>(stacks), 0.0);
}

double DmaModel::workOf(const TransferShape& shape) const {
  return static_cast<double>(shape.bytes) / shape.efficiency +
         static_cast<double>(shape.descriptors) * overheadBytes_;
}

int DmaModel::enginesFor(const TransferShape& shape) const {
  return static_cast<int>(std::min<std::int64_t>(
      {static_cast<std::int64_t>(enginesPerCore_), shape.rows, shape.descriptors}));
}

std::int64_t DmaModel::aloneTime(const TransferShape& shape) const {
  return finishTime(0, workOf(shape), static_cast<double>(enginesFor(shape)) * engineBandwidth_);
}

std::uint32_t DmaModel::submit(int slot, int queue, Picoseconds issued,
                               const TransferShape& shape) {
  const double work = workOf(shape);
  const int engines = enginesFor(shape);
  int& nextEngine = nextEngine_[static_cast<std::size_t>(slot)];
  const int firstEngine = nextEngine;
  nextEngine += engines;
  if (nextEngine >= enginesPerCore_) {
    nextEngine -= enginesPerCore_;
  }
  const bool collectiveStream = queue == collectiveQueue();
  std::int64_t queued = issued.count() + (collectiveStream ? 0 : fixedCost_);
  if (dgeBlocks_ > 0 && !collectiveStream) {
    // The block that frees first builds the descriptors.
    std::int64_t* blocks = dgeFree_.data() + static_cast<std::size_t>(slot) * dgeBlocks_;
    std::int64_t* block = std::min_element(blocks, blocks + dgeBlocks_);
    *block = std::max(*block, issued.count()) + dgeCost_;
    queued = std::max(queued, *block);
  }
  std::uint32_t id;
  if (freeIds_.empty()) {
    id = static_cast<std::uint32_t>(transfers_.size());
    transfers_.emplace_back();
    nextInQueue_.push_back(kNoTransfer);
  } else {
    id = freeIds_.back();
    freeIds_.pop_back();
  }
  // Written in place, field by field: a temporary built on the stack and copied over stalls on
  // store forwarding (narrow stores read back by wide loads), which cost more than the rest of
  // this function.
  Transfer& t = transfers_[id];
  t = Transfer{};
  t.slot = slot;
  t.queue = queue;
  t.issued = issued;
  t.queued = Picoseconds(queued);
  t.shape = shape;
  t.work = work;
  t.engines = engines;
  t.firstEngine = firstEngine;
  t.remaining = work;
  addPending({queued, id});
  return id;
}

void DmaModel::addPending(Pending pending) {
  // Transfers mostly join in the order they are issued: insert from the back.
  pending_.push_back(pending);
  std::size_t at = pending_.size() - 1;
  while (at > pendingFront_ && pending < pending_[at - 1]) {
    pending_[at] = pending_[at - 1];
    --at;
  }
  pending_[at] = pending;
}

void DmaModel::popPending() {
  ++pendingFront_;
  if (pendingFront_ == pending_.size()) {
    pending_.clear();
    pendingFront_ = 0;
  } else if (pendingFront_ >= 64 && 2 * pendingFront_ >= pending_.size()) {
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(pendingFront_));
    pendingFront_ = 0;
  }
}

void DmaModel::progressTo(std::int64_t t) {
  if (t == now_) {
    return;  // nothing moves (and x - rate * 0 == x)
  }
  const double seconds = static_cast<double>(t - now_) / kPsPerSecond;
  for (const std::uint32_t id : active_) {
    Transfer& tr = transfers_[id];
    tr.remaining = std::max(0.0, tr.remaining - tr.rate * seconds);
  }
  now_ = t;
}

void DmaModel::finishHeads(std::int64_t t, std::vector<std::uint32_t>& finished) {
  std::size_t kept = 0;
  for (std::uint32_t id : active_) {
    Transfer& tr = transfers_[id];
    if (tr.finishAt == t) {
      tr.active = false;
      tr.remaining = 0;
      tr.finished = Picoseconds(t);
      SlotActivity& slot = slots_[static_cast<std::size_t>(tr.slot)];
      if (--slot.active == 0) {
        slot.busy += t - slot.since;
      }
      finished.push_back(id);
      removeHead(tr);
      QueueEnds& queue = queues_[queueIndex(tr)];
      queue.head = nextInQueue_[id];
      if (queue.head == kNoTransfer) {
        queue.tail = kNoTransfer;
        continue;
      }
      id = queue.head;
      addHead(transfers_[id]);
    }
    activeQueues_[kept] = static_cast<std::uint32_t>(queueIndex(transfers_[id]));
    active_[kept++] = id;
  }
  active_.resize(kept);
  activeQueues_.resize(kept);
}

bool DmaModel::join(std::uint32_t id) {
  const std::size_t index = queueIndex(transfers_[id]);
  QueueEnds& queue = queues_[index];
  nextInQueue_[id] = kNoTransfer;
  if (queue.tail != kNoTransfer) {
    nextInQueue_[queue.tail] = id;
    queue.tail = id;
    return false;
  }
  queue.head = id;
  queue.tail = id;
  addHead(transfers_[id]);
  // Insert in queue order.
  active_.push_back(id);
  activeQueues_.push_back(static_cast<std::uint32_t>(index));
  std::size_t at = active_.size() - 1;
  while (at > 0 && activeQueues_[at - 1] > index) {
    active_[at] = active_[at - 1];
    activeQueues_[at] = activeQueues_[at - 1];
    --at;
  }
  active_[at] = id;
  activeQueues_[at] = static_cast<std::uint32_t>(index);
  return true;
}

int* DmaModel::slotEngineUsers(int slot) {
  return partialUsers_.data() +
         static_cast<std::size_t>(slot) * static_cast<std::size_t>(enginesPerCore_);
}

void DmaModel::addHead(const Transfer& head) {
  SlotActivity& slot = slots_[static_cast<std::size_t>(head.slot)];
  if (head.engines == enginesPerCore_) {
    ++slot.everyEngineHeads;
    return;
  }
  int* users = slotEngineUsers(head.slot);
  for (int k = 0, engine = head.firstEngine; k < head.engines; ++k) {
    slot.busiestPartial = std::max(slot.busiestPartial, ++users[engine]);
    if (++engine == enginesPerCore_) {
      engine = 0;
    }
  }
}

void DmaModel::removeHead(const Transfer& head) {
  SlotActivity& slot = slots_[static_cast<std::size_t>(head.slot)];
  if (head.engines == enginesPerCore_) {
    --slot.everyEngineHeads;
    return;
  }
  int* users = slotEngineUsers(head.slot);
  for (int k = 0, engine = head.firstEngine; k < head.engines; ++k) {
    --users[engine];
    if (++engine == enginesPerCore_) {
      engine = 0;
    }
  }
  slot.busiestPartial = *std::max_element(users, users + enginesPerCore_);
}

void DmaModel::recomputeRates(std::int64_t t) {
  std::vector<double>& stackDemand = stackDemand_;
  for (const std::uint32_t id : active_) {
    const Transfer& tr = transfers_[id];
    forEachStackShare(tr.shape, ownStack(tr), [&](std::int32_t stack, std::int64_t) {
      stackDemand[stackIndex(tr, stack)] = 0;
    });
  }
  // Engine sharing: each engine splits its bandwidth among the heads that use it, and a head
  // moves at the rate of its most contended engine. Heads that use every engine of their core
  // (the common case) are counted once per core (addHead, removeHead).
  for (const std::uint32_t id : active_) {
    Transfer& tr = transfers_[id];
    const SlotActivity& slot = slots_[static_cast<std::size_t>(tr.slot)];
    int busiest = slot.busiestPartial;
    if (tr.engines != enginesPerCore_) {
      const int* users = slotEngineUsers(tr.slot);
      busiest = 0;
      for (int k = 0, engine = tr.firstEngine; k < tr.engines; ++k) {
        busiest = std::max(busiest, users[engine]);
        if (++engine == enginesPerCore_) {
          engine = 0;
        }
      }
    }
    busiest += slot.everyEngineHeads;
    tr.rate = static_cast<double>(tr.engines) * engineBandwidth_ / static_cast<double>(busiest);
    forEachStackShare(tr.shape, ownStack(tr), [&](std::int32_t stack, std::int64_t bytes) {
      stackDemand[stackIndex(tr, stack)] += tr.rate * static_cast<double>(bytes) / tr.work;
    });
  }
  // HBM stack sharing: scale down the HBM users of an oversubscribed stack in proportion (by
  // the most oversubscribed of a transfer's stacks).
  firstFinish_ = kNever;
  for (const std::uint32_t id : active_) {
    Transfer& tr = transfers_[id];
    double demand = 0;
    forEachStackShare(tr.shape, ownStack(tr), [&](std::int32_t stack, std::int64_t) {
      demand = std::max(demand, stackDemand[stackIndex(tr, stack)]);
    });
    if (demand > stackBandwidth_) {
      tr.rate *= stackBandwidth_ / demand;
    }
    if (!tr.active) {
      tr.active = true;
      tr.started = Picoseconds(t);
      SlotActivity& slot = slots_[static_cast<std::size_t>(tr.slot)];
      if (slot.active++ == 0) {
        slot.since = t;
      }
    }
    tr.finishAt = finishTime(t, tr.remaining, tr.rate);
    firstFinish_ = std::min(firstFinish_, tr.finishAt);
  }
}

void DmaModel::recomputeFinishTimes(std::int64_t t) {
  // The same arithmetic as recomputeRates from the same remaining work, so a finish time is the
  // one a full recomputation would give.
  firstFinish_ = kNever;
  for (const std::uint32_t id : active_) {
    Transfer& tr = transfers_[id];
    tr.finishAt = finishTime(t, tr.remaining, tr.rate);
    firstFinish_ = std::min(firstFinish_, tr.finishAt);
  }
}

void DmaModel::advance(Picoseconds now, std::vector<std::uint32_t>& finished) {
  while (true) {
    const std::int64_t t = nextEventTime();
    if (t == kNever || t > now.count()) {
      break;
    }
    progressTo(t);
    bool headsChanged = false;
    if (firstFinish_ == t) {
      finishHeads(t, finished);
      headsChanged = true;
    }
    bool joined = false;
    while (pendingFront_ < pending_.size() && pending_[pendingFront_].queued <= t) {
      headsChanged |= join(pending_[pendingFront_].id);
      popPending();
      joined = true;
    }
    // A transfer joining behind a head changes no rate (they depend only on the set of heads),
    // but the finish times are still recomputed from the progressed remaining work: rounding
    // can make them differ by a picosecond, and the model's results include that.
    if (headsChanged) {
      recomputeRates(t);
    } else if (joined) {
      recomputeFinishTimes(t);
    }
  }
  progressTo(std::max(now.count(), now_));
}

}  // namespace trn::core
