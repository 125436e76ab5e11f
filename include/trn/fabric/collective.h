// Collective operations on a simulated system: what is asked (an operation over a group of
// chips, a message size in the `nccom-test` sense), the algorithms that can do it, and the
// choice between them. Every algorithm that applies is built as a Plan and timed on the actual
// topology (flow_simulator.h); the fastest is taken unless the caller names one, so crossover
// points come out of the model rather than being written into it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/fabric/flow_simulator.h"
#include "trn/fabric/topology.h"
#include "trn/isa/enums.h"

namespace trn::fabric {

/// The operations, shared with the `collective` instruction (isa/enums.h).
using CollectiveOp = isa::CollectiveOp;

enum class Algorithm {
  kRing,       ///< one ring through the group (a snake through the grid), both directions
  kMesh,       ///< every rank to every rank in one step, routed through the fabric
  kRecursive,  ///< recursive halving and doubling (2^k ranks)
  kTorus,      ///< a ring along each dimension in turn: reduce innermost first, gather outermost
               ///< first (hierarchical: within the node, then between nodes)
  kKangaRing,  ///< logical-core ranks in pairs, the primaries in a ring; one DMA per hop reduces
               ///< three inputs (or duplicates its write to two places)
  kChipMesh,   ///< R2's two-step mesh over logical-core ranks x chips: each chip's ranks reduce
               ///< (or gather) together for every destination, then the ranks of a chip share
};

inline constexpr Algorithm kAllAlgorithms[] = {Algorithm::kRing,      Algorithm::kMesh,
                                               Algorithm::kRecursive, Algorithm::kTorus,
                                               Algorithm::kKangaRing, Algorithm::kChipMesh};

std::string_view opName(CollectiveOp op);     ///< "all_reduce", ...
std::string_view algorithmName(Algorithm a);  ///< "ring", ...
Result<CollectiveOp> parseOp(std::string_view name);
Result<Algorithm> parseAlgorithm(std::string_view name);

/// What each pair of ranks exchanges in an all-to-all-v (MPI_Alltoallv, NKI all_to_all_v), in
/// elements, over a group of n ranks: rank i sends counts[i * n + j] elements from element
/// sendOffsets[i * n + j] of its buffer to element receiveOffsets[i * n + j] of rank j's receive
/// buffer (j = i included). all_to_allv.h builds and checks them.
struct VariableCounts {
  std::vector<std::int64_t> counts;
  std::vector<std::int64_t> sendOffsets;
  std::vector<std::int64_t> receiveOffsets;
};

/// One collective. `bytes` is the size `nccom-test` reports: the buffer of an all-reduce or a
/// broadcast, the input of a reduce-scatter and an all-to-all, the output of an all-gather, the
/// buffer each rank sends in a permute; for an all-to-all-v, the size of each rank's buffer and
/// of its receive buffer (what moves is `variable`).
struct CollectiveRequest {
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::vector<std::int64_t> group;  ///< chips, as Topology numbers them; rank i is group[i]
  std::int64_t bytes = 0;
  std::int64_t elementBytes = 2;  ///< of the data type (counts and the divisibility check)
  std::int64_t root = 0;          ///< rank that broadcasts
  VariableCounts variable;        ///< all_to_allv only
};

/// An error unless `request` fits `topology`: at least one rank, each a chip of the system once,
/// a whole number of elements that divides among the ranks where the operation divides it, a
/// broadcast root among the ranks; an all-to-all-v's counts as all_to_allv.h checks them.
Status checkRequest(const Topology& topology, const CollectiveRequest& request);

/// Why an algorithm does not apply to a request, or "" when it does.
std::string unsupportedReason(const Topology& topology, const CollectiveRequest& request,
                              Algorithm algorithm);

/// The operations `algorithm`'s plan would hold (to leave out plans too large to time).
std::uint64_t plannedOperations(const CollectiveRequest& request, Algorithm algorithm);

/// The plan of `request` by `algorithm`; fails with unsupportedReason when it does not apply.
Result<Plan> buildPlan(const Topology& topology, const CollectiveRequest& request,
                       Algorithm algorithm);

/// One algorithm's outcome for a request.
struct Candidate {
  Algorithm algorithm = Algorithm::kRing;
  std::optional<std::int64_t> picoseconds;  ///< unset when it does not apply
  std::string skipped;                      ///< why, when it does not apply
  std::uint64_t messages = 0;
};

struct CollectiveResult {
  Algorithm algorithm = Algorithm::kRing;  ///< the one taken
  std::int64_t picoseconds = 0;
  std::uint64_t messages = 0;
  PlanTiming timing;                  ///< of the algorithm taken
  std::vector<Candidate> candidates;  ///< every algorithm, in kAllAlgorithms order
};

/// Plans larger than this are not timed (a flat ring over thousands of chips); the algorithm is
/// reported as skipped.
inline constexpr std::uint64_t kMaxPlanOperations = 4'000'000;
/// Nor are plans whose operations times the messages that share a resource at once pass this:
/// each start and end of a message updates the rates of those it shares with, so a mesh over
/// hundreds of chips (every chip's HBM carrying a message to and from every other) costs the
/// cube of the ranks.
inline constexpr std::uint64_t kMaxPlanWork = 200'000'000;

/// The most messages `algorithm` has on one resource at once (its HBM), for kMaxPlanWork.
std::uint64_t concurrentMessages(const CollectiveRequest& request, Algorithm algorithm);

/// Times `request` by every algorithm that applies, or only by `algorithm` when given, and takes
/// the fastest. Fails on a bad request (a chip outside the system, a repeated chip, a size that
/// does not divide among the ranks) or when no algorithm applies.
Result<CollectiveResult> runCollective(const Topology& topology, const CollectiveRequest& request,
                                       std::optional<Algorithm> algorithm = std::nullopt);

/// nccom-test's bus-bandwidth factor: busbw = algbw * factor (2(n-1)/n for an all-reduce,
/// (n-1)/n for gathers, scatters and all-to-all (and v), 1 for broadcast and permute).
double busBandwidthFactor(CollectiveOp op, std::int64_t ranks);

}  // namespace trn::fabric
