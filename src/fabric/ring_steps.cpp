#include "ring_steps.h"

#include <algorithm>

namespace trn::fabric::detail {

std::vector<OpId> present(std::initializer_list<OpId> ids) {
  std::vector<OpId> out;
  for (const OpId id : ids) {
    if (id != kNone) {
      out.push_back(id);
    }
  }
  return out;
}

void ringReduceScatter(Plan& plan, std::span<const std::int64_t> ring, double chunk, Ready& ready,
                       int direction) {
  const std::size_t n = ring.size();
  // Step s: member i sends the chunk it reduced last (its own at s = 0) to member i + 1, which
  // reduces it into its copy. Each member reduces in step order.
  std::vector<OpId> sent(n);
  for (std::size_t s = 0; s + 1 < n; ++s) {
    for (std::size_t i = 0; i < n; ++i) {
      sent[i] = plan.transfer(ring[i], ring[(i + 1) % n], chunk,
                              present({ready[static_cast<std::size_t>(ring[i])]}), direction);
    }
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t to = ring[(i + 1) % n];
      OpId& r = ready[static_cast<std::size_t>(to)];
      r = plan.reduce(to, reductionBytes(chunk), present({sent[i], r}));
    }
  }
}

void ringAllGather(Plan& plan, std::span<const std::int64_t> ring, double chunk, Ready& ready,
                   int direction) {
  const std::size_t n = ring.size();
  // Step s: member i forwards the chunk it received last (its own at s = 0) to member i + 1.
  std::vector<OpId> received(n);
  for (std::size_t s = 0; s + 1 < n; ++s) {
    for (std::size_t i = 0; i < n; ++i) {
      received[(i + 1) % n] =
          plan.transfer(ring[i], ring[(i + 1) % n], chunk,
                        present({ready[static_cast<std::size_t>(ring[i])]}), direction);
    }
    for (std::size_t i = 0; i < n; ++i) {
      ready[static_cast<std::size_t>(ring[i])] = received[i];
    }
  }
}

void twoChannels(Plan& plan, std::span<const std::int64_t> ring, double chunk, Ready& ready,
                 RingStep step, int direction) {
  if (ring.size() < 2) {
    return;
  }
  Ready forward = ready;
  step(plan, ring, chunk / 2, forward, direction);
  std::vector<std::int64_t> reversed(ring.rbegin(), ring.rend());
  step(plan, reversed, chunk / 2, ready, -direction);
  for (const std::int64_t c : ring) {
    const auto i = static_cast<std::size_t>(c);
    ready[i] = plan.join(present({forward[i], ready[i]}));
  }
}

}  // namespace trn::fabric::detail
