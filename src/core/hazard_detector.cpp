#include "trn/core/hazard_detector.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <variant>

#include "trn/base/check.h"
#include "trn/isa/field.h"

namespace trn::core {

using isa::describeRange;
using isa::firstOverlap;

namespace {

constexpr std::uint64_t kPruneInterval = 256;
/// Entries an agent's history holds at first.
constexpr std::size_t kMinHistory = 32;
/// Cell geometry: bands of 128 partitions, or of at least 64 HBM rows (at most 16 bands per
/// tensor); column granules of at least 512 bytes (at most 512 per partition, 64 per HBM row).
constexpr int kPartitionBandShift = 7;
constexpr int kMinHbmBandShift = 6;
constexpr std::int64_t kMaxHbmBands = 16;
constexpr int kMinGranuleShift = 9;
constexpr int kMaxOnChipGranules = 512;
constexpr int kMaxHbmGranules = 64;
/// The most cells of one band row that preparing an operand prefetches.
constexpr std::uint32_t kPrefetchedCells = 8;

/// Clock loops are built twice: for AVX2 (unsigned 32-bit max and compare in one instruction)
/// and for baseline x86-64, which emulates them; the loader picks one for the machine.
#if defined(__x86_64__) && defined(__GLIBC__)  // target_clones needs ifunc support
#define TRN_CLOCK_LOOP __attribute__((target_clones("avx2", "default")))
#else
#define TRN_CLOCK_LOOP
#endif

/// into = max(into, other) per agent; the clocks are distinct (__restrict lets the loop
/// vectorise without an overlap check).
TRN_CLOCK_LOOP void joinInto(VectorClock& __restrict into, const VectorClock& __restrict other) {
  for (std::size_t i = 0; i < kMaxAgents; ++i) {
    into[i] = std::max(into[i], other[i]);
  }
}

/// ap.byteRange(), without the loop for the common single free dimension.
isa::ByteInterval byteRangeOf(const isa::AccessPattern& ap) {
  if (ap.numDims != 1 || ap.memory == isa::Memory::kHbm) {
    const isa::AccessPattern::ByteRange range = ap.byteRange();
    return {range.begin, range.end};
  }
  const std::int64_t elementBytes = byteSize(ap.dtype);
  const std::int64_t span = (ap.dims[0].count - 1) * ap.dims[0].stride;
  return {ap.offset + std::min<std::int64_t>(0, span) * elementBytes,
          ap.offset + std::max<std::int64_t>(0, span) * elementBytes + elementBytes};
}

/// For an HBM pattern of `rows` rows of one contiguous run each, rows at least a run apart (the
/// common transfer), its byte range and row shape as isa::Footprint::of gives them; false for any
/// other pattern.
bool plainRows(const isa::AccessPattern& ap, isa::ByteInterval& bytes, isa::RowShape& rows) {
  const isa::Dim& inner = ap.dims[0];
  if (ap.numDims != 1 || inner.stride != 1 || inner.count < 1 || ap.partitionCount < 1 ||
      ap.partitionStride < inner.count) {
    return false;
  }
  const std::int64_t elementBytes = byteSize(ap.dtype);
  const std::int64_t length = inner.count * elementBytes;
  bytes = {ap.offset,
           ap.offset + ((ap.partitionCount - 1) * ap.partitionStride + inner.count) * elementBytes};
  rows.first = ap.offset;
  if (ap.partitionCount == 1 || ap.partitionStride == inner.count) {
    rows.rows = 1;  // one run
    rows.length = bytes.end - bytes.begin;
    rows.stride = rows.length;
  } else {
    rows.rows = ap.partitionCount;
    rows.length = length;
    rows.stride = ap.partitionStride * elementBytes;
  }
  return true;
}

/// Whether low..high (inclusive) is a non-empty range in 0..size - 1: one unsigned comparison per
/// end, as a negative end converts to a huge value.
bool withinGrid(std::int64_t low, std::int64_t high, std::int64_t size) {
  return static_cast<std::uint64_t>(low) <= static_cast<std::uint64_t>(high) &&
         static_cast<std::uint64_t>(high) < static_cast<std::uint64_t>(size);
}

/// Bit `a` set, for each agent `a`.
constexpr std::array<std::uint32_t, kMaxAgents> kAgentBits = [] {
  std::array<std::uint32_t, kMaxAgents> bits{};
  for (std::size_t a = 0; a < kMaxAgents; ++a) {
    bits[a] = std::uint32_t{1} << a;
  }
  return bits;
}();

/// The agents with an epoch in `epochs` that `now` has not seen (a loop the compiler vectorises).
TRN_CLOCK_LOOP std::uint32_t unseen(const VectorClock& epochs, const VectorClock& now) {
  std::uint32_t agents = 0;
  for (std::size_t a = 0; a < kMaxAgents; ++a) {
    agents |= epochs[a] > now[a] ? kAgentBits[a] : 0;
  }
  return agents;
}

}  // namespace

const isa::AccessPattern& operandPattern(const isa::InstructionBody& body, std::uint8_t ordinal) {
  const isa::AccessPattern* found = nullptr;
  std::size_t k = 0;
  std::visit(
      [&](const auto& instr) {
        isa::forEachAccessPattern(
            instr, [&](std::string_view, isa::FieldRole, const isa::AccessPattern& ap) {
              if (k++ == ordinal) {
                found = &ap;
              }
            });
      },
      body);
  TRN_CHECK(found != nullptr) << "an instruction has no operand " << int{ordinal};
  return *found;
}

isa::AccessPattern operandPattern(const isa::Program& program, AccessOwner owner,
                                  std::uint8_t ordinal) {
  isa::InstructionBody body;
  program.stream(owner.engine).decodeBody(owner.index, body);
  return operandPattern(body, ordinal);
}

HazardDetector::HazardDetector(const isa::CoreLimits& limits, const isa::Program& program,
                               const std::vector<bool>& written,
                               std::function<std::string(AccessOwner)> describe,
                               std::function<std::string(std::int32_t)> tensorName)
    : agents_(isa::kNumEngines + limits.dmaQueues),
      program_(program),
      clocks_(static_cast<std::size_t>(agents_), VectorClock{}),
      semaphoreClocks_(static_cast<std::size_t>(limits.semaphores), VectorClock{}),
      history_(static_cast<std::size_t>(agents_)),
      describe_(std::move(describe)),
      tensorName_(std::move(tensorName)) {
  TRN_CHECK(agents_ <= kBarrierSlot)
      << "too many DMA queues for race detection: " << limits.dmaQueues;
  TRN_CHECK(limits.partitions <= std::numeric_limits<std::int16_t>::max())
      << "too many partitions for race detection: " << limits.partitions;
  const std::vector<isa::TensorDecl>& tensors = program.tensors;
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
  readOnly_.assign(tensors.size(), 0);
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    readOnly_[t] = t < written.size() && !written[t] ? 1 : 0;
  }
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
  grid.firstBand = static_cast<std::uint32_t>(rowCell_.size());
  rowCell_.resize(rowCell_.size() + static_cast<std::size_t>(grid.bands), 0);
  rowCells_.resize(rowCell_.size(), static_cast<std::uint16_t>(grid.granules));
  grids_.push_back(grid);
}

