// Internal to the fabric module: the steps of a ring, shared by the flat ring and the
// per-dimension (torus, hierarchical) algorithms, and the bookkeeping every algorithm uses: per
// chip, the operation after which the chip may go on.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
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

/// Bytes of HBM a reduction of `chunk` received bytes into the local copy reads and writes.
inline double reductionBytes(double chunk) { return 3 * chunk; }

/// A ring reduce-scatter over `ring` (chips in ring order), `chunk` bytes per member and step,
/// sending with `direction` (Topology::route). On return ready[c] is the reduction after which
/// member c holds its reduced chunk.
void ringReduceScatter(Plan& plan, std::span<const std::int64_t> ring, double chunk, Ready& ready,
                       int direction);

/// A ring all-gather: each member forwards `chunk` bytes per step; on return ready[c] is the
/// last receipt of member c.
void ringAllGather(Plan& plan, std::span<const std::int64_t> ring, double chunk, Ready& ready,
                   int direction);

/// A phase run over two channels, the ring forwards and backwards, each on half the data: `step`
/// (ringReduceScatter or ringAllGather) for each, then ready[c] joins both channels' ends. The
/// forward channel routes with `direction` and the backward one with -direction (1 for a ring
/// along one dimension, so that its last member reaches the first over the wrap-around link; 0
/// for a ring whose members are neighbours either way).
using RingStep = void (*)(Plan&, std::span<const std::int64_t>, double, Ready&, int);
void twoChannels(Plan& plan, std::span<const std::int64_t> ring, double chunk, Ready& ready,
                 RingStep step, int direction);

/// Per-algorithm plan builders (ring.cpp, mesh.cpp, recursive.cpp, torus.cpp); the request has
/// been checked (runCollective) and the algorithm applies to it.
void buildRingPlan(Plan& plan, const CollectiveRequest& request);
void buildMeshPlan(Plan& plan, const CollectiveRequest& request);
void buildRecursivePlan(Plan& plan, const CollectiveRequest& request);
void buildTorusPlan(Plan& plan, const CollectiveRequest& request);

/// The dimensions the torus algorithm walks for `group`, innermost first, or empty when the group
/// is not the whole of the first few dimensions (chips 0..n-1 with n their product).
std::vector<std::size_t> torusDimensions(const Topology& topology,
                                         std::span<const std::int64_t> group);

}  // namespace trn::fabric::detail
