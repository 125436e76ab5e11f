// Internal to the scheduler (simulation.cpp): its event queue. Events are ordered by (time,
// kind, sequence), so runs are deterministic: completions before DMA progress before issue, and
// otherwise in the order they were scheduled. The ready events (an engine may issue) are most
// events and each engine has at most one pending, so they live in one slot per engine of each
// core rather than in the heap; the first slot of each core and the first of those are cached
// until their slot is taken, so taking one rescans one core's slots and the cores' firsts.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <span>
#include <vector>

#include "trn/isa/engine.h"

namespace trn::core {

enum class EventKind : std::uint8_t { kComplete, kDma, kReady };

struct Event {
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
  static constexpr int kKindShift = 62;

  std::int64_t time;
  std::uint64_t order;  ///< kind in the top bits, then the sequence number: one comparison
  std::uint32_t core;
  std::uint32_t payload;  ///< completion slot (kComplete) or engine (kReady)

  [[nodiscard]] EventKind kind() const { return static_cast<EventKind>(order >> kKindShift); }
  bool operator>(const Event& other) const {
    return time != other.time ? time > other.time : order > other.order;
  }
};

class EventQueue {
 public:
  /// Empties the queue for a run of `cores` cores.
  void reset(std::size_t cores) {
    events_ = {};
    ready_.assign(cores * isa::kNumEngines, Event{Event::kNever, 0, 0, 0});
    for (std::size_t c = 0; c < cores; ++c) {
      for (std::size_t e = 0; e < isa::kNumEngines; ++e) {
        ready_[c * isa::kNumEngines + e].core = static_cast<std::uint32_t>(c);
      }
    }
    firstReady_ = nullptr;
    coreFirstReady_.assign(cores, nullptr);
    sequence_ = 0;
  }

  /// Schedules an event; a kReady one for engine `payload` of `core`, which must have none
  /// pending.
  void schedule(std::int64_t time, EventKind kind, std::uint32_t core, std::uint32_t payload) {
    const std::uint64_t order =
        (static_cast<std::uint64_t>(kind) << Event::kKindShift) | sequence_++;
    if (kind != EventKind::kReady) {
      events_.push(Event{time, order, core, payload});
      return;
    }
    // The slot was empty, so a cached first can only become this one.
    Event& slot = ready_[core * isa::kNumEngines + payload];
    slot = Event{time, order, core, payload};
    for (Event** first : {&coreFirstReady_[core], &firstReady_}) {
      if (*first != nullptr && ((*first)->time == Event::kNever || **first > slot)) {
        *first = &slot;
      }
    }
  }

  /// Takes the first event into `event`; false when the queue is empty.
  bool pop(Event& event) {
    Event* ready = firstReady();
    if (!events_.empty() && (ready == nullptr || *ready > events_.top())) {
      event = events_.top();
      events_.pop();
      return true;
    }
    if (ready == nullptr) {
      return false;
    }
    event = *ready;
    ready->time = Event::kNever;
    if (ready == coreFirstReady_[ready->core]) {
      coreFirstReady_[ready->core] = nullptr;
    }
    firstReady_ = nullptr;  // it was the first
    return true;
  }

  /// Whether any event is pending at or before `time`.
  [[nodiscard]] bool anyPendingBy(std::int64_t time) {
    if (!events_.empty() && events_.top().time <= time) {
      return true;
    }
    const Event* first = firstReady();
    return first != nullptr && first->time <= time;
  }

 private:
  /// The ready slot that comes first, or nullptr when no engine is waiting to issue.
  [[nodiscard]] Event* firstReady() {
    if (firstReady_ == nullptr) {
      for (std::size_t c = 0; c < coreFirstReady_.size(); ++c) {
        Event*& coreFirst = coreFirstReady_[c];
        if (coreFirst == nullptr) {
          // An empty slot's time is kNever: it never comes first.
          const std::span<Event> slots =
              std::span(ready_).subspan(c * isa::kNumEngines, isa::kNumEngines);
          coreFirst = &slots[0];
          for (Event& slot : slots.subspan(1)) {
            if (*coreFirst > slot) {
              coreFirst = &slot;
            }
          }
        }
        if (firstReady_ == nullptr || *firstReady_ > *coreFirst) {
          firstReady_ = coreFirst;
        }
      }
    }
    return firstReady_->time != Event::kNever ? firstReady_ : nullptr;
  }

  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::vector<Event> ready_;            ///< one slot per engine of each core
  Event* firstReady_ = nullptr;         ///< the first of ready_, or null when it must be found
  std::vector<Event*> coreFirstReady_;  ///< per core, the first of its slots, or null
  std::uint64_t sequence_ = 0;
};

}  // namespace trn::core
