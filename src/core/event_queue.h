// Internal to the scheduler (simulation.cpp): its event queue. Events are ordered by (time,
// kind, sequence), so runs are deterministic: completions before DMA progress before issue, and
// otherwise in the order they were scheduled. The ready events (an engine may issue) are most
// events and each engine has at most one pending, so they live in one slot per engine of each
// core rather than in the heap. A tournament tree over the cores keeps the first slot of each
// core and of each subtree, so taking a ready event rescans one core's slots and then one path
// of the tree: its cost grows with the logarithm of the cores, not with their number.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
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
    leaves_ = std::bit_ceil(std::max<std::size_t>(cores, 1));
    first_.assign(2 * leaves_, Event{Event::kNever, 0, 0, 0});
    sequence_ = 0;
  }

  /// Schedules an event; a kReady one for engine `payload` of `core`, which must have none
  /// pending.
  void schedule(std::int64_t time, EventKind kind, std::uint32_t core, std::uint32_t payload) {
    const std::uint64_t order =
        (static_cast<std::uint64_t>(kind) << Event::kKindShift) | sequence_++;
    const Event event{time, order, core, payload};
    if (kind != EventKind::kReady) {
      events_.push(event);
      return;
    }
    ready_[core * isa::kNumEngines + payload] = event;
    // The slot was empty, so the first of the core's leaf and of each subtree above it can only
    // become this one; where it does not, it does not above either.
    for (std::size_t node = leaves_ + core; node != 0 && first_[node] > event; node /= 2) {
      first_[node] = event;
    }
  }

  /// Takes the first event into `event`; false when the queue is empty.
  bool pop(Event& event) {
    const Event& ready = first_[1];
    if (!events_.empty() && ready > events_.top()) {
      event = events_.top();
      events_.pop();
      return true;
    }
    if (ready.time == Event::kNever) {
      return false;
    }
    event = ready;
    ready_[event.core * isa::kNumEngines + event.payload].time = Event::kNever;
    refreshCore(event.core);
    return true;
  }

  /// Whether any event is pending at or before `time`.
  [[nodiscard]] bool anyPendingBy(std::int64_t time) const {
    return (!events_.empty() && events_.top().time <= time) || first_[1].time <= time;
  }

 private:
  /// Core `core`'s slot was emptied: finds its first slot again and the first of every subtree
  /// above it.
  void refreshCore(std::uint32_t core) {
    const Event* const slots = &ready_[core * isa::kNumEngines];
    const Event* first = slots;
    for (const Event* slot = slots + 1; slot != slots + isa::kNumEngines; ++slot) {
      if (*first > *slot) {
        first = slot;
      }
    }
    std::size_t node = leaves_ + core;
    first_[node] = *first;
    for (node /= 2; node != 0; node /= 2) {
      const Event& left = first_[2 * node];
      const Event& right = first_[2 * node + 1];
      first_[node] = left > right ? right : left;
    }
  }

  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::vector<Event> ready_;  ///< one slot per engine of each core (time kNever: none)
  std::size_t leaves_ = 1;    ///< cores, rounded up to a power of two
  /// A tournament tree of copies of ready slots: first_[leaves_ + c] is core c's first,
  /// first_[n] the earlier of first_[2n] and first_[2n + 1] (time kNever: none).
  std::vector<Event> first_;
  std::uint64_t sequence_ = 0;
};

}  // namespace trn::core
