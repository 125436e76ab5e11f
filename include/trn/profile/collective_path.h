// The critical path of a timed collective (a fabric::Plan as flow_simulator.h timed it), walked
// back from the operation that ended last: each operation started its per-message overhead
// (startDelay) after the last of its predecessors ended, streamed its bytes, then waited out its
// route's hop latency (endDelay). The segments tile [0, makespan] exactly, so their causes'
// shares add up to 100 %. Each streaming segment also names the resource that most likely set
// its rate: of the operation's resources, the one with the least bandwidth per operation
// streaming through it at once, averaged over the segment.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/fabric/flow_simulator.h"
#include "trn/fabric/plan.h"

namespace trn::profile {

enum class CollectiveCause : std::uint8_t {
  kData,      ///< an operation streaming its bytes
  kLatency,   ///< the route's hop latency after the last byte left (PlanOp::endDelay)
  kOverhead,  ///< per-message overheads before the first byte (PlanOp::startDelay)
  kWaiting,   ///< nothing on the path moved (a gap the plan's dependencies do not explain)
};

/// "data", "hop latency", "message overhead", "waiting".
std::string_view collectiveCauseName(CollectiveCause cause);

struct CollectiveSegment {
  std::int64_t start = 0;  ///< ps
  std::int64_t end = 0;    ///< ps
  CollectiveCause cause = CollectiveCause::kWaiting;
  fabric::OpId op = 0;
  /// kData: the resource that set the rate (see above).
  fabric::ResourceId bottleneck = 0;
};

struct CollectivePath {
  std::vector<CollectiveSegment> segments;  ///< in time order, tiling [0, length]
  std::vector<fabric::OpId> ops;            ///< the operations on the path, in time order
  std::int64_t length = 0;                  ///< ps: the makespan
  std::int64_t data = 0;
  std::int64_t latency = 0;
  std::int64_t overhead = 0;
  std::int64_t waiting = 0;
  std::int64_t messages = 0;    ///< transfers between two chips on the path
  std::int64_t hops = 0;        ///< links those transfers crossed
  std::int64_t reductions = 0;  ///< operations on one chip's HBM alone
};

/// The critical path of `plan` as `timing` timed it. Errors: invalidArgument when the timing
/// does not belong to the plan (another operation count, an operation ending before it starts).
Result<CollectivePath> findCollectivePath(const fabric::Plan& plan,
                                          const fabric::PlanTiming& timing);

}  // namespace trn::profile
