#include "trn/fabric/concurrent_collectives.h"

#include <fmt/format.h>

#include <algorithm>

#include "trn/fabric/flow_simulator.h"
#include "trn/fabric/plan.h"

namespace trn::fabric {

Result<ConcurrentResult> runConcurrentCollectives(
    const Topology& topology, std::span<const ConcurrentCollective> collectives) {
  ConcurrentResult result;
  Plan together(topology);
  std::vector<OpId> firstOp;
  for (std::size_t i = 0; i < collectives.size(); ++i) {
    const ConcurrentCollective& c = collectives[i];
    const auto where = [&](const Status& s) {
      return s.withContext(fmt::format("concurrent collective {}", i));
    };
    if (c.start < 0) {
      return invalidArgument(
          fmt::format("concurrent collective {} starts at {} ps, before the clock's 0", i,
                      c.start));
    }
    Result<CollectiveResult> alone = runCollective(topology, c.request, c.algorithm);
    if (!alone.ok()) {
      return where(alone.status());
    }
    Result<Plan> plan = buildPlan(topology, c.request, alone->algorithm);
    if (!plan.ok()) {
      return where(plan.status());
    }
    result.algorithms.push_back(alone->algorithm);
    result.alone.push_back(alone->picoseconds);
    firstOp.push_back(together.append(*plan, c.start));
  }
  firstOp.push_back(static_cast<OpId>(together.ops().size()));
  TRN_ASSIGN_OR_RETURN(const PlanTiming timing, simulate(together));
  result.events = timing.events;
  for (std::size_t i = 0; i < collectives.size(); ++i) {
    std::int64_t end = collectives[i].start;
    for (OpId op = firstOp[i]; op < firstOp[i + 1]; ++op) {
      end = std::max(end, timing.opEnd[op]);
    }
    result.together.push_back(end - collectives[i].start);
  }
  return result;
}

}  // namespace trn::fabric
