// Internal to the scheduler (simulation.cpp): its event queue. Events are ordered by (time,
// kind, sequence), so runs are deterministic: completions before DMA progress before issue, and
// otherwise in the order they were scheduled. The ready events (an engine may issue) are most
// events and each engine has at most one pending, so they live in one slot per engine of each
// core rather than in the heap. Each core's first slot is kept, and a winner tree over the cores
// holds the first of those: scheduling compares with the core's first and replays the core's
// path to the root; taking a ready event rescans one core's slots and replays its path (log2 of
// the cores, instead of a scan of every core).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <span>
#include <vector>

#include "trn/isa/engine.h"

namespace trn::core {

enum class EventKind : std::uint8_t { kComplete, kDma, kReady };

/// An event's (time, order) as one number; a GNU extension that GCC and Clang both have.
__extension__ using EventKey = unsigned __int128;

struct Event {
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
  static constexpr int kKindShift = 62;

  std::int64_t time;
  std::uint64_t order;  ///< kind in the top bits, then the sequence number: one comparison
  std::uint32_t core;
  std::uint32_t payload;  ///< completion slot (kComplete) or engine (kReady)

  [[nodiscard]] EventKind kind() const { return static_cast<EventKind>(order >> kKindShift); }
  /// (time, order) as one unsigned 128-bit number (times are never negative), so that comparing
  /// two events takes no branch: which of two cores comes first is not predictable.
  [[nodiscard]] EventKey key() const {
    return (static_cast<EventKey>(static_cast<std::uint64_t>(time)) << 64) | order;
  }
  bool operator>(const Event& other) const { return key() > other.key(); }
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
    coreFirst_.assign(cores, nullptr);
    for (std::size_t c = 0; c < cores; ++c) {
      coreFirst_[c] = &ready_[c * isa::kNumEngines];
    }
    leaves_ = std::bit_ceil(std::max<std::size_t>(cores, 1));
    winner_.assign(2 * leaves_, Winner{Event{Event::kNever, 0, 0, 0}.key(), 0});
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
    // The slot was empty (its time kNever), so the core's first can only become this one; when
    // it already was this slot, its key has just changed.
    Event& slot = ready_[core * isa::kNumEngines + payload];
    slot = Event{time, order, core, payload};
    if (coreFirst_[core] == &slot || *coreFirst_[core] > slot) {
      coreFirst_[core] = &slot;
      replay(core);
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
    const std::uint32_t core = ready->core;
    const std::span<Event> slots =
        std::span(ready_).subspan(core * isa::kNumEngines, isa::kNumEngines);
    Event* first = &slots[0];
    for (Event& slot : slots.subspan(1)) {
      if (*first > slot) {
        first = &slot;
      }
    }
    coreFirst_[core] = first;
    replay(core);
    return true;
  }

  /// Whether any event is pending at or before `time`.
  [[nodiscard]] bool anyPendingBy(std::int64_t time) const {
    if (!events_.empty() && events_.top().time <= time) {
      return true;
    }
    const Event* first = firstReady();
    return first != nullptr && first->time <= time;
  }

 private:
  /// The ready slot that comes first, or nullptr when no engine is waiting to issue.
  [[nodiscard]] Event* firstReady() const {
    Event* first = coreFirst_[winner_[1].core];
    return first->time != Event::kNever ? first : nullptr;
  }
  /// Sets `core`'s leaf to the key of its first slot and recomputes the winners on the path to
  /// the root. The keys of two pending events are never equal.
  void replay(std::uint32_t core) {
    std::size_t node = leaves_ + core;
    winner_[node] = Winner{coreFirst_[core]->key(), core};
    for (node /= 2; node >= 1; node /= 2) {
      const Winner& left = winner_[2 * node];
      const Winner& right = winner_[2 * node + 1];
      winner_[node] = left.key > right.key ? right : left;
    }
  }

  /// A node of the winner tree: the first key under it and the core it belongs to.
  struct Winner {
    EventKey key;
    std::uint32_t core;
  };

  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::vector<Event> ready_;       ///< one slot per engine of each core
  std::vector<Event*> coreFirst_;  ///< per core, the first of its slots (time kNever if none)
  std::size_t leaves_ = 1;         ///< cores rounded up to a power of two
  /// Winner tree: node 1 is the root, leaves_ + c the leaf of core c (leaves past the last core
  /// hold kNever for core 0, so they never win).
  std::vector<Winner> winner_;
  std::uint64_t sequence_ = 0;
};

}  // namespace trn::core
