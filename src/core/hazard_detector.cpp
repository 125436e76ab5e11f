#include "trn/core/hazard_detector.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <limits>
#include <variant>

#include "trn/base/check.h"
#include "trn/isa/field.h"

namespace trn::core {

using isa::describeRange;
using isa::firstOverlap;

namespace {

constexpr std::uint64_t kPruneInterval = 256;
/// Cell geometry: bands of 64 partitions, or of at least 32 HBM rows (at most 16 bands per tensor);
/// column granules of at least 512 bytes (at most 512 per partition, 64 per HBM row).
constexpr int kPartitionBandShift = 6;
constexpr int kMinHbmBandShift = 5;
constexpr std::int64_t kMaxHbmBands = 16;
constexpr int kMinGranuleShift = 9;
constexpr int kMaxOnChipGranules = 512;
constexpr int kMaxHbmGranules = 64;

void joinInto(VectorClock& into, const VectorClock& other) {
  for (std::size_t i = 0; i < into.size(); ++i) {
    into[i] = std::max(into[i], other[i]);
  }
}

/// The agents with an epoch in `epochs` that `now` has not seen. A quick vectorisable test
/// first, since most cells hold none.
std::uint32_t unseen(const VectorClock& epochs, const VectorClock& now) {
  std::uint32_t any = 0;
  for (std::size_t a = 0; a < kMaxAgents; ++a) {
    any |= static_cast<std::uint32_t>(epochs[a] > now[a]);
  }
  if (any == 0) {
    return 0;
  }
  std::uint32_t agents = 0;
  for (std::size_t a = 0; a < kMaxAgents; ++a) {
    agents |= static_cast<std::uint32_t>(epochs[a] > now[a]) << a;
  }
  return agents;
}

}  // namespace

bool HazardDetector::Frontier::seenBy(const VectorClock& now) const {
  if (size == kUnknown) {
    return false;
  }
  for (std::uint8_t i = 0; i < size; ++i) {
    if (epochs[i] > now[agents[i]]) {
      return false;
    }
  }
  return true;
}

void HazardDetector::Frontier::add(int agent, std::uint32_t epoch, const VectorClock& now,
                                   bool seenAll) {
  std::uint8_t kept = 0;
  if (!seenAll) {
    if (size == kUnknown) {
      return;
    }
    // Keep the accesses `now` has not seen; the others happen before the new one.
    for (std::uint8_t i = 0; i < size; ++i) {
      if (epochs[i] > now[agents[i]]) {
        epochs[kept] = epochs[i];
        agents[kept] = agents[i];
        ++kept;
      }
    }
    if (kept == kSize) {
      size = kUnknown;
      return;
    }
  }
  epochs[kept] = epoch;
  agents[kept] = static_cast<std::uint8_t>(agent);
  size = static_cast<std::uint8_t>(kept + 1);
}

HazardDetector::HazardDetector(const isa::CoreLimits& limits,
                               std::span<const isa::TensorDecl> tensors,
                               std::function<std::string(AccessOwner)> describe,
                               std::function<std::string(std::int32_t)> tensorName)
    : agents_(isa::kNumEngines + limits.dmaQueues),
      clocks_(static_cast<std::size_t>(agents_), VectorClock{}),
      semaphoreClocks_(static_cast<std::size_t>(limits.semaphores), VectorClock{}),
      history_(static_cast<std::size_t>(agents_)),
      describe_(std::move(describe)),
      tensorName_(std::move(tensorName)) {
  TRN_CHECK(agents_ <= kMaxAgents)
      << "too many DMA queues for race detection: " << limits.dmaQueues;
  for (int a = 0; a < agents_; ++a) {
    clocks_[static_cast<std::size_t>(a)][static_cast<std::size_t>(a)] = 1;
  }
  addGrid(limits.partitions, limits.sbufPartitionBytes, kPartitionBandShift, kMaxOnChipGranules);
  addGrid(limits.partitions, limits.psumPartitionBytes(), kPartitionBandShift, kMaxOnChipGranules);
  for (const isa::TensorDecl& tensor : tensors) {
    const std::int64_t bytes = std::max<std::int64_t>(1, tensor.byteSize());
    const std::int64_t rowBytes =
        tensor.shape.empty()
            ? bytes
            : std::clamp<std::int64_t>(tensor.shape.back() * byteSize(tensor.dtype), 1, bytes);
    const std::int64_t rows = (bytes + rowBytes - 1) / rowBytes;
    int bandShift = kMinHbmBandShift;
    while ((rows >> bandShift) >= kMaxHbmBands) {
      ++bandShift;
    }
    addGrid(rows, rowBytes, bandShift, kMaxHbmGranules);
  }
  addGrid(1, 1, 0, 1);  // HBM accesses of an undeclared tensor
  cells_.resize(1);
}

void HazardDetector::addGrid(std::int64_t rows, std::int64_t rowBytes, int bandShift,
                             int maxGranules) {
  Grid grid;
  grid.rows = std::max<std::int64_t>(1, rows);
  grid.rowBytes = std::max<std::int64_t>(1, rowBytes);
  grid.bandShift = bandShift;
  grid.granuleShift = kMinGranuleShift;
  while ((grid.rowBytes - 1) >> grid.granuleShift >= maxGranules) {
    ++grid.granuleShift;
  }
  grid.bands = static_cast<std::int32_t>(((grid.rows - 1) >> bandShift) + 1);
  grid.granules = static_cast<std::int32_t>(((grid.rowBytes - 1) >> grid.granuleShift) + 1);
  grid.firstCell = static_cast<std::uint32_t>(cellSlot_.size());
  cellSlot_.resize(cellSlot_.size() + static_cast<std::size_t>(grid.bands) *
                                          static_cast<std::size_t>(grid.granules),
                   0);
  grids_.push_back(grid);
}

void collectOperands(const isa::InstructionBody& body, std::vector<Operand>& out) {
  out.clear();
  std::visit(
      [&](const auto& instr) {
        isa::forEachAccessPattern(
            instr, [&](std::string_view, isa::FieldRole role, const isa::AccessPattern& ap) {
              out.push_back(Operand{&ap, role == isa::FieldRole::kOutput});
            });
      },
      body);
}

HazardDetector::CellRange HazardDetector::cellsOf(const Operand& operand) const {
  const isa::AccessPattern& ap = *operand.pattern;
  const Grid* grid = nullptr;
  std::int64_t rowLow = 0;
  std::int64_t rowHigh = 0;
  std::int64_t columnLow = 0;
  std::int64_t columnHigh = 0;  // inclusive
  if (ap.memory != isa::Memory::kHbm) {
    grid = &grids_[ap.memory == isa::Memory::kSbuf ? 0 : 1];
    const isa::AccessPattern::ByteRange bytes = ap.byteRange();
    rowLow = ap.partitionStart;
    rowHigh = ap.partitionStart + ap.partitionCount - 1;
    columnLow = bytes.begin;
    columnHigh = bytes.end - 1;
  } else {
    const Footprint f = Footprint::of(ap, operand.write);
    const bool declared = f.tensor >= 0 && static_cast<std::size_t>(f.tensor) + 3 < grids_.size();
    grid = &grids_[declared ? static_cast<std::size_t>(f.tensor) + 2 : grids_.size() - 1];
    const std::int64_t rowBytes = grid->rowBytes;
    const isa::RowShape& r = f.rows;
    if (r.rows > 0 && r.first >= 0 && (r.rows == 1 || r.stride % rowBytes == 0) &&
        r.first % rowBytes + r.length <= rowBytes) {
      // Runs within rows, one every stride / rowBytes rows: their columns in those rows.
      rowLow = r.first / rowBytes;
      rowHigh = (r.first + (r.rows - 1) * r.stride) / rowBytes;
      columnLow = r.first % rowBytes;
      columnHigh = columnLow + r.length - 1;
    } else if (f.bytes.begin >= 0 && f.bytes.begin < f.bytes.end) {
      rowLow = f.bytes.begin / rowBytes;
      rowHigh = (f.bytes.end - 1) / rowBytes;
      columnLow = rowLow == rowHigh ? f.bytes.begin % rowBytes : 0;
      columnHigh = rowLow == rowHigh ? (f.bytes.end - 1) % rowBytes : rowBytes - 1;
    } else {
      rowLow = -1;  // an empty or negative range: every cell
    }
  }
  const bool everyRow = rowLow < 0 || rowLow > rowHigh || rowHigh >= grid->rows;
  const bool everyColumn = columnLow < 0 || columnLow > columnHigh || columnHigh >= grid->rowBytes;
  CellRange range{grid, 0, grid->bands - 1, 0, grid->granules - 1};
  if (!everyRow) {
    range.bandLow = static_cast<std::int32_t>(rowLow >> grid->bandShift);
    range.bandHigh = static_cast<std::int32_t>(rowHigh >> grid->bandShift);
  }
  if (!everyColumn) {
    range.granuleLow = static_cast<std::int32_t>(columnLow >> grid->granuleShift);
    range.granuleHigh = static_cast<std::int32_t>(columnHigh >> grid->granuleShift);
  }
  return range;
}

std::uint32_t HazardDetector::filterAndRecord(const Operand& operand, int agent,
                                              std::uint32_t epoch, const VectorClock& now) {
  const CellRange range = cellsOf(operand);
  const auto self = static_cast<std::size_t>(agent);
  std::uint32_t suspects = 0;
  for (std::int32_t band = range.bandLow; band <= range.bandHigh; ++band) {
    const std::uint32_t row =
        range.grid->firstCell +
        static_cast<std::uint32_t>(band) * static_cast<std::uint32_t>(range.grid->granules);
    for (std::int32_t g = range.granuleLow; g <= range.granuleHigh; ++g) {
      std::uint32_t& slot = cellSlot_[row + static_cast<std::uint32_t>(g)];
      if (slot == 0) {
        slot = static_cast<std::uint32_t>(cells_.size());
        cells_.emplace_back();
      }
      Cell& cell = cells_[slot];
      // A write conflicts with every access, a read only with writes.
      if (operand.write) {
        const bool seenAccesses = cell.accesses.seenBy(now);
        const std::uint32_t unseenAccesses = seenAccesses ? 0 : unseen(cell.accessed, now);
        suspects |= unseenAccesses;
        const bool seenAll = unseenAccesses == 0;
        cell.writes.add(agent, epoch, now, seenAll || cell.writes.seenBy(now));
        cell.accesses.add(agent, epoch, now, seenAll);
        cell.written[self] = epoch;
      } else {
        suspects |= cell.writes.seenBy(now) ? 0 : unseen(cell.written, now);
        cell.accesses.add(agent, epoch, now, cell.accesses.seenBy(now));
      }
      cell.accessed[self] = epoch;
    }
  }
  return suspects;
}

void HazardDetector::acquire(int agent, int semaphore) {
  joinInto(clocks_[static_cast<std::size_t>(agent)],
           semaphoreClocks_[static_cast<std::size_t>(semaphore)]);
}

void HazardDetector::join(int agent, const VectorClock& other) {
  joinInto(clocks_[static_cast<std::size_t>(agent)], other);
}

void HazardDetector::release(int semaphore, const VectorClock& updater) {
  joinInto(semaphoreClocks_[static_cast<std::size_t>(semaphore)], updater);
}

Status HazardDetector::access(int agent, AccessOwner owner, std::span<const Operand> operands) {
  const VectorClock& now = clocks_[static_cast<std::size_t>(agent)];
  const std::uint32_t epoch = now[static_cast<std::size_t>(agent)];
  std::uint32_t suspects = 0;
  for (const Operand& operand : operands) {
    suspects |= filterAndRecord(operand, agent, epoch, now);
  }
  suspects &= ~(std::uint32_t{1} << agent);
  if (suspects != 0) {
    footprints_.clear();
    for (const Operand& operand : operands) {
      footprints_.push_back(Footprint::of(*operand.pattern, operand.write));
    }
    for (; suspects != 0; suspects &= suspects - 1) {
      TRN_RETURN_IF_ERROR(scan(std::countr_zero(suspects), now, owner, footprints_));
    }
  }
  History& mine = history_[static_cast<std::size_t>(agent)];
  for (const Operand& operand : operands) {
    mine.push(Entry{epoch, owner, operand});
  }
  if (++sincePrune_ >= kPruneInterval) {
    prune();
  }
  return {};
}

Status HazardDetector::scan(int other, const VectorClock& now, AccessOwner owner,
                            std::span<const Footprint> footprints) const {
  const History& h = history_[static_cast<std::size_t>(other)];
  const std::uint32_t seen = now[static_cast<std::size_t>(other)];
  for (std::uint64_t i = h.end(); i-- > h.start() && h.at(i).epoch > seen;) {
    const Entry& earlier = h.at(i);
    const Footprint e = Footprint::of(*earlier.operand.pattern, earlier.operand.write);
    for (const Footprint& f : footprints) {
      if (!f.write && !e.write) {
        continue;
      }
      const auto overlap = firstOverlap(e, f);
      if (!overlap) {
        continue;
      }
      const std::int64_t firstPartition = std::max(e.firstPartition, f.firstPartition);
      const std::int64_t endPartition = std::min(e.endPartition, f.endPartition);
      const std::string tensor = f.tensor >= 0 ? tensorName_(f.tensor) : std::string();
      return failedPrecondition(fmt::format(
          "race: {} {} {} and {} {} {}, with no semaphore ordering them; they overlap at {}",
          describe_(earlier.owner), e.write ? "writes" : "reads",
          describeRange(e, e.bytes, e.firstPartition, e.endPartition, tensor), describe_(owner),
          f.write ? "writes" : "reads",
          describeRange(f, f.bytes, f.firstPartition, f.endPartition, tensor),
          describeRange(f, *overlap, firstPartition, endPartition, tensor)));
    }
  }
  return {};
}

void HazardDetector::prune() {
  sincePrune_ = 0;
  // Future accesses come from unfinished engines or from transfers they issue (whose clocks
  // include the issuer's), so an entry of agent B is dead once every unfinished engine has seen it.
  VectorClock low;
  low.fill(std::numeric_limits<std::uint32_t>::max());
  bool anyLive = false;
  for (int e = 0; e < isa::kNumEngines; ++e) {
    if (finished_[static_cast<std::size_t>(e)]) {
      continue;
    }
    anyLive = true;
    for (int a = 0; a < agents_; ++a) {
      low[static_cast<std::size_t>(a)] =
          std::min(low[static_cast<std::size_t>(a)],
                   clocks_[static_cast<std::size_t>(e)][static_cast<std::size_t>(a)]);
    }
  }
  for (int a = 0; a < agents_; ++a) {
    History& h = history_[static_cast<std::size_t>(a)];
    std::uint64_t start = anyLive ? h.start() : h.end();
    while (start < h.end() && h.at(start).epoch <= low[static_cast<std::size_t>(a)]) {
      ++start;
    }
    h.dropBefore(start);
  }
}

void HazardDetector::History::push(const Entry& entry) {
  if (end_ - start_ == entries_.size()) {
    std::vector<Entry> grown(std::max<std::size_t>(64, entries_.size() * 2));
    for (std::uint64_t i = start_; i < end_; ++i) {
      grown[i & (grown.size() - 1)] = at(i);
    }
    entries_ = std::move(grown);
  }
  entries_[end_ & (entries_.size() - 1)] = entry;
  ++end_;
}

}  // namespace trn::core
