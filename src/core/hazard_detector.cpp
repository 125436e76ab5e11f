#include "trn/core/hazard_detector.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "trn/base/check.h"

namespace trn::core {

using isa::describeRange;
using isa::firstOverlap;

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

Status HazardDetector::access(int agent, AccessOwner owner, std::span<const Footprint> footprints) {
  const VectorClock& now = clocks_[static_cast<std::size_t>(agent)];
  for (int other = 0; other < agents_; ++other) {
    if (other == agent) {
      continue;
    }
    const History& h = history_[static_cast<std::size_t>(other)];
    const std::uint32_t seen = now[static_cast<std::size_t>(other)];
    for (std::size_t i = h.boxes.size(); i-- > h.start && h.boxes[i].epoch > seen;) {
      const Box& box = h.boxes[i];
      for (const Footprint& f : footprints) {
        if ((!f.write && !box.write) || box.memory != f.memory || box.tensor != f.tensor ||
            box.firstPartition >= f.endPartition || f.firstPartition >= box.endPartition ||
            box.begin >= f.bytes.end || f.bytes.begin >= box.end) {
          continue;
        }
        const Detail& earlier = h.details[i];
        const auto overlap = firstOverlap(earlier.footprint, f);
        if (!overlap) {
          continue;
        }
        const std::int64_t firstPartition =
            std::max(earlier.footprint.firstPartition, f.firstPartition);
        const std::int64_t endPartition = std::min(earlier.footprint.endPartition, f.endPartition);
        const std::string tensor = f.tensor >= 0 ? tensorName_(f.tensor) : std::string();
        const Footprint& e = earlier.footprint;
        return failedPrecondition(fmt::format(
            "race: {} {} {} and {} {} {}, with no semaphore ordering them; they overlap at {}",
            describe_(earlier.owner), e.write ? "writes" : "reads",
            describeRange(e, e.bytes, e.firstPartition, e.endPartition, tensor), describe_(owner),
            f.write ? "writes" : "reads",
            describeRange(f, f.bytes, f.firstPartition, f.endPartition, tensor),
            describeRange(f, *overlap, firstPartition, endPartition, tensor)));
      }
    }
  }
  History& mine = history_[static_cast<std::size_t>(agent)];
  const std::uint32_t epoch = now[static_cast<std::size_t>(agent)];
  for (const Footprint& f : footprints) {
    mine.boxes.push_back(
        Box{epoch, f.tensor, f.memory, f.write, static_cast<std::int32_t>(f.firstPartition),
            static_cast<std::int32_t>(f.endPartition), f.bytes.begin, f.bytes.end});
    mine.details.push_back(Detail{owner, f});
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
    History& h = history_[static_cast<std::size_t>(a)];
    if (!anyLive) {
      h.start = h.boxes.size();
    }
    while (h.start < h.boxes.size() && h.boxes[h.start].epoch <= low[static_cast<std::size_t>(a)]) {
      ++h.start;
    }
    if (h.start > 4096 && h.start * 2 > h.boxes.size()) {
      const auto dead = static_cast<std::ptrdiff_t>(h.start);
      h.boxes.erase(h.boxes.begin(), h.boxes.begin() + dead);
      h.details.erase(h.details.begin(), h.details.begin() + dead);
      h.start = 0;
    }
  }
}

}  // namespace trn::core