AccessSpan HazardDetector::prepare(const isa::InstructionBody& body, PreparedAccesses& out) {
  AccessSpan span;
  span.firstOperand = static_cast<std::uint32_t>(out.operands.size());
  span.firstCellRun = static_cast<std::uint32_t>(out.cellRuns.size());
  std::visit(
      [&](const auto& instr) {
        isa::forEachAccessPattern(
            instr, [&](std::string_view, isa::FieldRole role, const isa::AccessPattern& ap) {
              const std::size_t ordinal = out.operands.size() - span.firstOperand;
              TRN_CHECK(ordinal < kMaxOperands)
                  << "an instruction with over " << kMaxOperands << " operands";
              prepareOperand(ap, role == isa::FieldRole::kOutput,
                             static_cast<std::uint8_t>(ordinal), out);
            });
      },
      body);
  span.operandCount = static_cast<std::uint32_t>(out.operands.size()) - span.firstOperand;
  span.cellRunCount = static_cast<std::uint32_t>(out.cellRuns.size()) - span.firstCellRun;
  return span;
}

void HazardDetector::prepareOperand(const isa::AccessPattern& ap, bool write, std::uint8_t ordinal,
                                    PreparedAccesses& out) {
  Operand operand;
  operand.ordinal = ordinal;
  operand.memory = ap.memory;
  operand.write = write;
  const Grid* grid = nullptr;
  std::int64_t rowLow = 0;
  std::int64_t rowHigh = 0;
  std::int64_t columnLow = 0;
  std::int64_t columnHigh = 0;  // inclusive
  if (ap.memory != isa::Memory::kHbm) {
    grid = &grids_[ap.memory == isa::Memory::kSbuf ? 0 : 1];
    const isa::ByteInterval bytes = byteRangeOf(ap);
    operand.bytes = bytes;
    operand.firstPartition = static_cast<std::int32_t>(ap.partitionStart);
    operand.endPartition = static_cast<std::int32_t>(ap.partitionStart + ap.partitionCount);
    rowLow = ap.partitionStart;
    rowHigh = ap.partitionStart + ap.partitionCount - 1;
    columnLow = bytes.begin;
    columnHigh = bytes.end - 1;
  } else {
    isa::RowShape r;
    if (!plainRows(ap, operand.bytes, r)) {
      const Footprint f = Footprint::of(ap, write);
      operand.bytes = f.bytes;
      r = f.rows;
    }
    const isa::ByteInterval& bytes = operand.bytes;
    operand.tensor = ap.tensor;
    const bool declared = ap.tensor >= 0 && static_cast<std::size_t>(ap.tensor) + 3 < grids_.size();
    if (declared && !write && readOnly_[static_cast<std::size_t>(ap.tensor)] != 0) {
      operand.checked = false;
      out.operands.push_back(operand);
      return;
    }
    grid = &grids_[declared ? static_cast<std::size_t>(ap.tensor) + 2 : grids_.size() - 1];
    const std::int64_t rowBytes = grid->rowBytes;
    if (r.rows > 0 && r.first >= 0 && (r.rows == 1 || r.stride % rowBytes == 0) &&
        r.first % rowBytes + r.length <= rowBytes) {
      // Runs within rows, one every stride / rowBytes rows: their columns in those rows.
      rowLow = r.first / rowBytes;
      rowHigh = (r.first + (r.rows - 1) * r.stride) / rowBytes;
      columnLow = r.first % rowBytes;
      columnHigh = columnLow + r.length - 1;
    } else if (bytes.begin >= 0 && bytes.begin < bytes.end) {
      rowLow = bytes.begin / rowBytes;
      rowHigh = (bytes.end - 1) / rowBytes;
      columnLow = rowLow == rowHigh ? bytes.begin % rowBytes : 0;
      columnHigh = rowLow == rowHigh ? (bytes.end - 1) % rowBytes : rowBytes - 1;
    } else {
      rowLow = -1;  // an empty or negative range: every cell
    }
  }
  out.operands.push_back(operand);
  // Every band row (every column granule) when the rows (columns) are not a range in the grid.
  std::int64_t bandLow = 0;
  std::int64_t bandHigh = grid->bands - 1;
  std::int64_t granuleLow = 0;
  std::int64_t granuleHigh = grid->granules - 1;
  if (withinGrid(rowLow, rowHigh, grid->rows)) {
    bandLow = rowLow >> grid->bandShift;
    bandHigh = rowHigh >> grid->bandShift;
  }
  if (withinGrid(columnLow, columnHigh, grid->rowBytes)) {
    granuleLow = columnLow >> grid->granuleShift;
    granuleHigh = columnHigh >> grid->granuleShift;
  }
  const auto granules = static_cast<std::uint16_t>(granuleHigh - granuleLow + 1);
  for (std::int64_t band = bandLow; band <= bandHigh; ++band) {
    const std::uint32_t row = grid->firstBand + static_cast<std::uint32_t>(band);
    const std::uint32_t first = rowCell_[row] != 0 ? rowCell_[row] : allocateRow(row);
    out.cellRuns.push_back({first + static_cast<std::uint32_t>(granuleLow), granules, write});
    // The cells are read when the instruction issues, a few instructions of every engine later:
    // fetching them now hides most of the miss (with eight cores' cells, most are misses).
    for (std::uint32_t g = 0; g < std::min<std::uint32_t>(granules, kPrefetchedCells); ++g) {
      __builtin_prefetch(&cells_[first + static_cast<std::uint32_t>(granuleLow) + g], 1);
    }
  }
}

