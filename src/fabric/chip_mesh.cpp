// R2's two-step mesh for ranks that are logical cores (docs/collectives.md): the ranks of a chip
// act together, so that a chip sends each other chip one message per destination rank instead
// of one per pair of ranks. Reduce-scatter: step 1, for every destination rank, each chip's rank
// at the destination's logical core reduces the chunk of all its chip's ranks (a DMA reading
// every rank of its chip) and writes the partial to the destination, through the fabric; step 2,
// each rank reduces the partials of every chip. All-gather: step 1, each chip's rank at a
// destination's logical core reads the chunks of all its chip's ranks and writes them to that
// rank of every other chip it serves; step 2, the ranks of a chip copy what they received to each
// other, two at a time (duplication).
#include <fmt/format.h>

#include <algorithm>

#include "ring_steps.h"

namespace trn::fabric::detail {
namespace {

/// The group as chips of ranks: per chip (in the order the group first names them), its places
/// in logical-core order, and each place's position in the group.
struct ChipGroups {
  std::vector<std::vector<std::int64_t>> chips;
  std::vector<std::int64_t> rankOf;  ///< per place of the topology
};

ChipGroups chipGroups(const Topology& topology, std::span<const std::int64_t> group) {
  ChipGroups g;
  g.rankOf.assign(static_cast<std::size_t>(topology.chips()), -1);
  for (std::size_t rank = 0; rank < group.size(); ++rank) {
    g.rankOf[static_cast<std::size_t>(group[rank])] = static_cast<std::int64_t>(rank);
  }
  std::vector<bool> seen(static_cast<std::size_t>(topology.chips() / topology.ranksPerChip()));
  for (const std::int64_t place : group) {
    const auto chip = static_cast<std::size_t>(topology.physicalChipOf(place));
    if (seen[chip]) {
      continue;
    }
    seen[chip] = true;
    std::vector<std::int64_t> places;
    for (std::int64_t l = 0; l < topology.ranksPerChip(); ++l) {
      places.push_back(static_cast<std::int64_t>(chip) * topology.ranksPerChip() + l);
    }
    g.chips.push_back(std::move(places));
  }
  return g;
}

/// Reduce-scatter in two steps; returns, per place, the reduction after which that rank holds
/// its chunk (kNone for places outside the group).
std::vector<OpId> reduceScatter(Plan& plan, const ChipGroups& g, std::int64_t chunk) {
  std::vector<OpId> done(g.rankOf.size(), kNone);
  for (const std::vector<std::int64_t>& chip : g.chips) {
    for (std::size_t l = 0; l < chip.size(); ++l) {
      const std::int64_t destination = chip[l];
      const Segment own =
          bufferRange(g.rankOf[static_cast<std::size_t>(destination)] * chunk, chunk);
      std::vector<Access> partials;
      for (const std::vector<std::int64_t>& source : g.chips) {
        std::vector<Access> reads;
        for (const std::int64_t place : source) {
          reads.push_back({place, own, kNoMove});
        }
        const Access to{destination, stagingFor(own), kNoMove};
        const OpId partial =
            plan.dma(DataMove::Kind::kReduce, source[l], reads, std::span(&to, 1), {});
        partials.push_back({destination, stagingFor(own), partial});
      }
      const Access write{destination, own, kNoMove};
      done[static_cast<std::size_t>(destination)] =
          plan.dma(DataMove::Kind::kReduce, destination, partials, std::span(&write, 1), {});
    }
  }
  return done;
}

/// Copies what `reads` reads (on `issuer`'s chip, after `after`) to elements `into` of each of
/// `targets`, two targets a DMA (duplication).
void copyToEach(Plan& plan, std::int64_t issuer, std::span<const Access> reads, const Segment& into,
                std::span<const std::int64_t> targets, std::span<const OpId> after) {
  for (std::size_t t = 0; t < targets.size(); t += 2) {
    std::vector<Access> writes{{targets[t], into, kNoMove}};
    if (t + 1 < targets.size()) {
      writes.push_back({targets[t + 1], into, kNoMove});
    }
    plan.dma(DataMove::Kind::kCopy, issuer, reads, writes, after);
  }
}

/// What a rank received in the first step of an all-gather, to pass to its chip's other ranks.
struct Receipt {
  OpId op = 0;
  Segment elements;
};

/// All-gather in two steps, each rank's chunk ready after done[place] (kNone: from the start).
void allGather(Plan& plan, const ChipGroups& g, std::int64_t chunk, const std::vector<OpId>& done) {
  const std::size_t chips = g.chips.size();
  const std::size_t local = g.chips.front().size();
  auto chunkAt = [&](std::int64_t place) {
    return bufferRange(g.rankOf[static_cast<std::size_t>(place)] * chunk, chunk);
  };
  std::vector<std::vector<Receipt>> received(g.rankOf.size());
  for (std::size_t c = 0; c < chips; ++c) {
    // The chip's chunks in group order: one strided segment when they are evenly spaced, else
    // one message each.
    std::vector<std::int64_t> order(g.chips[c]);
    std::sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
      return g.rankOf[static_cast<std::size_t>(a)] < g.rankOf[static_cast<std::size_t>(b)];
    });
    const std::int64_t first = g.rankOf[static_cast<std::size_t>(order.front())];
    const std::int64_t step = local > 1 ? g.rankOf[static_cast<std::size_t>(order[1])] - first : 1;
    std::vector<Segment> blocks;
    std::vector<std::vector<Access>> reads;
    bool even = true;
    for (std::size_t k = 0; k < local; ++k) {
      even = even && g.rankOf[static_cast<std::size_t>(order[k])] ==
                         first + static_cast<std::int64_t>(k) * step;
    }
    if (even) {
      blocks.push_back(
          {Region::kBuffer, first * chunk, chunk, static_cast<std::int64_t>(local), step * chunk});
      reads.emplace_back();
      for (const std::int64_t place : order) {
        reads.back().push_back({place, chunkAt(place), kNoMove});
      }
    } else {
      for (const std::int64_t place : order) {
        blocks.push_back(chunkAt(place));
        reads.push_back({{place, chunkAt(place), kNoMove}});
      }
    }
    std::vector<OpId> ready;
    for (const std::int64_t place : order) {
      if (done[static_cast<std::size_t>(place)] != kNone) {
        ready.push_back(done[static_cast<std::size_t>(place)]);
      }
    }
    for (std::size_t d = 0; d < chips; ++d) {
      if (d == c) {
        continue;
      }
      // Chip c's rank at logical core l serves chip d's rank at l: the destinations of a chip
      // spread over its ranks, and the sources of a chip over its ranks.
      const std::size_t l = (c + d) % local;
      const std::int64_t target = g.chips[d][l];
      for (std::size_t b = 0; b < blocks.size(); ++b) {
        const Access write{target, blocks[b], kNoMove};
        received[static_cast<std::size_t>(target)].push_back(
            {plan.dma(DataMove::Kind::kCopy, g.chips[c][l], reads[b], std::span(&write, 1), ready),
             blocks[b]});
      }
    }
  }
  // Step 2: within each chip, every rank passes on its own chunk and what it received.
  for (const std::vector<std::int64_t>& chip : g.chips) {
    for (const std::int64_t place : chip) {
      std::vector<std::int64_t> others;
      for (const std::int64_t other : chip) {
        if (other != place) {
          others.push_back(other);
        }
      }
      const Access own{place, chunkAt(place), kNoMove};
      copyToEach(plan, place, std::span(&own, 1), own.segment, others,
                 present({done[static_cast<std::size_t>(place)]}));
      for (const Receipt& r : received[static_cast<std::size_t>(place)]) {
        const Access read{place, r.elements, kNoMove};
        copyToEach(plan, place, std::span(&read, 1), r.elements, others, std::span(&r.op, 1));
      }
    }
  }
}

}  // namespace

void buildChipMeshPlan(Plan& plan, const CollectiveRequest& request) {
  const ChipGroups g = chipGroups(plan.topology(), request.group);
  const std::int64_t chunk =
      request.bytes / request.elementBytes / static_cast<std::int64_t>(request.group.size());
  switch (request.op) {
    case CollectiveOp::kAllReduce:
      allGather(plan, g, chunk, reduceScatter(plan, g, chunk));
      break;
    case CollectiveOp::kReduceScatter:
      reduceScatter(plan, g, chunk);
      break;
    case CollectiveOp::kAllGather:
      allGather(plan, g, chunk, std::vector<OpId>(g.rankOf.size(), kNone));
      break;
    default:
      break;  // unsupportedReason rules the others out
  }
}

}  // namespace trn::fabric::detail
