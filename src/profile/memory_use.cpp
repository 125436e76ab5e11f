#include "trn/profile/memory_use.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "trn/isa/footprint.h"
#include "trn/profile/dependencies.h"

namespace trn::profile {
namespace {

/// An SBUF or PSUM box one operand touches.
struct Box {
  bool psum = false;
  bool write = false;
  std::int64_t firstPartition = 0;
  std::int64_t endPartition = 0;
  std::int64_t begin = 0;
  std::int64_t end = 0;

  [[nodiscard]] std::int64_t bytes() const {
    return (endPartition - firstPartition) * (end - begin);
  }
  [[nodiscard]] bool sameAs(const Box& o) const {
    return std::tie(psum, firstPartition, endPartition, begin, end) ==
           std::tie(o.psum, o.firstPartition, o.endPartition, o.begin, o.end);
  }
  [[nodiscard]] bool overlaps(const Box& o) const {
    return psum == o.psum && firstPartition < o.endPartition && o.firstPartition < endPartition &&
           begin < o.end && o.begin < end;
  }
};

/// One instruction's (or transfer's) operands over the time it accesses them.
struct Access {
  Picoseconds start;
  Picoseconds end;
  const std::vector<Box>* boxes = nullptr;
};

struct Region {
  Box box;
  Picoseconds from;
  Picoseconds lastUse;
};

/// The SBUF and PSUM boxes of each static instruction, decoded once.
class BoxCache {
 public:
  explicit BoxCache(const isa::Program& program) : program_(program) {}

  const std::vector<Box>& get(isa::Engine engine, std::uint32_t index) {
    const auto key = std::pair(static_cast<int>(engine), index);
    auto found = boxes_.find(key);
    if (found != boxes_.end()) {
      return found->second;
    }
    program_.stream(engine).decodeBody(index, body_);
    isa::operandFootprints(body_, footprints_);
    std::vector<Box> out;
    for (const isa::Footprint& f : footprints_) {
      if (f.memory == isa::Memory::kHbm || f.bytes.end <= f.bytes.begin) {
        continue;
      }
      out.push_back({f.memory == isa::Memory::kPsum, f.write, f.firstPartition, f.endPartition,
                     f.bytes.begin, f.bytes.end});
    }
    return boxes_.emplace(key, std::move(out)).first->second;
  }

 private:
  const isa::Program& program_;
  isa::InstructionBody body_;
  std::vector<isa::Footprint> footprints_;
  std::map<std::pair<int, std::uint32_t>, std::vector<Box>> boxes_;
};

}  // namespace

Result<MemoryUse> memoryUse(const isa::Program& program, const core::RunStats& stats) {
  for (std::size_t i = 0; i < stats.records.size(); ++i) {
    const core::InstructionRecord& r = stats.records[i];
    if (static_cast<int>(r.engine) >= isa::kNumEngines ||
        r.index >= program.stream(r.engine).size()) {
      return invalidArgument(fmt::format(
          "instruction record {} names an instruction the program does not have", i));
    }
  }
  BoxCache cache(program);
  const std::vector<std::int64_t> transferOf = transferOfRecord(stats);
  std::vector<Access> accesses;
  accesses.reserve(stats.records.size());
  for (std::size_t i = 0; i < stats.records.size(); ++i) {
    const core::InstructionRecord& r = stats.records[i];
    const std::vector<Box>& boxes = cache.get(r.engine, r.index);
    if (boxes.empty()) {
      continue;
    }
    if (transferOf[i] >= 0) {
      const core::TransferRecord& t = stats.transfers[static_cast<std::size_t>(transferOf[i])];
      accesses.push_back({t.start, t.end, &boxes});
    } else {
      accesses.push_back({r.start, r.end, &boxes});
    }
  }
  std::stable_sort(accesses.begin(), accesses.end(),
                   [](const Access& a, const Access& b) { return a.start < b.start; });

  // Each region's time in use, as +bytes at its start and -bytes at its end.
  std::vector<std::tuple<Picoseconds, std::int64_t, std::int64_t>> changes;
  auto retire = [&](const Region& region) {
    const std::int64_t bytes = region.box.bytes();
    const Picoseconds end = std::max(region.lastUse, region.from);
    changes.emplace_back(region.from, region.box.psum ? 0 : bytes, region.box.psum ? bytes : 0);
    changes.emplace_back(end, region.box.psum ? 0 : -bytes, region.box.psum ? -bytes : 0);
  };
  std::vector<Region> live;
  for (const Access& access : accesses) {
    for (const Box& box : *access.boxes) {
      if (!box.write) {
        for (Region& region : live) {
          if (region.box.overlaps(box)) {
            region.lastUse = std::max(region.lastUse, access.end);
          }
        }
        continue;
      }
      bool same = false;
      for (std::size_t k = 0; k < live.size();) {
        if (live[k].box.sameAs(box)) {
          live[k].lastUse = std::max(live[k].lastUse, access.end);
          same = true;
          ++k;
        } else if (live[k].box.overlaps(box)) {
          retire(live[k]);
          live[k] = live.back();
          live.pop_back();
        } else {
          ++k;
        }
      }
      if (!same) {
        live.push_back({box, access.start, access.end});
      }
    }
  }
  for (const Region& region : live) {
    retire(region);
  }
  std::stable_sort(changes.begin(), changes.end(), [](const auto& a, const auto& b) {
    return std::get<0>(a) < std::get<0>(b);
  });
  MemoryUse use;
  MemoryUseSample current;
  for (std::size_t i = 0; i < changes.size(); ++i) {
    current.time = std::get<0>(changes[i]);
    current.sbufBytes += std::get<1>(changes[i]);
    current.psumBytes += std::get<2>(changes[i]);
    if (i + 1 < changes.size() && std::get<0>(changes[i + 1]) == current.time) {
      continue;  // one sample per time
    }
    use.samples.push_back(current);
    use.sbufPeak = std::max(use.sbufPeak, current.sbufBytes);
    use.psumPeak = std::max(use.psumPeak, current.psumBytes);
  }
  return use;
}

std::vector<std::pair<std::int64_t, std::int64_t>> peakPerBin(const MemoryUse& use,
                                                              Picoseconds end, std::size_t bins) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out(bins, {0, 0});
  if (bins == 0 || end.count() <= 0) {
    return out;
  }
  const double width = static_cast<double>(end.count()) / static_cast<double>(bins);
  auto binOf = [&](Picoseconds t) {
    return std::min(bins - 1, static_cast<std::size_t>(static_cast<double>(t.count()) / width));
  };
  for (std::size_t i = 0; i < use.samples.size(); ++i) {
    const MemoryUseSample& s = use.samples[i];
    const Picoseconds until = i + 1 < use.samples.size() ? use.samples[i + 1].time : s.time;
    for (std::size_t b = binOf(s.time); b <= binOf(std::max(s.time, until)); ++b) {
      out[b].first = std::max(out[b].first, s.sbufBytes);
      out[b].second = std::max(out[b].second, s.psumBytes);
    }
  }
  return out;
}

}  // namespace trn::profile
