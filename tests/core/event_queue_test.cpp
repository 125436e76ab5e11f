// The scheduler's event queue (src/core/event_queue.h) against a reference: every event in one
// priority queue ordered by (time, kind, sequence). Random schedules over 1 to 9, 16, 17 and 64
// cores (full and partial tournament trees), with the rule the scheduler keeps (at most one ready
// event per engine), must pop in the same order.
#include "event_queue.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <queue>
#include <random>
#include <tuple>
#include <vector>

namespace trn::core {
namespace {

struct Expected {
  std::int64_t time;
  int kind;
  std::uint64_t sequence;
  std::uint32_t core;
  std::uint32_t payload;
  bool operator>(const Expected& o) const {
    return std::tie(time, kind, sequence) > std::tie(o.time, o.kind, o.sequence);
  }
};

TEST(EventQueue, PopsInTimeKindSequenceOrderForAnyNumberOfCores) {
  std::mt19937_64 rng(7);
  for (const std::uint32_t cores : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u, 16u, 17u, 64u}) {
    EventQueue queue;
    queue.reset(cores);
    std::priority_queue<Expected, std::vector<Expected>, std::greater<>> reference;
    std::vector<bool> pending(cores * isa::kNumEngines, false);
    std::uint64_t sequence = 0;
    std::int64_t now = 0;
    int popped = 0;
    for (int step = 0; step < 20'000; ++step) {
      if (rng() % 3 != 0) {
        const auto core = static_cast<std::uint32_t>(rng() % cores);
        const auto kind = static_cast<EventKind>(rng() % 3);
        auto payload = static_cast<std::uint32_t>(rng() % isa::kNumEngines);
        if (kind == EventKind::kReady && pending[core * isa::kNumEngines + payload]) {
          continue;
        }
        // Small time steps make ties in time common, so kind and sequence decide.
        const std::int64_t time = now + static_cast<std::int64_t>(rng() % 4);
        if (kind == EventKind::kReady) {
          pending[core * isa::kNumEngines + payload] = true;
        } else {
          payload = static_cast<std::uint32_t>(rng() % 1000);
        }
        queue.schedule(time, kind, core, payload);
        reference.push(Expected{time, static_cast<int>(kind), sequence++, core, payload});
        ASSERT_TRUE(queue.anyPendingBy(reference.top().time));
        if (reference.top().time > 0) {
          ASSERT_FALSE(queue.anyPendingBy(reference.top().time - 1));
        }
        continue;
      }
      Event event{};
      ASSERT_EQ(queue.pop(event), !reference.empty());
      if (reference.empty()) {
        continue;
      }
      const Expected want = reference.top();
      reference.pop();
      ASSERT_EQ(event.time, want.time) << cores << " cores, pop " << popped;
      ASSERT_EQ(static_cast<int>(event.kind()), want.kind) << cores << " cores, pop " << popped;
      ASSERT_EQ(event.core, want.core) << cores << " cores, pop " << popped;
      ASSERT_EQ(event.payload, want.payload) << cores << " cores, pop " << popped;
      if (event.kind() == EventKind::kReady) {
        pending[event.core * isa::kNumEngines + event.payload] = false;
      }
      now = event.time;
      ++popped;
    }
    Event event{};
    while (!reference.empty()) {
      ASSERT_TRUE(queue.pop(event));
      ASSERT_EQ(event.time, reference.top().time);
      ASSERT_EQ(event.core, reference.top().core);
      ASSERT_EQ(event.payload, reference.top().payload);
      reference.pop();
    }
    EXPECT_FALSE(queue.pop(event));
    EXPECT_GT(popped, 1000);
  }
}

}  // namespace
}  // namespace trn::core
