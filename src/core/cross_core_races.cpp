#include "cross_core_races.h"

#include <fmt/format.h>

#include <utility>

namespace trn::core {

CrossCoreRaces::CrossCoreRaces(std::vector<const NeuronCore*> cores,
                               std::function<std::string(std::uint32_t, AccessOwner)> describe)
    : cores_(std::move(cores)),
      arrivals_(cores_.size()),
      entries_(1),
      describe_(std::move(describe)) {}

std::vector<std::vector<std::uint8_t>> CrossCoreRaces::checkedTensors(
    std::span<const NeuronCore* const> cores) {
  std::vector<std::vector<std::uint8_t>> checked(cores.size());
  for (std::size_t c = 0; c < cores.size(); ++c) {
    const NeuronCore& a = *cores[c];
    const auto& tensors = a.program().tensors;
    checked[c].assign(tensors.size(), 0);
    for (std::size_t t = 0; t < tensors.size(); ++t) {
      const std::int64_t begin = a.tensorAddress(static_cast<std::int32_t>(t));
      const std::int64_t end = begin + tensors[t].byteSize();
      for (std::size_t d = 0; d < cores.size() && checked[c][t] == 0; ++d) {
        const NeuronCore& b = *cores[d];
        if (d == c || &b.device() != &a.device()) {
          continue;
        }
        for (std::size_t u = 0; u < b.program().tensors.size(); ++u) {
          const std::int64_t otherBegin = b.tensorAddress(static_cast<std::int32_t>(u));
          const std::int64_t otherEnd = otherBegin + b.program().tensors[u].byteSize();
          if (begin < otherEnd && otherBegin < end &&
              (a.writtenTensors()[t] || b.writtenTensors()[u])) {
            checked[c][t] = 1;
            break;
          }
        }
      }
    }
  }
  return checked;
}

template <typename Fn>
void CrossCoreRaces::forEachGranule(const isa::Footprint& f, std::int64_t base, Fn&& fn) {
  std::int64_t last = -1;
  auto range = [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t g = std::max(last + 1, (base + begin) >> kGranuleShift);
         g <= (base + end - 1) >> kGranuleShift; ++g) {
      fn(g);
      last = g;
    }
  };
  if (f.rows.rows > 0 && f.rows.length > 0) {
    for (std::int64_t r = 0; r < f.rows.rows; ++r) {
      const std::int64_t begin = f.rows.first + r * f.rows.stride;
      range(begin, begin + f.rows.length);
    }
  } else if (f.bytes.end > f.bytes.begin) {
    range(f.bytes.begin, f.bytes.end);
  }
}

bool CrossCoreRaces::precedes(Entry& e, std::uint32_t barriers) {
  const std::vector<VectorClock>& arrivals = arrivals_[e.core];
  while (e.firstBarrier == 0 && e.checkedArrivals < arrivals.size()) {
    const VectorClock& arrival = arrivals[e.checkedArrivals++];
    if (arrival[static_cast<std::size_t>(e.agent)] >= e.epoch) {
      e.firstBarrier = e.checkedArrivals;
    }
  }
  return e.firstBarrier != 0 && e.firstBarrier <= barriers;
}

Status CrossCoreRaces::test(std::uint32_t earlier, const Entry& entry, std::uint32_t barriers) {
  Entry& e = entries_[earlier];
  if ((!e.footprint.write && !entry.footprint.write) || precedes(e, barriers)) {
    return {};
  }
  isa::Footprint recorded = e.footprint;
  isa::AccessPattern recordedPattern;
  if (isa::overlapNeedsPatterns(recorded, entry.footprint)) {
    recordedPattern = operandPattern(cores_[e.core]->program(), e.owner, e.ordinal);
    recorded.pattern = &recordedPattern;
  }
  const std::optional<isa::ByteInterval> overlap =
      isa::firstDeviceOverlap(recorded, e.base, entry.footprint, entry.base);
  if (!overlap) {
    return {};
  }
  auto tensorName = [this](std::uint32_t core, std::int32_t tensor) {
    return cores_[core]->program().tensors[static_cast<std::size_t>(tensor)].name;
  };
  auto side = [&](const Entry& x) {
    return fmt::format("{} {} {}", describe_(x.core, x.owner),
                       x.footprint.write ? "writes" : "reads",
                       isa::describeRange(x.footprint, x.footprint.bytes, 0, 1,
                                          tensorName(x.core, x.footprint.tensor)));
  };
  return raceDetected(fmt::format(
      "race between cores: {} and {}, with no core barrier ordering them; they overlap at "
      "device bytes {}..{}",
      side(e), side(entry), overlap->begin, overlap->end - 1));
}

std::uint32_t* CrossCoreRaces::slotsOf(std::int64_t granule) {
  const std::int64_t page = granule >> kPageShift;
  const std::size_t perGranule = 2 * cores_.size();
  if (page != lastPage_) {
    std::unique_ptr<std::uint32_t[]>& slots = pages_[page];
    if (slots == nullptr) {
      slots = std::make_unique<std::uint32_t[]>(perGranule << kPageShift);  // kNone-filled
    }
    lastPage_ = page;
    lastPageSlots_ = slots.get();
  }
  return lastPageSlots_ + (granule & ((std::int64_t{1} << kPageShift) - 1)) * perGranule;
}

Status CrossCoreRaces::access(std::uint32_t core, int agent, AccessOwner owner,
                              const VectorClock& clock, std::span<const Operand> operands,
                              std::span<const std::uint8_t> checked) {
  const std::uint32_t barriers = clock[static_cast<std::size_t>(kBarrierSlot)];
  bool decoded = false;
  for (const Operand& o : operands) {
    if (o.memory != isa::Memory::kHbm || o.tensor < 0 ||
        static_cast<std::size_t>(o.tensor) >= checked.size() ||
        checked[static_cast<std::size_t>(o.tensor)] == 0) {
      continue;
    }
    if (!decoded) {
      cores_[core]->program().stream(owner.engine).decodeBody(owner.index, body_);
      decoded = true;
    }
    Entry entry;
    entry.footprint = isa::Footprint::of(operandPattern(body_, o.ordinal), o.write);
    entry.base = cores_[core]->tensorAddress(o.tensor);
    entry.core = core;
    entry.epoch = clock[static_cast<std::size_t>(agent)];
    entry.agent = agent;
    entry.owner = owner;
    entry.ordinal = o.ordinal;
    const auto id = static_cast<std::uint32_t>(entries_.size());
    // In each granule: test against the other cores' entries, then record this one (an earlier
    // entry met in several granules in a row is tested once).
    std::uint32_t lastTested = kNone;
    Status status;
    forEachGranule(entry.footprint, entry.base, [&](std::int64_t granule) {
      std::uint32_t* slot = slotsOf(granule);
      for (std::size_t k = 0; k < cores_.size() && status.ok(); ++k) {
        if (k == core || &cores_[k]->device() != &cores_[core]->device()) {
          continue;
        }
        for (const std::uint32_t earlier : {slot[2 * k + 1], o.write ? slot[2 * k] : kNone}) {
          if (earlier != kNone && earlier != lastTested && status.ok()) {
            lastTested = earlier;
            status = test(earlier, entry, barriers);
          }
        }
      }
      slot[2 * core] = id;
      if (o.write) {
        slot[2 * core + 1] = id;
      }
    });
    TRN_RETURN_IF_ERROR(status);
    entry.footprint.pattern = nullptr;
    entries_.push_back(entry);
  }
  return {};
}

}  // namespace trn::core
