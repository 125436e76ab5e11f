// Collectives in flight at once on one fabric: the collectives of several replica groups (the
// tensor-parallel groups of a TP x DP layout, a kernel's collectives on disjoint groups), each
// starting at its own time. Each is given the algorithm that is fastest for it alone (or the one
// named), then all their plans are timed as one (flow_simulator.h), so that where their messages
// meet on a link, an HBM stack or a chip's collective cores they share it; collectives whose
// traffic meets nowhere take exactly the time they take alone.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "trn/base/status.h"
#include "trn/fabric/collective.h"

namespace trn::fabric {

/// One of the collectives in flight.
struct ConcurrentCollective {
  CollectiveRequest request;
  std::optional<Algorithm> algorithm;  ///< unset: the fastest for this request alone
  std::int64_t start = 0;              ///< ps, on the clock of all of them (>= 0)
};

struct ConcurrentResult {
  std::vector<Algorithm> algorithms;  ///< per collective, the one it runs
  std::vector<std::int64_t> alone;    ///< per collective, ps it takes alone
  std::vector<std::int64_t> together; ///< per collective, ps from its start to its end, together
  std::uint64_t events = 0;           ///< simulation events of the joint timing
};

/// Times `collectives` together. Fails on a bad request (as runCollective does) naming which
/// one, or a negative start.
Result<ConcurrentResult> runConcurrentCollectives(
    const Topology& topology, std::span<const ConcurrentCollective> collectives);

}  // namespace trn::fabric
