// Dependency analysis over physical bytes: a table of the accesses that can still matter,
// bucketed by address so each new access meets only its neighbours (see dependencies.h).
#include "passes/dependencies.h"

#include <algorithm>
#include <utility>
#include <variant>

#include "passes/operands.h"
#include "trn/isa/footprint.h"

namespace trn::kernel {
namespace {

struct Access {
  isa::Footprint footprint;
  std::int32_t op = 0;
  isa::Engine engine = isa::Engine::kSp;
  bool viaDma = false;
  bool alive = true;
  std::uint32_t stamp = 0;  ///< last lookup that visited it (visits each entry once per lookup)
};

/// The accesses of one memory (or one HBM tensor), reads and writes apart, in a grid of buckets:
/// on chip by the bytes within a partition (one band); in HBM by bands of the tensor's rows times
/// the bytes within a row, so that blocks of rows and blocks of columns each meet only the
/// accesses near them. Accesses that are not such a block fill their bands' every column.
struct Region {
  bool ready = false;         ///< buckets made (on first use)
  std::int64_t granule = 1;   ///< bytes of a row per column bucket
  std::int64_t rowBytes = 0;  ///< HBM: bytes of one row of the tensor; 0 on chip
  std::int64_t rowsPerBand = 1;
  std::int64_t bands = 1;
  std::int64_t columns = 1;  ///< column buckets per band
  std::vector<std::vector<std::int32_t>> reads;
  std::vector<std::vector<std::int32_t>> writes;
};

/// The buckets an access occupies: bands [firstBand, lastBand] × columns [firstColumn,
/// lastColumn].
struct BucketRange {
  std::int64_t firstBand = 0;
  std::int64_t lastBand = 0;
  std::int64_t firstColumn = 0;
  std::int64_t lastColumn = 0;

