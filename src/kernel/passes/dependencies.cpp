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

/// The accesses of one memory (or one HBM tensor), reads and writes apart, bucketed by byte
/// range: on chip by the bytes within a partition; in HBM by the bytes within a row of the tensor
/// (most accesses are blocks of rows), with accesses that do not fit that shape in every bucket.
struct Region {
  bool ready = false;  ///< buckets made (on first use)
  std::int64_t granule = 1;
  std::int64_t rowBytes = 0;  ///< HBM: bytes of one row of the tensor; 0 on chip
  std::vector<std::vector<std::int32_t>> reads;
  std::vector<std::vector<std::int32_t>> writes;
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

class Analysis {
 public:
  explicit Analysis(const KernelIR& ir)
      : ir_(ir), regions_(kFirstHbmRegion + ir.buffers.size()) {}

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
        } else if (!f.write && !written_[static_cast<std::size_t>(f.tensor)]) {
          return;  // nothing writes this tensor, so no read of it orders anything
        }
        footprints.push_back(f);
      });
      const auto self = static_cast<std::int32_t>(i);
      for (const isa::Footprint& f : footprints) {
        ++stamp_;
        visit(f, f.write, [&](Access& a) {
          if (a.op != self && isa::firstOverlap(a.footprint, f)) {
            producers_.push_back(a.op);
          }
        });
      }
      const bool viaDma = isa::info(op.instr.body).viaDma;
      for (const isa::Footprint& f : footprints) {
        ++stamp_;
        // Only a write, or a read on an engine (not a DMA queue), can drop an earlier read.
        visit(f, f.write || !viaDma, [&](Access& a) {
          const bool sameEngine = !viaDma && !a.viaDma && a.engine == op.instr.engine;
          if (covers(f, a.footprint) && (f.write || (!a.footprint.write && sameEngine))) {
            a.alive = false;
          }
        });
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
  /// Marks the HBM tensors some op writes (the others are only ever read), and counts the
  /// accesses to each.
  void findWrittenTensors() {
    written_.assign(ir_.buffers.size(), false);
    hbmAccesses_.assign(ir_.buffers.size(), 0);
    for (const Op& op : ir_.ops) {
      forEachOperand(op.instr.body, [&](isa::FieldRole role, const isa::AccessPattern& ap) {
        if (ap.memory == isa::Memory::kHbm) {
          const auto t = static_cast<std::size_t>(ap.tensor);
          written_[t] = written_[t] || role == isa::FieldRole::kOutput;
          ++hbmAccesses_[t];
        }
      });
    }
  }

  /// Regions: SBUF, PSUM, then one per HBM tensor (by buffer index).
  static constexpr std::size_t kFirstHbmRegion = 2;

  Region& regionOf(const isa::Footprint& f) {
    const std::size_t index = f.memory == isa::Memory::kSbuf   ? 0
                              : f.memory == isa::Memory::kPsum ? 1
                                                               : kFirstHbmRegion + static_cast<std::size_t>(f.tensor);
    Region& r = regions_[index];
    if (r.ready) {
      return r;
    }
    r.ready = true;
    std::int64_t bytes = 0;
    switch (f.memory) {
      case isa::Memory::kSbuf:
        r.granule = 1024;
        bytes = 256 * 1024;
        break;
      case isa::Memory::kPsum:
        r.granule = 2048;
        bytes = 16 * 1024;
        break;
      case isa::Memory::kHbm: {
        // At least 256 buckets over a row, and as many as the tensor has accesses, so that a
        // bucket holds a few accesses however many column blocks the kernel moves.
        const auto t = static_cast<std::size_t>(f.tensor);
        const std::int64_t buckets = std::max<std::int64_t>(256, hbmAccesses_[t]);
        r.rowBytes = ir_.buffers[t].partitionBytes();
        r.granule = std::max<std::int64_t>(64, (r.rowBytes + buckets - 1) / buckets);
        bytes = r.rowBytes;
        break;
      }
    }
    const auto count = static_cast<std::size_t>((bytes + r.granule - 1) / r.granule + 1);
    r.reads.resize(count);
    r.writes.resize(count);
    return r;
  }

  std::pair<std::size_t, std::size_t> bucketRange(const Region& r, const isa::Footprint& f) const {
    const auto last = static_cast<std::int64_t>(r.reads.size()) - 1;
    std::int64_t begin = f.bytes.begin;
    std::int64_t end = f.bytes.end;
    if (r.rowBytes > 0) {
      // Rows of whole-row stride: bucket by the columns; anything else touches every bucket.
      const bool rowBlock = f.rows.rows > 0 && (f.rows.rows == 1 || f.rows.stride == r.rowBytes);
      begin = rowBlock ? f.rows.first % r.rowBytes : 0;
      end = rowBlock ? begin + f.rows.length : r.rowBytes;
      if (end > r.rowBytes) {
        begin = 0;
        end = r.rowBytes;
      }
    }
    const std::int64_t lo = std::clamp<std::int64_t>(begin / r.granule, 0, last);
    const std::int64_t hi = std::clamp<std::int64_t>((end - 1) / r.granule, 0, last);
    return {static_cast<std::size_t>(lo), static_cast<std::size_t>(hi)};
  }

  /// Calls fn once for every live write (and read, with `reads`) whose box meets f's.
  template <typename Fn>
  void visit(const isa::Footprint& f, bool reads, Fn&& fn) {
    Region& r = regionOf(f);
    const auto [lo, hi] = bucketRange(r, f);
    auto scan = [&](std::vector<std::vector<std::int32_t>>& buckets) {
      for (std::size_t b = lo; b <= hi; ++b) {
        std::vector<std::int32_t>& bucket = buckets[b];
        std::erase_if(bucket, [&](std::int32_t id) {
          return !accesses_[static_cast<std::size_t>(id)].alive;
        });
        for (const std::int32_t id : bucket) {
          Access& a = accesses_[static_cast<std::size_t>(id)];
          if (a.stamp != stamp_ && isa::boxesOverlap(a.footprint, f)) {
            a.stamp = stamp_;
            fn(a);
          }
        }
      }
    };
    scan(r.writes);
    if (reads) {
      scan(r.reads);
    }
  }

  void insert(Access access) {
    Region& r = regionOf(access.footprint);
    const auto [lo, hi] = bucketRange(r, access.footprint);
    const auto id = static_cast<std::int32_t>(accesses_.size());
    accesses_.push_back(std::move(access));
    auto& buckets = accesses_.back().footprint.write ? r.writes : r.reads;
    for (std::size_t b = lo; b <= hi; ++b) {
      buckets[b].push_back(id);
    }
  }

  const KernelIR& ir_;
  Dependencies deps_;
  std::vector<std::int32_t> producers_;  ///< of the op being analysed
  LargeVector<Access> accesses_;
  std::vector<bool> written_;                ///< by HBM tensor (buffer index): some op writes it
  std::vector<std::int64_t> hbmAccesses_;    ///< by HBM tensor: operands that name it
  std::vector<Region> regions_;              ///< kFirstHbmRegion + buffer index for HBM
  std::uint32_t stamp_ = 0;
  std::int32_t lastBarrier_ = -1;           ///< the latest core barrier
  std::vector<std::int32_t> sinceBarrier_;  ///< ops touching HBM after it
};

}  // namespace

Dependencies analyseDependencies(const KernelIR& ir) { return Analysis(ir).run(); }

}  // namespace trn::kernel
