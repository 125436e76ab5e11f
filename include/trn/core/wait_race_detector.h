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

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "trn/base/status.h"
#include "trn/core/hazard_detector.h"
#include "trn/isa/program.h"
#include "trn/isa/verifier.h"

namespace trn::core {

class WaitRaceDetector {
 public:
  /// The most wait conditions tracked (distinct (semaphore, comparison, value) that an update
  /// can make false); each keeps about 600 bytes. More is an error from create().
  static constexpr std::size_t kMaxTrackedConditions = 65536;

  /// Finds the program's wait conditions that some update can make false, from how it uses each
  /// semaphore (isa::verifyProgram); only then does it read the program's waits. `describe`
  /// names an instruction in messages.
  static Result<WaitRaceDetector> create(const isa::Program& program,
                                         const std::vector<isa::SemaphoreUse>& use,
                                         std::function<std::string(AccessOwner)> describe);

  /// Wait `w` of `owner`, issued by `agent` whose clock (before it joins the semaphore's
  /// updates) is `clock`, holds and passes now. Checks rule B and records the pass.
  Status passed(const isa::SemaphoreWait& w, int agent, const VectorClock& clock,
                AccessOwner owner) {
    return tracked(w.semaphore) ? passedTracked(w, agent, clock, owner) : Status();
  }

  /// An update of `owner` (made by `agent` with clock `clock`) changes semaphore `s` from
  /// `before` to `after`. Checks rule A for the windows it closes.
  Status updated(int s, std::int32_t before, std::int32_t after, int agent,
                 const VectorClock& clock, AccessOwner owner) {
    return tracked(s) && before != after ? updatedTracked(s, before, after, agent, clock, owner)
                                         : Status();
  }

  /// Rule B for wait `w` of `owner`, blocked at a deadlock: the explanation when it could have
  /// passed in an earlier window, else empty.
  [[nodiscard]] std::string couldHavePassed(const isa::SemaphoreWait& w,
                                            const VectorClock& clock, AccessOwner owner) const;

 private:
  /// One tracked condition and the events that matter for it.
  struct Condition {
    std::int32_t value = 0;
    bool everClosed = false;
    /// Per agent, the epoch of its latest wait that passed in the open window (0: none), and
    /// which instruction that was.
    VectorClock passes{};
    std::array<AccessOwner, kMaxAgents> passOwners{};
    /// Per agent, the epoch of its latest update that closed a window (0: none), and which.
    VectorClock closings{};
    std::array<AccessOwner, kMaxAgents> closingOwners{};
  };
  /// The tracked conditions of one semaphore, each kind sorted by value.
  struct Semaphore {
    std::vector<Condition> atLeast;  ///< s >= value
    std::vector<Condition> equal;    ///< s == value
  };

  explicit WaitRaceDetector(std::function<std::string(AccessOwner)> describe)
      : describe_(std::move(describe)) {}

  [[nodiscard]] bool tracked(int s) const { return tracked_[static_cast<std::size_t>(s)] != 0; }
  Status passedTracked(const isa::SemaphoreWait& w, int agent, const VectorClock& clock,
                       AccessOwner owner);
  Status updatedTracked(int s, std::int32_t before, std::int32_t after, int agent,
                        const VectorClock& clock, AccessOwner owner);
  /// Rule A for the window of `c` that the update closes, then records the closing.
  Status close(Condition& c, const isa::SemaphoreWait& w, int agent, const VectorClock& clock,
               AccessOwner owner);
  /// The tracked condition of `w` in `self` (const or not), or null.
  template <typename Self>
  static auto* find(Self& self, const isa::SemaphoreWait& w);
  [[nodiscard]] std::string missedWindow(const Condition& c, const isa::SemaphoreWait& w,
                                         const VectorClock& clock, AccessOwner owner) const;
  [[nodiscard]] std::string raceMessage(const isa::SemaphoreWait& w, AccessOwner wait,
                                        AccessOwner update, bool passedFirst) const;

  std::vector<Semaphore> semaphores_;   ///< by semaphore; mostly empty
  std::vector<std::uint8_t> tracked_;  ///< by semaphore: it has a tracked condition
  std::function<std::string(AccessOwner)> describe_;
};

}  // namespace trn::core
