#include "trn/core/wait_race_detector.h"

#include <fmt/format.h>

#include <algorithm>

namespace trn::core {
namespace {

bool byValue(const auto& c, std::int32_t value) { return c.value < value; }

}  // namespace

Result<WaitRaceDetector> WaitRaceDetector::create(
    const isa::Program& program, const std::vector<isa::SemaphoreUse>& use,
    std::function<std::string(AccessOwner)> describe) {
  WaitRaceDetector detector(std::move(describe));
  const std::size_t count = use.size();
  detector.semaphores_.resize(count);
  detector.tracked_.assign(count, 0);
  // A >= window closes only on a semaphore that some update lowers, an == window on one that
  // some update changes.
  auto closable = [&use](const isa::SemaphoreWait& w) {
    const isa::SemaphoreUse& u = use[static_cast<std::size_t>(w.semaphore)];
    return w.compare == isa::WaitCompare::kEqual ? u.changed : u.lowered;
  };
  if (std::none_of(use.begin(), use.end(), [](const isa::SemaphoreUse& u) {
        return (u.waitedAtLeast && u.lowered) || (u.waitedEqual && u.changed);
      })) {
    return detector;  // the common case: only >= waits on semaphores that only grow
  }
  // The distinct conditions of the waits on those semaphores, compacted as they come so that
  // a program of millions of waits never holds more than a few times the limit.
  std::vector<std::vector<std::int32_t>> atLeast(count);
  std::vector<std::vector<std::int32_t>> equal(count);
  std::size_t held = 0;
  auto compact = [&]() -> std::size_t {
    std::size_t distinct = 0;
    for (auto* lists : {&atLeast, &equal}) {
      for (std::vector<std::int32_t>& values : *lists) {
        std::sort(values.begin(), values.end());
        values.erase(std::unique(values.begin(), values.end()), values.end());
        distinct += values.size();
      }
    }
    return distinct;
  };
  const Status tooMany = unsupported(fmt::format(
      "the program waits on more than {} distinct conditions of semaphores that it also lowers "
      "or sets; race detection follows at most that many (run without it: --allow-races)",
      kMaxTrackedConditions));
  for (const auto& stream : program.streams) {
    for (const isa::Instruction& instr : stream) {
      for (const isa::SemaphoreWait& w : instr.sync.waits) {
        if (!closable(w)) {
          continue;
        }
        (w.compare == isa::WaitCompare::kEqual ? equal : atLeast)[static_cast<std::size_t>(
            w.semaphore)]
            .push_back(w.value);
        if (++held > 4 * kMaxTrackedConditions) {
          held = compact();
          if (held > kMaxTrackedConditions) {
            return tooMany;
          }
        }
      }
    }
  }
  if (compact() > kMaxTrackedConditions) {
    return tooMany;
  }
  for (std::size_t s = 0; s < count; ++s) {
    Semaphore& sem = detector.semaphores_[s];
    for (auto [values, conditions] : {std::pair{&atLeast[s], &sem.atLeast},
                                      std::pair{&equal[s], &sem.equal}}) {
      conditions->resize(values->size());
      for (std::size_t i = 0; i < values->size(); ++i) {
        (*conditions)[i].value = (*values)[i];
      }
    }
    detector.tracked_[s] = sem.atLeast.empty() && sem.equal.empty() ? 0 : 1;
  }
  return detector;
}

template <typename Self>
auto* WaitRaceDetector::find(Self& self, const isa::SemaphoreWait& w) {
  auto& sem = self.semaphores_[static_cast<std::size_t>(w.semaphore)];
  auto& list = w.compare == isa::WaitCompare::kEqual ? sem.equal : sem.atLeast;
  const auto it = std::lower_bound(list.begin(), list.end(), w.value, byValue<Condition>);
  return it != list.end() && it->value == w.value ? &*it : nullptr;
}

std::string WaitRaceDetector::raceMessage(const isa::SemaphoreWait& w, AccessOwner wait,
                                          AccessOwner update, bool passedFirst) const {
  const std::string condition =
      fmt::format("s{} {} {}", w.semaphore, isa::enumName(w.compare), w.value);
  const std::string what =
      passedFirst
          ? fmt::format("{} passed its wait for {}, and then {} ended that condition without "
                        "being ordered after the wait",
                        describe_(wait), condition, describe_(update))
          : fmt::format("{} waits for {}, which held until {} ended it; that update is not "
                        "ordered before the wait, so the wait could have passed then",
                        describe_(wait), condition, describe_(update));
  return fmt::format("race on semaphore s{}: {}; whether the wait passes depends on timing (order "
                     "the update after the wait with another semaphore, or wait with >=)",
                     w.semaphore, what);
}

std::string WaitRaceDetector::missedWindow(const Condition& c, const isa::SemaphoreWait& w,
                                           const VectorClock& clock, AccessOwner owner) const {
  if (!c.everClosed) {
    return {};
  }
  for (std::size_t u = 0; u < kMaxAgents; ++u) {
    if (c.closings[u] > clock[u]) {
      return raceMessage(w, owner, c.closingOwners[u], false);
    }
  }
  return {};
}

Status WaitRaceDetector::passedTracked(const isa::SemaphoreWait& w, int agent,
                                       const VectorClock& clock, AccessOwner owner) {
  Condition* c = find(*this, w);
  if (c == nullptr) {
    return {};
  }
  if (std::string race = missedWindow(*c, w, clock, owner); !race.empty()) {
    return raceDetected(std::move(race));
  }
  const auto a = static_cast<std::size_t>(agent);
  c->passes[a] = clock[a];
  c->passOwners[a] = owner;
  return {};
}

Status WaitRaceDetector::close(Condition& c, const isa::SemaphoreWait& w, int agent,
                               const VectorClock& clock, AccessOwner owner) {
  for (std::size_t a = 0; a < kMaxAgents; ++a) {
    if (c.passes[a] > clock[a]) {
      return raceDetected(raceMessage(w, c.passOwners[a], owner, true));
    }
  }
  const auto u = static_cast<std::size_t>(agent);
  c.closings[u] = clock[u];
  c.closingOwners[u] = owner;
  c.everClosed = true;
  return {};
}

Status WaitRaceDetector::updatedTracked(int s, std::int32_t before, std::int32_t after,
                                        int agent, const VectorClock& clock, AccessOwner owner) {
  Semaphore& sem = semaphores_[static_cast<std::size_t>(s)];
  // ==: the window of `before` closes and the window of `after` opens.
  const isa::SemaphoreWait closed{s, isa::WaitCompare::kEqual, before};
  if (Condition* closing = find(*this, closed)) {
    TRN_RETURN_IF_ERROR(close(*closing, closed, agent, clock, owner));
  }
  if (Condition* opening = find(*this, isa::SemaphoreWait{s, isa::WaitCompare::kEqual, after})) {
    opening->passes = VectorClock{};
  }
  // >=: lowering closes the conditions with after < value <= before; raising opens
  // before < value <= after.
  const std::int32_t low = std::min(before, after);
  const std::int32_t high = std::max(before, after);
  auto first = std::upper_bound(sem.atLeast.begin(), sem.atLeast.end(), low,
                                [](std::int32_t v, const Condition& c) { return v < c.value; });
  for (auto it = first; it != sem.atLeast.end() && it->value <= high; ++it) {
    if (after < before) {
      TRN_RETURN_IF_ERROR(
          close(*it, {s, isa::WaitCompare::kGreaterEqual, it->value}, agent, clock, owner));
    } else {
      it->passes = VectorClock{};
    }
  }
  return {};
}

std::string WaitRaceDetector::couldHavePassed(const isa::SemaphoreWait& w,
                                              const VectorClock& clock, AccessOwner owner) const {
  const Condition* c = tracked(w.semaphore) ? find(*this, w) : nullptr;
  return c == nullptr ? std::string() : missedWindow(*c, w, clock, owner);
}

}  // namespace trn::core