  template <typename Fn>
  void forEach(const Region& r, Fn&& fn) const {
    for (std::int64_t band = firstBand; band <= lastBand; ++band) {
      for (std::int64_t column = firstColumn; column <= lastColumn; ++column) {
        fn(static_cast<std::size_t>(band * r.columns + column));
      }
    }
  }
};

bool denseBox(const isa::Footprint& f) {
  return f.rows.rows > 0 && (f.rows.rows == 1 || f.rows.stride == f.rows.length);
}

/// True when every byte of `inner` is a byte of `outer`.
bool covers(const isa::Footprint& outer, const isa::Footprint& inner) {
  return denseBox(outer) && outer.memory == inner.memory && outer.tensor == inner.tensor &&
         outer.firstPartition <= inner.firstPartition && inner.endPartition <= outer.endPartition &&
         outer.bytes.begin <= inner.bytes.begin && inner.bytes.end <= outer.bytes.end;
}

/// The part of an HBM tensor of `rowBytes`-byte rows an access occupies: rows [firstRow, lastRow]
/// and, within each, bytes [begin, end): its columns when it is rows of whole-row stride inside
/// one row each, else the whole row.
struct Block {
  std::int64_t firstRow = 0;
  std::int64_t lastRow = 0;
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

Block blockOf(const isa::Footprint& f, std::int64_t rowBytes) {
  Block b;
  b.firstRow = f.bytes.begin / rowBytes;
  b.lastRow = std::max(b.firstRow, (f.bytes.end - 1) / rowBytes);
  const bool rowBlock = f.rows.rows > 0 && (f.rows.rows == 1 || f.rows.stride == rowBytes);
  b.begin = rowBlock ? f.rows.first % rowBytes : 0;
  b.end = rowBlock ? b.begin + f.rows.length : rowBytes;
  if (b.end > rowBytes) {
    b.begin = 0;
    b.end = rowBytes;
  }
  return b;
}

/// The operands that name one HBM tensor: whether one writes it, and the rows and
/// bytes per row of each one's block (the grid of buckets is sized to the median block, which a
/// few accesses spanning the whole tensor do not skew).
struct TensorAccesses {
  bool written = false;
  std::vector<std::int64_t> rows;
  std::vector<std::int64_t> rowBytes;
};

/// The median of `values` (1 when empty); reorders them.
std::int64_t median(std::vector<std::int64_t>& values) {
  if (values.empty()) {
    return 1;
  }
  auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

class Analysis {
 public:
  explicit Analysis(const KernelIR& ir) : ir_(ir), regions_(kFirstHbmRegion + ir.buffers.size()) {}

  Dependencies run() {
    findWrittenTensors();
    std::vector<isa::Footprint> footprints;
    for (std::size_t i = 0; i < ir_.ops.size(); ++i) {
      const Op& op = ir_.ops[i];
      producers_.clear();
      if (std::holds_alternative<isa::CoreBarrier>(op.instr.body)) {
        // A core barrier follows every HBM access since the previous one, and precedes every
        // later one (the other cores' accesses are ordered against it at run time).
        producers_.swap(sinceBarrier_);
        if (lastBarrier_ >= 0) {
          producers_.push_back(lastBarrier_);
        }
        std::sort(producers_.begin(), producers_.end());
        deps_.append(producers_);
        lastBarrier_ = static_cast<std::int32_t>(i);
        continue;
      }
      footprints.clear();
      bool touchesHbm = false;
      forEachOperand(op.instr.body, [&](isa::FieldRole role, const isa::AccessPattern& ap) {
        isa::Footprint f = isa::Footprint::of(ap, role == isa::FieldRole::kOutput);
        touchesHbm = touchesHbm || ap.memory == isa::Memory::kHbm;
        if (ap.memory != isa::Memory::kHbm) {
          f.tensor = -1;  // on chip, tiles that share an address alias
        } else if (!f.write && !tensors_[static_cast<std::size_t>(f.tensor)].written) {
          return;  // nothing writes this tensor, so no read of it orders anything
        }
        footprints.push_back(f);
      });
      const auto self = static_cast<std::int32_t>(i);
      const bool viaDma = isa::info(op.instr.body).viaDma;
      // One scan per operand finds the accesses it depends on and those it ends: a write ends
      // what it covers, a read on an engine (not a DMA queue) the reads it covers on that engine.
      // The ends apply once every operand has seen the accesses as they were before the op.
      ends_.clear();
      endsFrom_.clear();
      for (const isa::Footprint& f : footprints) {
        ++stamp_;
        endsFrom_.push_back(ends_.size());
        visit(f, f.write || !viaDma, [&](Access& a, std::int32_t id) {
          if ((f.write || a.footprint.write) && a.op != self && isa::firstOverlap(a.footprint, f)) {
            producers_.push_back(a.op);
          }
          if (ends(f, viaDma, op.instr.engine, a)) {
            ends_.push_back(id);
          }
        });
      }
      endsFrom_.push_back(ends_.size());
      const std::size_t firstOwn = accesses_.size();
      for (std::size_t k = 0; k < footprints.size(); ++k) {
        const isa::Footprint& f = footprints[k];
        for (std::size_t e = endsFrom_[k]; e < endsFrom_[k + 1]; ++e) {
          accesses_[static_cast<std::size_t>(ends_[e])].alive = false;
        }
        // The op's own earlier operands, inserted after the scans.
        for (std::size_t own = firstOwn; own < accesses_.size(); ++own) {
          if (ends(f, viaDma, op.instr.engine, accesses_[own])) {
            accesses_[own].alive = false;
          }
        }
        insert(Access{f, self, op.instr.engine, viaDma});
      }
      if (touchesHbm) {
        if (lastBarrier_ >= 0) {
          producers_.push_back(lastBarrier_);
        }
        sinceBarrier_.push_back(self);
      }
      std::sort(producers_.begin(), producers_.end());
      producers_.erase(std::unique(producers_.begin(), producers_.end()), producers_.end());
      deps_.append(producers_);
    }
    return std::move(deps_);
  }

 private:
  /// Marks the HBM tensors some op writes (the others are only ever read), measures the blocks
  /// the accesses to the written ones take, and makes room for every access the analysis will
  /// keep. One scan of the ops, which remembers where their HBM operands are.
  void findWrittenTensors() {
    tensors_.assign(ir_.buffers.size(), {});
    std::vector<std::pair<std::size_t, const isa::AccessPattern*>> hbm;
    std::size_t kept = 0;
    for (const Op& op : ir_.ops) {
      forEachOperand(op.instr.body, [&](isa::FieldRole role, const isa::AccessPattern& ap) {
        if (ap.memory != isa::Memory::kHbm) {
          ++kept;
          return;
        }
        const auto t = static_cast<std::size_t>(ap.tensor);
        tensors_[t].written = tensors_[t].written || role == isa::FieldRole::kOutput;
        hbm.emplace_back(t, &ap);
      });
    }
    for (const auto& [t, ap] : hbm) {
      TensorAccesses& a = tensors_[t];
      if (a.written) {
        const Block b = blockOf(isa::Footprint::of(*ap, false), rowBytesOf(t));
        a.rows.push_back(b.lastRow - b.firstRow + 1);
        a.rowBytes.push_back(b.end - b.begin);
        ++kept;
      }
    }
    accesses_.reserve(kept);
  }

  /// Whether footprint `f` of an op on `engine` (through a DMA queue: `viaDma`) ends access `a`:
  /// a later access need not be ordered after `a` once it is ordered after the op.
  static bool ends(const isa::Footprint& f, bool viaDma, isa::Engine engine, const Access& a) {
    const bool sameEngine = !viaDma && !a.viaDma && a.engine == engine;
    return covers(f, a.footprint) && (f.write || (!a.footprint.write && sameEngine));
  }

  [[nodiscard]] std::int64_t rowBytesOf(std::size_t buffer) const {
    return std::max<std::int64_t>(1, ir_.buffers[buffer].partitionBytes());
  }

  /// Regions: SBUF, PSUM, then one per HBM tensor (by buffer index).
  static constexpr std::size_t kFirstHbmRegion = 2;

  Region& regionOf(const isa::Footprint& f) {
    const bool hbm = f.memory == isa::Memory::kHbm;
    const std::size_t index = !hbm ? (f.memory == isa::Memory::kSbuf ? 0 : 1)
                                   : kFirstHbmRegion + static_cast<std::size_t>(f.tensor);
    Region& r = regions_[index];
    if (r.ready) {
      return r;
    }
    r.ready = true;
    if (!hbm) {
      const bool sbuf = f.memory == isa::Memory::kSbuf;
      r.granule = sbuf ? 1024 : 2048;
      r.columns = (sbuf ? 256 * 1024 : 16 * 1024) / r.granule + 1;
    } else {
      // Buckets the size of the median block (at least 64 bytes of a row), merged in pairs while
      // there are many more buckets than accesses.
      const auto t = static_cast<std::size_t>(f.tensor);
      TensorAccesses& a = tensors_[t];
      const std::vector<std::int64_t>& shape = ir_.buffers[t].shape;
      const std::int64_t rows = shape.size() < 2 ? 1 : std::max<std::int64_t>(1, shape[0]);
      const auto count = std::max<std::int64_t>(1, static_cast<std::int64_t>(a.rows.size()));
      r.rowBytes = rowBytesOf(t);
      r.granule = std::max<std::int64_t>(64, median(a.rowBytes));
      r.rowsPerBand = std::max<std::int64_t>(1, median(a.rows));
      const std::int64_t limit = std::max<std::int64_t>(1024, 4 * count);
      auto columns = [&] { return (r.rowBytes + r.granule - 1) / r.granule; };
      auto bands = [&] { return (rows + r.rowsPerBand - 1) / r.rowsPerBand; };
      while (columns() * bands() > limit) {
        (columns() >= bands() ? r.granule : r.rowsPerBand) *= 2;
      }
      r.columns = columns();
      r.bands = bands();
    }
    const auto count = static_cast<std::size_t>(r.bands * r.columns);
    r.reads.resize(count);
    r.writes.resize(count);
    return r;
  }

  static BucketRange bucketRange(const Region& r, const isa::Footprint& f) {
    BucketRange range;
    std::int64_t begin = f.bytes.begin;
    std::int64_t end = f.bytes.end;
    if (r.rowBytes > 0) {
      const Block b = blockOf(f, r.rowBytes);
      range.firstBand = std::clamp<std::int64_t>(b.firstRow / r.rowsPerBand, 0, r.bands - 1);
      range.lastBand =
          std::clamp<std::int64_t>(b.lastRow / r.rowsPerBand, range.firstBand, r.bands - 1);
      begin = b.begin;
      end = b.end;
    }
    range.firstColumn = std::clamp<std::int64_t>(begin / r.granule, 0, r.columns - 1);
    range.lastColumn =
        std::clamp<std::int64_t>((end - 1) / r.granule, range.firstColumn, r.columns - 1);
    return range;
  }

  /// Calls fn(access, id) once for every live write (and read, with `reads`) whose box meets f's.
  template <typename Fn>
  void visit(const isa::Footprint& f, bool reads, Fn&& fn) {
    Region& r = regionOf(f);
    const BucketRange range = bucketRange(r, f);
    auto scan = [&](std::vector<std::vector<std::int32_t>>& buckets) {
      range.forEach(r, [&](std::size_t b) {
        std::vector<std::int32_t>& bucket = buckets[b];
        std::erase_if(bucket, [&](std::int32_t id) {
          return !accesses_[static_cast<std::size_t>(id)].alive;
        });
        for (const std::int32_t id : bucket) {
          Access& a = accesses_[static_cast<std::size_t>(id)];
          if (a.stamp != stamp_ && isa::boxesOverlap(a.footprint, f)) {
            a.stamp = stamp_;
            fn(a, id);
          }
        }
      });
    };
    scan(r.writes);
    if (reads) {
      scan(r.reads);
    }
  }

  void insert(Access access) {
    Region& r = regionOf(access.footprint);
    const BucketRange range = bucketRange(r, access.footprint);
    const auto id = static_cast<std::int32_t>(accesses_.size());
    accesses_.push_back(std::move(access));
    auto& buckets = accesses_.back().footprint.write ? r.writes : r.reads;
    range.forEach(r, [&](std::size_t b) { buckets[b].push_back(id); });
  }

  const KernelIR& ir_;
  Dependencies deps_;
  std::vector<std::int32_t> producers_;  ///< of the op being analysed
  std::vector<std::int32_t> ends_;       ///< accesses its operands end, operand by operand:
  std::vector<std::size_t> endsFrom_;    ///< operand k's are ends_[endsFrom_[k], endsFrom_[k + 1])
  LargeVector<Access> accesses_;
  // Per buffer, and so huge-page backed: a kernel may declare 100,000 tiles.
  LargeVector<TensorAccesses> tensors_;  ///< by HBM tensor (buffer index)
  LargeVector<Region> regions_;          ///< kFirstHbmRegion + buffer index for HBM
  std::uint32_t stamp_ = 0;
  std::int32_t lastBarrier_ = -1;           ///< the latest core barrier
  std::vector<std::int32_t> sinceBarrier_;  ///< ops touching HBM after it
};

}  // namespace

Dependencies analyseDependencies(const KernelIR& ir) { return Analysis(ir).run(); }

}  // namespace trn::kernel
