#include "trn/core/hazard_detector.h"

#include <fmt/format.h>

#include <algorithm>

#include "trn/base/check.h"

namespace trn::core {

namespace {

constexpr std::uint64_t kPruneInterval = 1024;

void joinInto(VectorClock& into, const VectorClock& other) {
  for (std::size_t i = 0; i < into.size(); ++i) {
    into[i] = std::max(into[i], other[i]);
  }
}

}  // namespace

HazardDetector::HazardDetector(int semaphores, int queues,
                               std::function<std::string(AccessOwner)> describe,
                               std::function<std::string(std::int32_t)> tensorName)
    : agents_(isa::kNumEngines + queues),
      clocks_(static_cast<std::size_t>(agents_), VectorClock{}),
      semaphoreClocks_(static_cast<std::size_t>(semaphores), VectorClock{}),
      history_(static_cast<std::size_t>(agents_)),
      historyStart_(static_cast<std::size_t>(agents_), 0),
      describe_(std::move(describe)),
      tensorName_(std::move(tensorName)) {
  TRN_CHECK(agents_ <= kMaxAgents) << "too many DMA queues for race detection: " << queues;
  for (int a = 0; a < agents_; ++a) {
    clocks_[static_cast<std::size_t>(a)][static_cast<std::size_t>(a)] = 1;
  }
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

Status HazardDetector::access(int agent, AccessOwner owner,
                              const std::vector<Footprint>& footprints) {
  const VectorClock& now = clocks_[static_cast<std::size_t>(agent)];
  for (int other = 0; other < agents_; ++other) {
    if (other == agent) {
      continue;
    }
    const auto& entries = history_[static_cast<std::size_t>(other)];
    const std::uint32_t seen = now[static_cast<std::size_t>(other)];
    const std::size_t first = historyStart_[static_cast<std::size_t>(other)];
    for (std::size_t i = entries.size(); i-- > first && entries[i].epoch > seen;) {
      const Entry& earlier = entries[i];
      for (const Footprint& f : footprints) {
        if (!f.write && !earlier.footprint.write) {
          continue;
        }
        const auto overlap = firstOverlap(earlier.footprint, f);
        if (!overlap) {
          continue;
        }
        const std::int64_t firstPartition =
            std::max(earlier.footprint.firstPartition, f.firstPartition);
        const std::int64_t endPartition = std::min(earlier.footprint.endPartition, f.endPartition);
        const std::string tensor = f.tensor >= 0 ? tensorName_(f.tensor) : std::string();
        return failedPrecondition(fmt::format(
            "race: {} {} and {} {} overlap at {} with no semaphore ordering them",
            describe_(earlier.owner), earlier.footprint.write ? "writes" : "reads",
            describe_(owner), f.write ? "writes" : "reads",
            describeRange(f, *overlap, firstPartition, endPartition, tensor)));
      }
    }
  }
  auto& mine = history_[static_cast<std::size_t>(agent)];
  const std::uint32_t epoch = now[static_cast<std::size_t>(agent)];
  for (const Footprint& f : footprints) {
    mine.push_back(Entry{epoch, owner, f});
  }
  if (++sincePrune_ >= kPruneInterval) {
    prune();
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
    auto& entries = history_[static_cast<std::size_t>(a)];
    std::size_t& start = historyStart_[static_cast<std::size_t>(a)];
    if (!anyLive) {
      start = entries.size();
    }
    while (start < entries.size() && entries[start].epoch <= low[static_cast<std::size_t>(a)]) {
      ++start;
    }
    if (start > 4096 && start * 2 > entries.size()) {
      entries.erase(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(start));
      start = 0;
    }
  }
}

}  // namespace trn::core
