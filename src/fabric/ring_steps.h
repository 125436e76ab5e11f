// Internal to the fabric module: the steps of a ring, shared by the flat ring and the
// per-dimension (torus, hierarchical) algorithms, and the bookkeeping every algorithm uses: per
// chip, the operation after which the chip may go on.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "trn/fabric/collective.h"
#include "trn/fabric/plan.h"

namespace trn::fabric::detail {

/// No operation to wait for.
inline constexpr OpId kNone = std::numeric_limits<OpId>::max();

/// Per chip of the topology, the operation after which its data is ready (kNone: from the start).
using Ready = std::vector<OpId>;

/// The operations of `ids` that are not kNone.
std::vector<OpId> present(std::initializer_list<OpId> ids);

/// The group's chips in boustrophedon order: the outermost coordinate ascending, each inner one
/// ascending or descending as the coordinates outside it sum to an even or odd number.
std::vector<std::int64_t> snakeOrder(const Topology& topology, std::span<const std::int64_t> group);

/// Two edge-disjoint Hamiltonian cycles through `chips` (places, one per chip), each step
/// between neighbours along a ring or a line, when a bounded search finds them; else the snake
/// order alone (hamiltonian_cycles.cpp).
std::vector<std::vector<std::int64_t>> disjointCycles(const Topology& topology,
                                                      std::span<const std::int64_t> chips);

/// Where a copy of `s` is staged for a reduction: as many elements, in the sender's own staging.
inline Segment stagingFor(const Segment& s) {
  return {Region::kStaging, 0, s.count(), 1, s.count()};
}
/// The first half of each of `s`'s runs (the forward channel's share) and the rest (the backward
/// channel's).
Segment frontHalf(const Segment& s);
Segment backHalf(const Segment& s);

/// Most slices a ring step is cut in, and the fewest bytes a slice has (assumed: R2 says a step
/// goes in slices, not how many).
inline constexpr std::int64_t kMaxRingSlices = 8;
inline constexpr double kMinRingSliceBytes = 64.0 * 1024;

/// Slice k of `slices` of `s`: that part of each of its runs.
Segment sliceOf(const Segment& s, std::int64_t k, std::int64_t slices);

/// How many slices the steps of a ring reduce-scatter over `ring` with `pieces` are cut in: up to
/// kMaxRingSlices of at least kMinRingSliceBytes and an element per run each; where a hop has a
/// per-message overhead, no more than sqrt(the shorter of a piece's transfer over the slowest
/// hop and its reduction / the largest overhead), the count that costs least.
std::int64_t ringSlices(const Plan& plan, std::span<const std::int64_t> ring,
                        std::span<const Segment> pieces, int direction);

/// A ring reduce-scatter over `ring` (chips in ring order) with `direction` (Topology::route):
/// the member at position p ends holding `pieces[p]` of the buffer reduced over the ring. Step s,
/// member p sends pieces[p - s - 1] (its own data at s = 0, then what it reduced last) to member
/// p + 1, which reduces it into its copy, so piece o accumulates from member o + 1 round to o.
/// Each step goes in ringSlices() slices, each sent and then reduced on its own: a member's
/// transfers follow one another on one DMA queue and its reductions on another, so that the
/// reduction of one slice overlaps the transfer of the next (R2), and a slice goes on to the next
/// member as soon as it is reduced. Slicing splits elements, not their order of reduction. On
/// return ready[c] is the operation after which member c holds its piece.
void ringReduceScatter(Plan& plan, std::span<const std::int64_t> ring,
                       std::span<const Segment> pieces, Ready& ready, int direction);

/// A ring all-gather: the member at position p holds `pieces[p]`; step s, it forwards
/// pieces[p - s] to member p + 1, once both are ready. On return ready[c] is the last receipt of
/// member c.
void ringAllGather(Plan& plan, std::span<const std::int64_t> ring, std::span<const Segment> pieces,
                   Ready& ready, int direction);

/// A phase run over two channels, the ring forwards on the first half of every piece and
/// backwards on the rest: `step` (ringReduceScatter or ringAllGather) for each, then ready[c]
/// joins both channels' ends. The forward channel routes with `direction` and the backward one
/// with -direction (1 for a ring along one dimension, so that its last member reaches the first
/// over the wrap-around link; 0 for a ring whose members are neighbours either way).
using RingStep = void (*)(Plan&, std::span<const std::int64_t>, std::span<const Segment>, Ready&,
                          int);
void twoChannels(Plan& plan, std::span<const std::int64_t> ring, std::span<const Segment> pieces,
                 Ready& ready, RingStep step, int direction);

/// The contiguous part of the buffer that rank `rank` of `ranks` owns in a collective of `count`
/// elements (count divides among the ranks).
inline Segment chunkOf(std::int64_t rank, std::int64_t ranks, std::int64_t count) {
  return bufferRange(rank * (count / ranks), count / ranks);
}

/// Per-algorithm plan builders (ring.cpp, mesh.cpp, recursive.cpp, torus.cpp, kangaring.cpp); the
/// request has been checked (runCollective) and the algorithm applies to it.
void buildRingPlan(Plan& plan, const CollectiveRequest& request);
void buildMeshPlan(Plan& plan, const CollectiveRequest& request);
void buildRecursivePlan(Plan& plan, const CollectiveRequest& request);
void buildTorusPlan(Plan& plan, const CollectiveRequest& request);
void buildKangaRingPlan(Plan& plan, const CollectiveRequest& request);
void buildChipMeshPlan(Plan& plan, const CollectiveRequest& request);

/// Why an algorithm over the logical cores of whole chips (the KangaRing, R2's two-step mesh)
/// does not apply to `group`: ranks that are chips, logical cores not in pairs (`inPairs`), a
/// chip not all of whose ranks are in the group; or "".
std::string wholeChipsUnsupported(const Topology& topology, std::span<const std::int64_t> group,
                                  bool inPairs);

/// The dimensions the torus algorithm walks for `group`, innermost first, or empty when the group
/// is not the whole of the first few dimensions in order (rank i is chip i, for i < n, n their
/// product).
std::vector<std::size_t> torusDimensions(const Topology& topology,
                                         std::span<const std::int64_t> group);

}  // namespace trn::fabric::detail
