// A timed collective as Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing): each chip of
// the group is a process ("chip 5 (rank 5)"), each resource of the chip a track: its outgoing
// links ("x+", "y-", "node up") and its HBM. A transfer appears on every resource it holds while
// it streams (its route's links and both chips' HBM), from its first byte to its end, so shared
// links show as overlapping transfers; a reduction appears on its chip's HBM. Transfers that
// overlap on one resource go to extra lanes of it ("x+ #2"), each lane a track of nested events.
// On a chip with collective cores (chip.collective_cores), each core that issued something is a
// track too ("collective core 2"), holding each stream from its start to its last byte; a stream
// that waited for a core shows as a later start. Times are microseconds; the exact picosecond
// makespan is in "otherData".
#pragma once

#include <ostream>
#include <string>

#include "trn/base/status.h"
#include "trn/fabric/collective.h"
#include "trn/fabric/flow_simulator.h"
#include "trn/fabric/plan.h"

namespace trn::fabric {

/// Writes the trace of `plan` (built for `request` by `algorithm`) as `timing` timed it.
Status writeCollectiveTrace(std::ostream& out, const Plan& plan, const PlanTiming& timing,
                            const CollectiveRequest& request, Algorithm algorithm);

/// The same to the file `path`; an ioError names the path when it cannot be written.
Status writeCollectiveTraceFile(const std::string& path, const Plan& plan, const PlanTiming& timing,
                                const CollectiveRequest& request, Algorithm algorithm);

}  // namespace trn::fabric
