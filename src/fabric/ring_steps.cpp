#include "ring_steps.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

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

std::vector<std::int64_t> snakeOrder(const Topology& topology,
                                     std::span<const std::int64_t> group) {
  const std::size_t dims = topology.dimensions().size();
  auto key = [&](std::int64_t chip) {
    std::vector<std::int64_t> k(dims);
    std::int64_t outerSum = 0;
    for (std::size_t d = dims; d-- > 0;) {
      const std::int64_t x = topology.coordinate(chip, d);
      const std::int64_t size = topology.dimensions()[d].size;
      k[dims - 1 - d] = outerSum % 2 == 0 ? x : size - 1 - x;
      outerSum += k[dims - 1 - d];
    }
    return k;
  };
  std::vector<std::int64_t> order(group.begin(), group.end());
  std::vector<std::vector<std::int64_t>> keys;
  keys.reserve(order.size());
  for (const std::int64_t c : order) {
    keys.push_back(key(c));
  }
  std::vector<std::size_t> index(order.size());
  std::iota(index.begin(), index.end(), 0);
  std::stable_sort(index.begin(), index.end(),
                   [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
  std::vector<std::int64_t> sorted;
  sorted.reserve(order.size());
  for (const std::size_t i : index) {
    sorted.push_back(order[i]);
  }
  return sorted;
}

Segment frontHalf(const Segment& s) {
  Segment half = s;
  half.length = s.length / 2;
  return half;
}

Segment backHalf(const Segment& s) {
  Segment half = s;
  half.begin = s.begin + s.length / 2;
  half.length = s.length - s.length / 2;
  return half;
}

void ringReduceScatter(Plan& plan, std::span<const std::int64_t> ring,
                       std::span<const Segment> pieces, Ready& ready, int direction) {
  const std::size_t n = ring.size();
  std::vector<OpId> sent(n);
  for (std::size_t s = 0; s + 1 < n; ++s) {
    for (std::size_t p = 0; p < n; ++p) {
      const Segment& piece = pieces[(p + 2 * n - s - 1) % n];
      sent[p] = plan.copy(ring[p], ring[(p + 1) % n], piece, stagingFor(piece),
                          present({ready[static_cast<std::size_t>(ring[p])]}), direction);
    }
    for (std::size_t p = 0; p < n; ++p) {
      const std::int64_t to = ring[(p + 1) % n];
      OpId& r = ready[static_cast<std::size_t>(to)];
      r = plan.reduceInto(to, pieces[(p + 2 * n - s - 1) % n], std::span(&sent[p], 1),
                          present({r}));
    }
  }
}

void ringAllGather(Plan& plan, std::span<const std::int64_t> ring, std::span<const Segment> pieces,
                   Ready& ready, int direction) {
  const std::size_t n = ring.size();
  std::vector<OpId> received(n);
  for (std::size_t s = 0; s + 1 < n; ++s) {
    for (std::size_t p = 0; p < n; ++p) {
      const Segment& piece = pieces[(p + n - s) % n];
      // The receiver must be done with what it held before (its own last reduction, say), or a
      // later step could send a piece before it is final there.
      const std::int64_t to = ring[(p + 1) % n];
      received[(p + 1) % n] = plan.copy(
          ring[p], to, piece, piece,
          present({ready[static_cast<std::size_t>(ring[p])], ready[static_cast<std::size_t>(to)]}),
          direction);
    }
    for (std::size_t p = 0; p < n; ++p) {
      ready[static_cast<std::size_t>(ring[p])] = received[p];
    }
  }
}

void twoChannels(Plan& plan, std::span<const std::int64_t> ring, std::span<const Segment> pieces,
                 Ready& ready, RingStep step, int direction) {
  if (ring.size() < 2) {
    return;
  }
  std::vector<Segment> front;
  std::vector<Segment> back;
  for (const Segment& piece : pieces) {
    front.push_back(frontHalf(piece));
    back.push_back(backHalf(piece));
  }
  Ready forward = ready;
  step(plan, ring, front, forward, direction);
  const std::vector<std::int64_t> reversed(ring.rbegin(), ring.rend());
  const std::vector<Segment> backReversed(back.rbegin(), back.rend());
  step(plan, reversed, backReversed, ready, -direction);
  for (const std::int64_t c : ring) {
    const auto i = static_cast<std::size_t>(c);
    ready[i] = plan.join(present({forward[i], ready[i]}));
  }
}

std::string wholeChipsUnsupported(const Topology& topology, std::span<const std::int64_t> group,
                                  bool inPairs) {
  const std::int64_t perChip = topology.ranksPerChip();
  if (perChip < 2) {
    return "needs ranks that are logical cores (here a rank is a chip)";
  }
  if (inPairs && perChip % 2 != 0) {
    return fmt::format("needs the logical cores of a chip in pairs, not {}", perChip);
  }
  std::vector<std::int64_t> members(static_cast<std::size_t>(topology.chips() / perChip), 0);
  for (const std::int64_t place : group) {
    ++members[static_cast<std::size_t>(topology.physicalChipOf(place))];
  }
  for (std::size_t chip = 0; chip < members.size(); ++chip) {
    if (members[chip] != 0 && members[chip] != perChip) {
      return fmt::format("needs every rank of a chip in the group; chip {} has {} of its {}", chip,
                         members[chip], perChip);
    }
  }
  return {};
}

}  // namespace trn::fabric::detail
