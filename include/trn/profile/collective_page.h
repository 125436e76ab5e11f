// The data of the offline HTML report of a timed collective (`trnsim collectives bench|run
// --report`), for the same page and script as a core run's (page_data.h, html_report.h): the
// verdict (collective_verdict.h) and every algorithm's time; a timeline with the chips' links
// and HBM as tracks and the plan's operations (messages, reductions) as slices, overlapping ones
// on extra lanes of their resource; the busiest links' load over time; each resource's load and
// busy share.
//
// Big systems are aggregated so the page stays small: the timeline shows the chips holding the
// busiest resources (at most CollectivePageOptions::maxChips), merges slices past maxSlices as
// the core page does (slice_groups.h), and the resource table lists the busiest resources and a
// summary per class. Every figure and the verdict count every operation.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "trn/base/status.h"
#include "trn/fabric/collective.h"
#include "trn/fabric/flow_simulator.h"
#include "trn/fabric/plan.h"
#include "trn/profile/page_data.h"

namespace trn::profile {

/// One timed collective: the plan of the algorithm taken, its timing, what was asked and every
/// algorithm's outcome.
struct CollectiveRun {
  std::string system;  ///< the system's name, for the page's header
  const fabric::CollectiveRequest* request = nullptr;
  const fabric::CollectiveResult* result = nullptr;  ///< the choice and the candidates
  const fabric::Plan* plan = nullptr;                ///< of result->algorithm
  const fabric::PlanTiming* timing = nullptr;        ///< of plan
};

struct CollectivePageOptions {
  std::string title = "trnsim collective report";
  /// Timeline slices before aggregation: fewer than a core page's, as each one shown alone
  /// carries its message's route (4,096 chips stay under 2 MB).
  std::size_t maxSlices = 16000;
  std::size_t maxChips = 32;      ///< chips on the timeline
  std::size_t maxLanes = 4;       ///< lanes of a resource; more overlap on the last
  std::size_t busiestLinks = 8;   ///< links in the load-over-time chart
  std::size_t tableRows = 64;     ///< resources listed one by one
  std::size_t bins = 240;         ///< stretches of the load-over-time chart
};

/// The page's data for `run`. Errors: invalidArgument when a pointer is missing or the timing
/// does not belong to the plan. `summary` gets the slice counts and the verdict's headline.
Result<nlohmann::ordered_json> makeCollectivePageData(const CollectiveRun& run,
                                                      const CollectivePageOptions& options = {},
                                                      PageSummary* summary = nullptr);

}  // namespace trn::profile
