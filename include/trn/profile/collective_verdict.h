// The verdict of a timed collective, decided from figures as a core run's is (verdict.h):
//
// - bandwidth-bound on a class of resources (a link class such as neuronlink or efa, or HBM)
//   when its busiest resource carried at least kSaturated of what its bandwidth allows over the
//   makespan, or when streaming is most of the critical path (collective_path.h): then on the
//   class that set the path's rate for most of its streaming time;
// - latency-bound when the path's hop latencies and per-message overheads outweigh its
//   streaming: by per-hop latency or by message overheads, whichever is larger.
//
// docs/profiling.md explains the rules and the thresholds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trn/base/status.h"
#include "trn/fabric/flow_simulator.h"
#include "trn/fabric/plan.h"
#include "trn/profile/collective_path.h"
#include "trn/profile/verdict.h"

namespace trn::profile {

/// The resources of one class over the run.
struct ResourceClassLoad {
  std::string name;  ///< the link class ("neuronlink", "efa") or "HBM"
  bool link = false;
  std::int64_t resources = 0;  ///< of the class that carried bytes
  double bandwidth = 0;        ///< bytes per second of one resource (per direction for a link)
  fabric::ResourceId busiest = 0;
  std::string busiestName;  ///< "chip 3 x+"
  double busiestLoad = 0;  ///< bytes carried / (bandwidth x makespan)
  double averageLoad = 0;  ///< over the resources that carried bytes
  std::int64_t pathData = 0;  ///< ps of the critical path streaming at this class's rate
};

struct CollectiveFigures {
  std::int64_t makespan = 0;  ///< ps
  std::vector<ResourceClassLoad> classes;
  CollectivePath path;
  std::int64_t hopLatency = 0;       ///< ps per hop of the path's links (their average)
  std::int64_t messageOverhead = 0;  ///< ps per message on the path (their average)
};

/// The class of resource `r`: its link class, or "HBM" for a chip's HBM (or the resource's
/// name without its chip for resources of other kinds).
std::string resourceClass(const fabric::Topology& topology, fabric::ResourceId r);

/// The figures of `plan` as `timing` timed it.
Result<CollectiveFigures> collectiveFigures(const fabric::Plan& plan,
                                            const fabric::PlanTiming& timing);

/// Decides the verdict from `figures` (the rules above). Verdict::figures stays empty: those are
/// a core run's.
Verdict decideCollectiveVerdict(const CollectiveFigures& figures);

}  // namespace trn::profile