std::uint32_t HazardDetector::allocateRow(std::uint32_t band) {
  const auto first = static_cast<std::uint32_t>(cells_.size());
  const std::size_t size = cells_.size() + rowCells_[band];
  cells_.resize(size);
  rowCell_[band] = first;
  return first;
}

std::uint32_t HazardDetector::filterAndRecord(std::span<const CellRun> runs, int agent,
                                              std::uint32_t epoch, const VectorClock& now) {
  Cell* const cells = cells_.data();
  std::uint32_t suspects = 0;
  for (const CellRun& run : runs) {
    const std::uint32_t end = run.first + run.count;
    for (std::uint32_t c = run.first; c < end; ++c) {
      suspects |= filterAndRecordCell(cells[c], agent, epoch, run.write, now);
    }
  }
  return suspects;
}

std::uint32_t HazardDetector::filterAndRecordCell(Cell& cell, int agent, std::uint32_t epoch,
                                                  bool write, const VectorClock& now) {
  const auto self = static_cast<std::size_t>(agent);
  if (cell.count == Cell::kDense) {
    DenseCell& d = dense_[cell.dense];
    // A write conflicts with every access, a read only with writes.
    const std::uint32_t suspects = unseen(write ? d.accessed : d.written, now);
    if (write) {
      d.written[self] = epoch;
    }
    d.accessed[self] = epoch;
    return suspects;
  }
  // One pass that only reads. A slot every unfinished engine has seen (its last access at or
  // before dead_) is never a suspect: the accessor is an unfinished engine, or a queue whose clock
  // has just joined one's, so now >= dead_ for every agent. Such slots are reclaimed only when the
  // cell is full and a new agent needs one; which cells move to dense clocks is the same as if
  // they were reclaimed at once. This agent's own slot is never a suspect (its epochs are not
  // after now's), and access() drops it anyway.
  std::uint32_t suspects = 0;
  std::uint8_t mine = Cell::kSlots;  // this agent's slot, if it has one
  const std::uint8_t count = cell.count;
  for (std::uint8_t i = 0; i < count; ++i) {
    const std::uint8_t other = cell.agents[i];
    const std::uint32_t last = write ? cell.lastAccess[i] : cell.lastWrite[i];
    suspects |= last > now[other] ? kAgentBits[other] : 0;
    mine = other == self ? i : mine;
  }
  if (mine == Cell::kSlots) {
    if (count == Cell::kSlots && !reclaimDeadSlots(cell)) {
      moveToDense(cell, agent, epoch, write);
      return suspects;
    }
    mine = cell.count;
    // Slots past count hold zero epochs (Cell{}, reclaimDeadSlots).
    cell.agents[mine] = static_cast<std::uint8_t>(agent);
    cell.count = mine + 1;
  }
  if (write) {
    cell.lastWrite[mine] = epoch;
  }
  cell.lastAccess[mine] = epoch;
  return suspects;
}

