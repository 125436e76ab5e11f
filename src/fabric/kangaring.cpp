// The KangaRing, Neuron's ring for ranks that are logical cores (docs/collectives.md): the ranks
// of a chip go in pairs, one of each pair primary, and only the primaries form the ring, which
// goes through the chips in snake order. One DMA does a hop's whole work. In a reduce-scatter a
// primary reads the partial sum it received, its own data and its secondary's (another rank's
// buffer on the same chip), reduces them and writes the result to the next primary: 3 reads, 1
// write. In an all-gather it reads what it received and writes it both to the next primary and
// to its secondary: 1 read, 2 writes (duplication). The ring runs in both directions over each
// of two edge-disjoint Hamiltonian cycles of the chips where there are two (the 4 x 4 torus), or
// over the snake alone: 4 or 2 channels, each on its part of every rank's chunk, with primaries
// alternating between the channels so that every rank is active in half of them.
#include <fmt/format.h>

#include <algorithm>

#include "ring_steps.h"

namespace trn::fabric::detail {
namespace {

/// A place of the ring: a primary, the secondary it works for, and their elements of this
/// channel's data (two runs of the buffer, in ascending order: a "piece").
struct Member {
  std::int64_t primary = 0;
  std::int64_t secondary = 0;
  Segment primaryRun;
  Segment secondaryRun;
  Segment piece;
};

/// The reads of `member`'s two runs, in the piece's (ascending) order.
std::vector<Access> runsOf(const Member& m) {
  if (m.primaryRun.begin < m.secondaryRun.begin) {
    return {{m.primary, m.primaryRun, kNoMove}, {m.secondary, m.secondaryRun, kNoMove}};
  }
  return {{m.secondary, m.secondaryRun, kNoMove}, {m.primary, m.primaryRun, kNoMove}};
}

/// Where `run` (one of the two runs of `piece`) sits in the piece's staging.
Segment stagedRun(const Segment& piece, const Segment& run) {
  const std::int64_t at = run.begin == piece.begin ? 0 : piece.length;
  return {Region::kStaging, at, run.length, 1, run.length};
}

/// The members of a channel that goes round `chips` (each chip's first place, in ring order)
/// with the rank of parity `parity` of each pair primary, on elements [offset, offset + length)
/// of every rank's chunk: on each chip the primaries in alternating order, so that consecutive
/// members on different chips are at the same logical core where they can be.
std::vector<Member> channelRing(const Topology& topology, const std::vector<std::int64_t>& chips,
                                std::int64_t parity, const std::vector<std::int64_t>& rankOf,
                                std::int64_t chunk, std::int64_t offset, std::int64_t length) {
  const std::int64_t pairs = topology.ranksPerChip() / 2;
  std::vector<Member> ring;
  for (std::size_t k = 0; k < chips.size(); ++k) {
    for (std::int64_t i = 0; i < pairs; ++i) {
      const std::int64_t q = k % 2 == 0 ? i : pairs - 1 - i;
      Member m;
      m.primary = chips[k] + 2 * q + parity;
      m.secondary = chips[k] + 2 * q + 1 - parity;
      const std::int64_t p = rankOf[static_cast<std::size_t>(m.primary)];
      const std::int64_t s = rankOf[static_cast<std::size_t>(m.secondary)];
      m.primaryRun = bufferRange(p * chunk + offset, length);
      m.secondaryRun = bufferRange(s * chunk + offset, length);
      m.piece = {Region::kBuffer, std::min(p, s) * chunk + offset, length, 2,
                 (std::max(p, s) - std::min(p, s)) * chunk};
      ring.push_back(m);
    }
  }
  return ring;
}

/// Step s, member p reduces piece p - s - 1 (the partial it received, then the primary's data,
/// then the secondary's) into the next member's staging, so that piece o accumulates from member
/// o + 1 round to o; member o then reduces it a last time into its own and its secondary's
/// buffers (`allReduce`: the whole piece to both, duplicated), or each rank's run into its own.
/// Returns, per member, the operations after which both ranks hold their result.
std::vector<OpId> reduceScatter(Plan& plan, const std::vector<Member>& ring, bool allReduce) {
  const std::size_t n = ring.size();
  std::vector<OpId> sent(n, kNone);
  for (std::size_t s = 0; s + 1 < n; ++s) {
    std::vector<OpId> now(n);
    for (std::size_t p = 0; p < n; ++p) {
      const Member& m = ring[p];
      const Segment& piece = ring[(p + 2 * n - s - 1) % n].piece;
      std::vector<Access> reads;
      if (s > 0) {
        reads.push_back({m.primary, stagingFor(piece), sent[(p + n - 1) % n]});
      }
      reads.push_back({m.primary, piece, kNoMove});
      reads.push_back({m.secondary, piece, kNoMove});
      const Access to{ring[(p + 1) % n].primary, stagingFor(piece), kNoMove};
      now[p] = plan.dma(DataMove::Kind::kReduce, m.primary, reads, std::span(&to, 1), {});
    }
    sent = std::move(now);
  }
  std::vector<OpId> done(n);
  for (std::size_t p = 0; p < n; ++p) {
    const Member& m = ring[p];
    const OpId received = sent[(p + n - 1) % n];
    // The reads of `target`, one run of the piece or all of it, in the reduction's order.
    auto readsFor = [&](const Segment& target) {
      std::vector<Access> reads;
      if (received != kNone) {
        reads.push_back({m.primary,
                         target.pieces == 2 ? stagingFor(m.piece) : stagedRun(m.piece, target),
                         received});
      }
      reads.push_back({m.primary, target, kNoMove});
      reads.push_back({m.secondary, target, kNoMove});
      return reads;
    };
    if (allReduce) {
      const Access both[] = {{m.primary, m.piece, kNoMove}, {m.secondary, m.piece, kNoMove}};
      done[p] = plan.dma(DataMove::Kind::kReduce, m.primary, readsFor(m.piece), both, {});
    } else {
      const Access mine{m.primary, m.primaryRun, kNoMove};
      const Access theirs{m.secondary, m.secondaryRun, kNoMove};
      const OpId first = plan.dma(DataMove::Kind::kReduce, m.primary, readsFor(m.primaryRun),
                                  std::span(&mine, 1), {});
      const OpId second = plan.dma(DataMove::Kind::kReduce, m.primary, readsFor(m.secondaryRun),
                                   std::span(&theirs, 1), {});
      done[p] = plan.join(present({first, second}));
    }
  }
  return done;
}

/// Step 0, member p sends piece p to the next primary: from its primary's buffer when it holds
/// the whole piece (`held`, after a reduce-scatter), else the primary's run and the secondary's.
/// Step s > 0, it forwards piece p - s, received the step before, to the next primary and its own
/// secondary at once; at the end each primary copies its last receipt to its secondary.
void allGather(Plan& plan, const std::vector<Member>& ring, const std::vector<OpId>& held) {
  const std::size_t n = ring.size();
  std::vector<OpId> received(n, kNone);
  if (held.empty()) {
    // The pair swaps its runs, so that both hold their own piece.
    for (const Member& m : ring) {
      const Access toPrimary{m.primary, m.secondaryRun, kNoMove};
      const Access toSecondary{m.secondary, m.primaryRun, kNoMove};
      const Access fromSecondary{m.secondary, m.secondaryRun, kNoMove};
      const Access fromPrimary{m.primary, m.primaryRun, kNoMove};
      plan.dma(DataMove::Kind::kCopy, m.primary, std::span(&fromSecondary, 1),
               std::span(&toPrimary, 1), {});
      plan.dma(DataMove::Kind::kCopy, m.secondary, std::span(&fromPrimary, 1),
               std::span(&toSecondary, 1), {});
    }
  }
  for (std::size_t s = 0; s + 1 < n; ++s) {
    std::vector<OpId> now(n);
    for (std::size_t p = 0; p < n; ++p) {
      const Member& m = ring[p];
      const Member& next = ring[(p + 1) % n];
      const Segment& piece = ring[(p + n - s) % n].piece;
      const Access forward{next.primary, piece, kNoMove};
      if (s == 0) {
        const std::vector<Access> reads =
            held.empty() ? runsOf(m) : std::vector<Access>{{m.primary, piece, kNoMove}};
        now[(p + 1) % n] = plan.dma(DataMove::Kind::kCopy, m.primary, reads, std::span(&forward, 1),
                                    present({held.empty() ? kNone : held[p]}));
      } else {
        const Access read{m.primary, piece, kNoMove};
        const Access writes[] = {forward, {m.secondary, piece, kNoMove}};
        now[(p + 1) % n] = plan.dma(DataMove::Kind::kCopy, m.primary, std::span(&read, 1), writes,
                                    std::span(&received[p], 1));
      }
    }
    received = std::move(now);
  }
  for (std::size_t p = 0; n > 1 && p < n; ++p) {
    const Member& m = ring[p];
    const Access read{m.primary, ring[(p + 1) % n].piece, kNoMove};
    const Access write{m.secondary, read.segment, kNoMove};
    plan.dma(DataMove::Kind::kCopy, m.primary, std::span(&read, 1), std::span(&write, 1),
             std::span(&received[p], 1));
  }
}

}  // namespace

void buildKangaRingPlan(Plan& plan, const CollectiveRequest& request) {
  const Topology& topology = plan.topology();
  const auto n = static_cast<std::int64_t>(request.group.size());
  const std::int64_t chunk = request.bytes / request.elementBytes / n;
  std::vector<std::int64_t> rankOf(static_cast<std::size_t>(topology.chips()), 0);
  std::vector<std::int64_t> firstPlaces;
  for (std::size_t rank = 0; rank < request.group.size(); ++rank) {
    const std::int64_t place = request.group[rank];
    rankOf[static_cast<std::size_t>(place)] = static_cast<std::int64_t>(rank);
    if (place % topology.ranksPerChip() == 0) {
      firstPlaces.push_back(place);
    }
  }
  // Each cycle in both directions; the first cycle forward and the second backward with the
  // even rank of each pair primary, the others with the odd one, each on its part of every chunk.
  const std::vector<std::vector<std::int64_t>> cycles = disjointCycles(topology, firstPlaces);
  const auto channels = static_cast<std::int64_t>(2 * cycles.size());
  for (std::int64_t k = 0; k < channels; ++k) {
    std::vector<std::int64_t> chips = cycles[static_cast<std::size_t>(k / 2)];
    if (k % 2 == 1) {
      std::reverse(chips.begin(), chips.end());
    }
    const std::int64_t offset = chunk * k / channels;
    const std::vector<Member> ring = channelRing(topology, chips, (k % 2) ^ (k / 2), rankOf, chunk,
                                                 offset, chunk * (k + 1) / channels - offset);
    switch (request.op) {
      case CollectiveOp::kAllReduce:
        allGather(plan, ring, reduceScatter(plan, ring, true));
        break;
      case CollectiveOp::kReduceScatter:
        reduceScatter(plan, ring, false);
        break;
      case CollectiveOp::kAllGather:
        allGather(plan, ring, {});
        break;
      default:
        break;  // unsupportedReason rules the others out
    }
  }
}

}  // namespace trn::fabric::detail
