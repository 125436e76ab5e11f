// Times a Plan on its topology: an event-driven fluid model in integer picoseconds. An operation
// starts when its predecessors have ended plus its start delay, then moves its bytes through all
// its resources at once (cut-through: a message occupies every link of its route while it
// streams); its rate is the smallest over its resources of the resource's bandwidth divided by
// the operations using it at that moment and by the bytes it passes there per byte it moves (a
// reduction reading three inputs from one HBM stack uses it four times over), recomputed whenever
// one starts or stops. It ends its end delay (the route's latency) after its last byte. Equal
// shares are an approximation of max-min fairness that is exact when the flows sharing a link are
// alike, as a collective's are, and keep the cost of an event to the flows on the resources that
// changed. Deterministic: ties are broken in the order events were scheduled. An operation issued
// by a chip's collective cores (PlanOp::issuer) holds one from its start to its last byte; when all
// of the chip's are held it waits, and the first to wait gets the next one freed. Its rate is also
// at most its PlanOp::rateLimit (one collective core's DMA engines). An operation queued behind
// another (PlanOp::queuedBehind, the slices of a ring step on one DMA queue) also waits for that
// one's last byte to leave.
#pragma once

#include <cstdint>
#include <vector>

#include "trn/base/status.h"
#include "trn/fabric/plan.h"

namespace trn::fabric {

struct PlanTiming {
  std::int64_t makespan = 0;          ///< ps from the first operation's start to the last end
  std::vector<double> resourceBytes;  ///< bytes each resource carried
  std::uint64_t events = 0;           ///< simulation events processed (for the benchmarks)
  std::vector<std::int64_t> opStart;  ///< per operation, ps: its first byte moves (or it starts)
  std::vector<std::int64_t> opEnd;    ///< per operation, ps: it ends
};

/// The timing of `plan`; fails when an operation needs a resource of no bandwidth or the time
/// passes kMaxSimulatedTime.
Result<PlanTiming> simulate(const Plan& plan);

}  // namespace trn::fabric