bool HazardDetector::reclaimDeadSlots(Cell& cell) const {
  std::uint8_t kept = 0;
  for (std::uint8_t i = 0; i < cell.count; ++i) {
    const std::uint8_t other = cell.agents[i];
    if (cell.lastAccess[i] <= dead_[other]) {
      continue;  // every future access has seen it: the slot is free
    }
    cell.agents[kept] = other;
    cell.lastWrite[kept] = cell.lastWrite[i];
    cell.lastAccess[kept] = cell.lastAccess[i];
    ++kept;
  }
  for (std::uint8_t i = kept; i < cell.count; ++i) {
    cell.agents[i] = 0;
    cell.lastWrite[i] = 0;
    cell.lastAccess[i] = 0;
  }
  cell.count = kept;
  return kept < Cell::kSlots;
}

void HazardDetector::moveToDense(Cell& cell, int agent, std::uint32_t epoch, bool write) {
  DenseCell d;
  for (std::uint8_t i = 0; i < cell.count; ++i) {
    d.written[cell.agents[i]] = cell.lastWrite[i];
    d.accessed[cell.agents[i]] = cell.lastAccess[i];
  }
  const auto self = static_cast<std::size_t>(agent);
  if (write) {
    d.written[self] = epoch;
  }
  d.accessed[self] = epoch;
  cell = Cell{};
  cell.count = Cell::kDense;
  cell.dense = static_cast<std::uint32_t>(dense_.size());
  dense_.push_back(d);
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

Status HazardDetector::access(int agent, AccessOwner owner, const PreparedAccesses& prepared,
                              AccessSpan span) {
  const VectorClock& now = clocks_[static_cast<std::size_t>(agent)];
  const std::uint32_t epoch = now[static_cast<std::size_t>(agent)];
  const std::span<const Operand> operands =
      std::span(prepared.operands).subspan(span.firstOperand, span.operandCount);
  std::uint32_t suspects =
      filterAndRecord(std::span(prepared.cellRuns).subspan(span.firstCellRun, span.cellRunCount),
                      agent, epoch, now);
  suspects &= ~(std::uint32_t{1} << agent);
  if (suspects != 0) {
    footprintsComputed_ = 0;
    for (; suspects != 0; suspects &= suspects - 1) {
      TRN_RETURN_IF_ERROR(scan(std::countr_zero(suspects), now, owner, operands));
    }
  }
  History& mine = history_[static_cast<std::size_t>(agent)];
  for (const Operand& operand : operands) {
    if (operand.checked) {
      // Field by field into place: an entry built apart and copied whole would be read back
      // before its parts reach the cache.
      Entry& entry = mine.push();
      entry.bytes = operand.bytes;
      entry.epoch = epoch;
      entry.index = owner.index;
      entry.tensor = operand.tensor;
      entry.firstPartition = static_cast<std::int16_t>(operand.firstPartition);
      entry.endPartition = static_cast<std::int16_t>(operand.endPartition);
      entry.engine = owner.engine;
      entry.memory = operand.memory;
      entry.write = operand.write;
      entry.ordinal = operand.ordinal;
    }
  }
  if (++sincePrune_ >= kPruneInterval) {
    prune();
  }
  return {};
}

const Footprint& HazardDetector::footprint(AccessOwner owner, std::span<const Operand> operands,
                                           std::size_t i) {
  Footprint& f = footprints_[i];
  const std::uint64_t bit = std::uint64_t{1} << i;
  if ((footprintsComputed_ & bit) == 0) {
    if (footprintsComputed_ == 0) {
      program_.stream(owner.engine).decodeBody(owner.index, currentBody_);
    }
    f = Footprint::of(operandPattern(currentBody_, operands[i].ordinal), operands[i].write);
    footprintsComputed_ |= bit;
  }
  return f;
}

Footprint HazardDetector::recordedFootprint(const Entry& entry) {
  earlierPattern_ = operandPattern(program_, entry.owner(), entry.ordinal);
  return Footprint::of(earlierPattern_, entry.write);
}

Status HazardDetector::scan(int other, const VectorClock& now, AccessOwner owner,
                            std::span<const Operand> operands) {
  const History& h = history_[static_cast<std::size_t>(other)];
  const std::uint32_t seen = now[static_cast<std::size_t>(other)];
  Footprint earlierFootprint;
  for (std::size_t i = h.size(); i-- > 0 && h.at(i).epoch > seen;) {
    const Entry& o = h.at(i);
    bool earlierFootprintComputed = false;
    for (std::size_t k = 0; k < operands.size(); ++k) {
      const Operand& a = operands[k];
      // Without a write, or with disjoint bounding boxes, there is no conflict.
      if ((!a.write && !o.write) || a.memory != o.memory || a.tensor != o.tensor ||
          a.firstPartition >= o.endPartition || o.firstPartition >= a.endPartition ||
          a.bytes.begin >= o.bytes.end || o.bytes.begin >= a.bytes.end) {
        continue;
      }
      if (!earlierFootprintComputed) {
        earlierFootprint = recordedFootprint(o);
        earlierFootprintComputed = true;
      }
      const Footprint& e = earlierFootprint;
      const Footprint& f = footprint(owner, operands, k);
      const auto overlap = firstOverlap(e, f);
      if (!overlap) {
        continue;
      }
      const std::int64_t firstPartition = std::max(e.firstPartition, f.firstPartition);
      const std::int64_t endPartition = std::min(e.endPartition, f.endPartition);
      const std::string tensor = f.tensor >= 0 ? tensorName_(f.tensor) : std::string();
      return raceDetected(fmt::format(
          "race: {} {} {} and {} {} {}, with no semaphore ordering them; they overlap at {}",
          describe_(o.owner()), e.write ? "writes" : "reads",
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
  dead_ = low;
  for (int a = 0; a < agents_; ++a) {
    History& h = history_[static_cast<std::size_t>(a)];
    std::size_t dead = anyLive ? 0 : h.size();
    while (dead < h.size() && h.at(dead).epoch <= low[static_cast<std::size_t>(a)]) {
      ++dead;
    }
    h.dropFirst(dead);
  }
}

void HazardDetector::History::dropFirst(std::size_t count) {
  std::copy(entries_.begin() + static_cast<std::ptrdiff_t>(count),
            entries_.begin() + static_cast<std::ptrdiff_t>(size_), entries_.begin());
  size_ -= count;
}

void HazardDetector::History::grow() {
  entries_.resize(std::max<std::size_t>(kMinHistory, entries_.size() * 2));
}

}  // namespace trn::core
