// Races on semaphore conditions: a wait whose outcome depends on timing. A wait holds while its
// condition (s >= v, or s == v) is true, and an update can make a true condition false again (a
// subtraction, a set, or any change for ==). The span of time between the update that makes a
// condition true and the one that makes it false is a window. A wait that passes in a window
// (or could have) must be ordered, by happens-before, with the update that closes the window;
// otherwise another timing lets the wait pass or block, and the verdict of a run would depend on
// the mode or the chip. The rules, checked in every mode when races are detected:
//   A. an update that closes a window must happen after every wait that passed in it;
//   B. a wait, when it passes or when the run deadlocks with it blocked, must happen after every
//      update that closed an earlier window of its condition (else it could have passed there).
// Conditions that no update of the program can make false (>= waits on a semaphore that is only
// ever increased, which is all the kernel compiler emits) are never tracked, so they cost nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "trn/base/status.h"
#include "trn/core/hazard_detector.h"
#include "trn/isa/program.h"

namespace trn::core {

class WaitRaceDetector {
 public:
  /// Finds the program's wait conditions that some update can make false. `describe` names an
  /// instruction in messages.
  WaitRaceDetector(const isa::Program& program, int semaphores,
                   std::function<std::string(AccessOwner)> describe);

  /// Wait `w` of `owner`, issued by `agent` whose clock (before it joins the semaphore's
  /// updates) is `clock`, holds and passes now. Checks rule B and records the pass.
  Status passed(const isa::SemaphoreWait& w, int agent, const VectorClock& clock,
                AccessOwner owner);

  /// An update of `owner` (made by `agent` with clock `clock`) changes semaphore `s` from
  /// `before` to `after`. Checks rule A for the windows it closes.
  Status updated(int s, std::int32_t before, std::int32_t after, int agent,
                 const VectorClock& clock, AccessOwner owner);

  /// Rule B for wait `w` of `owner`, blocked at a deadlock: the explanation when it could have
  /// passed in an earlier window, else empty.
  [[nodiscard]] std::string couldHavePassed(const isa::SemaphoreWait& w,
                                            const VectorClock& clock, AccessOwner owner) const;

 private:
  /// One tracked condition of one semaphore and the events that matter for it.
  struct Condition {
    isa::WaitCompare compare = isa::WaitCompare::kGreaterEqual;
    std::int32_t value = 0;
    /// Per agent, the epoch of its latest wait that passed in the open window (0: none), and
    /// which instruction that was.
    VectorClock passes{};
    std::vector<AccessOwner> passOwners;
    /// Per agent, the epoch of its latest update that closed a window (0: none), and which.
    VectorClock closings{};
    std::vector<AccessOwner> closingOwners;
    bool everClosed = false;

    [[nodiscard]] bool holds(std::int32_t s) const {
      return compare == isa::WaitCompare::kEqual ? s == value : s >= value;
    }
  };

  [[nodiscard]] const Condition* find(const isa::SemaphoreWait& w) const;
  [[nodiscard]] Condition* find(const isa::SemaphoreWait& w);
  [[nodiscard]] std::string raceMessage(const isa::SemaphoreWait& w, AccessOwner wait,
                                        AccessOwner update, bool passedFirst) const;

  std::vector<std::vector<Condition>> conditions_;  ///< by semaphore; mostly empty
  std::function<std::string(AccessOwner)> describe_;
};

}  // namespace trn::core
