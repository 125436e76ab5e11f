#include "ring_steps.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
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

Segment sliceOf(const Segment& s, std::int64_t k, std::int64_t slices) {
  Segment slice = s;
  slice.begin = s.begin + s.length * k / slices;
  slice.length = s.length * (k + 1) / slices - s.length * k / slices;
  return slice;
}

std::int64_t ringSlices(const Plan& plan, std::span<const std::int64_t> ring,
                        std::span<const Segment> pieces, int direction) {
  std::int64_t length = std::numeric_limits<std::int64_t>::max();
  std::int64_t count = std::numeric_limits<std::int64_t>::max();
  for (const Segment& piece : pieces) {
    length = std::min(length, piece.length);
    count = std::min(count, piece.count());
  }
  const double bytes = static_cast<double>(count) * static_cast<double>(plan.elementBytes());
  std::int64_t slices = std::min<std::int64_t>(
      {kMaxRingSlices, length, static_cast<std::int64_t>(bytes / kMinRingSliceBytes)});
  if (slices <= 1) {
    return 1;
  }
  // The ring steps at the pace of its slowest hop: the least bandwidth and the most per-message
  // overhead over its hops.
  const Topology& topology = plan.topology();
  double rate = topology.streamBandwidth() > 0 ? topology.streamBandwidth()
                                               : std::numeric_limits<double>::infinity();
  std::int64_t overhead = 0;
  for (std::size_t p = 0; p < ring.size(); ++p) {
    const Route route = topology.route(ring[p], ring[(p + 1) % ring.size()], direction);
    overhead = std::max(overhead, route.overhead);
    for (const ResourceId link : route.links) {
      rate = std::min(rate, topology.bandwidth(link));
    }
  }
  if (overhead > 0) {
    // K slices pay K per-message overheads and hide all but 1/K of the shorter of the transfer
    // and the reduction: the sum is least at K = sqrt(shorter / overhead).
    const double transfer = bytes / rate;
    const double reduction =
        topology.reduceBandwidth() > 0 ? bytes / topology.reduceBandwidth() : 0.0;
    const double best = std::sqrt(std::min(transfer, reduction) / static_cast<double>(overhead));
    slices = std::min(slices, std::max<std::int64_t>(1, std::llround(best)));
  }
  return slices;
}

void ringReduceScatter(Plan& plan, std::span<const std::int64_t> ring,
                       std::span<const Segment> pieces, Ready& ready, int direction) {
  const std::size_t n = ring.size();
  const auto slices = static_cast<std::size_t>(ringSlices(plan, ring, pieces, direction));
  // Per member and slice, the reduction after which the member holds that slice of the piece it
  // reduced last (at first, its own data).
  std::vector<OpId> sliceReady(n * slices);
  for (std::size_t p = 0; p < n; ++p) {
    std::fill_n(sliceReady.begin() + static_cast<std::ptrdiff_t>(p * slices), slices,
                ready[static_cast<std::size_t>(ring[p])]);
  }
  // Per member, the last transfer it sent and the last reduction it ran: its two DMA queues.
  std::vector<OpId> lastSent(n, kNone);
  std::vector<OpId> lastReduced(n, kNone);
  std::vector<OpId> sent(n * slices);
  const auto queue = [&plan](OpId id, OpId& last) {
    if (last != kNone) {
      plan.queueBehind(id, last);
    }
    last = id;
  };
  for (std::size_t s = 0; s + 1 < n; ++s) {
    for (std::size_t p = 0; p < n; ++p) {
      const Segment& piece = pieces[(p + 2 * n - s - 1) % n];
      for (std::size_t k = 0; k < slices; ++k) {
        const Segment slice =
            sliceOf(piece, static_cast<std::int64_t>(k), static_cast<std::int64_t>(slices));
        sent[p * slices + k] = plan.copy(ring[p], ring[(p + 1) % n], slice, stagingFor(slice),
                                         present({sliceReady[p * slices + k]}), direction);
        queue(sent[p * slices + k], lastSent[p]);
      }
    }
    for (std::size_t p = 0; p < n; ++p) {
      const std::size_t to = (p + 1) % n;
      const Segment& piece = pieces[(p + 2 * n - s - 1) % n];
      for (std::size_t k = 0; k < slices; ++k) {
        OpId& r = sliceReady[to * slices + k];
        r = plan.reduceInto(
            ring[to],
            sliceOf(piece, static_cast<std::int64_t>(k), static_cast<std::int64_t>(slices)),
            std::span(&sent[p * slices + k], 1), present({r}));
        queue(r, lastReduced[to]);
      }
    }
  }
  for (std::size_t p = 0; p < n; ++p) {
    const auto first = sliceReady.begin() + static_cast<std::ptrdiff_t>(p * slices);
    ready[static_cast<std::size_t>(ring[p])] =
        slices == 1 ? *first : plan.join(std::span(&*first, slices));
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
