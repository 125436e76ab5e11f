#include "trn/core/wait_race_detector.h"

#include <fmt/format.h>

#include <algorithm>

namespace trn::core {
namespace {

/// Whether an update can lower a semaphore (and so end a >= window).
bool lowers(const isa::SemaphoreUpdate& u) {
  switch (u.op) {
    case isa::SemaphoreUpdateOp::kAdd: return u.value < 0;
    case isa::SemaphoreUpdateOp::kSubtract: return u.value > 0;
    case isa::SemaphoreUpdateOp::kSet: return true;
  }
  return true;
}

/// Whether an update can change a semaphore (and so end an == window).
bool changes(const isa::SemaphoreUpdate& u) {
  return u.op == isa::SemaphoreUpdateOp::kSet || u.value != 0;
}

}  // namespace

WaitRaceDetector::WaitRaceDetector(const isa::Program& program, int semaphores,
                                   std::function<std::string(AccessOwner)> describe)
    : conditions_(static_cast<std::size_t>(semaphores)), describe_(std::move(describe)) {
  std::vector<bool> lowered(conditions_.size(), false);
  std::vector<bool> changed(conditions_.size(), false);
  for (const auto& stream : program.streams) {
    for (const isa::Instruction& instr : stream) {
      for (const isa::SemaphoreUpdate& u : instr.sync.updates) {
        const auto s = static_cast<std::size_t>(u.semaphore);
        lowered[s] = lowered[s] || lowers(u);
        changed[s] = changed[s] || changes(u);
      }
    }
  }
  for (const auto& stream : program.streams) {
    for (const isa::Instruction& instr : stream) {
      for (const isa::SemaphoreWait& w : instr.sync.waits) {
        const auto s = static_cast<std::size_t>(w.semaphore);
        const bool canClose = w.compare == isa::WaitCompare::kEqual ? changed[s] : lowered[s];
        if (!canClose || find(w) != nullptr) {
          continue;
        }
        Condition c;
        c.compare = w.compare;
        c.value = w.value;
        c.passOwners.resize(kMaxAgents);
        c.closingOwners.resize(kMaxAgents);
        conditions_[s].push_back(std::move(c));
      }
    }
  }
}

WaitRaceDetector::Condition* WaitRaceDetector::find(const isa::SemaphoreWait& w) {
  for (Condition& c : conditions_[static_cast<std::size_t>(w.semaphore)]) {
    if (c.compare == w.compare && c.value == w.value) {
      return &c;
    }
  }
  return nullptr;
}

const WaitRaceDetector::Condition* WaitRaceDetector::find(const isa::SemaphoreWait& w) const {
  return const_cast<WaitRaceDetector*>(this)->find(w);
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

Status WaitRaceDetector::passed(const isa::SemaphoreWait& w, int agent, const VectorClock& clock,
                                AccessOwner owner) {
  Condition* found = find(w);
  if (found == nullptr) {
    return {};
  }
  Condition& c = *found;
  if (c.everClosed) {
    for (int u = 0; u < kMaxAgents; ++u) {
      if (c.closings[static_cast<std::size_t>(u)] > clock[static_cast<std::size_t>(u)]) {
        return failedPrecondition(
            raceMessage(w, owner, c.closingOwners[static_cast<std::size_t>(u)], false));
      }
    }
  }
  c.passes[static_cast<std::size_t>(agent)] = clock[static_cast<std::size_t>(agent)];
  c.passOwners[static_cast<std::size_t>(agent)] = owner;
  return {};
}

Status WaitRaceDetector::updated(int s, std::int32_t before, std::int32_t after, int agent,
                                 const VectorClock& clock, AccessOwner owner) {
  for (Condition& c : conditions_[static_cast<std::size_t>(s)]) {
    const bool was = c.holds(before);
    const bool is = c.holds(after);
    if (was == is) {
      continue;
    }
    if (is) {  // a window opens
      c.passes = VectorClock{};
      continue;
    }
    for (int a = 0; a < kMaxAgents; ++a) {
      if (c.passes[static_cast<std::size_t>(a)] > clock[static_cast<std::size_t>(a)]) {
        const isa::SemaphoreWait w{s, c.compare, c.value};
        return failedPrecondition(
            raceMessage(w, c.passOwners[static_cast<std::size_t>(a)], owner, true));
      }
    }
    c.closings[static_cast<std::size_t>(agent)] = clock[static_cast<std::size_t>(agent)];
    c.closingOwners[static_cast<std::size_t>(agent)] = owner;
    c.everClosed = true;
  }
  return {};
}

std::string WaitRaceDetector::couldHavePassed(const isa::SemaphoreWait& w,
                                              const VectorClock& clock, AccessOwner owner) const {
  const Condition* c = find(w);
  if (c == nullptr || !c->everClosed) {
    return {};
  }
  for (int u = 0; u < kMaxAgents; ++u) {
    if (c->closings[static_cast<std::size_t>(u)] > clock[static_cast<std::size_t>(u)]) {
      return raceMessage(w, owner, c->closingOwners[static_cast<std::size_t>(u)], false);
    }
  }
  return {};
}

}  // namespace trn::core
