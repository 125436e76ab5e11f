// The data of the offline HTML report (html_report.h), as one JSON document the page's script
// reads: the runs with their engine usage, verdict and critical-path breakdown; the timeline's
// tracks and slices (instructions and DMA transfers, with the static instruction table they
// point into), the semaphore arrows; the hot source lines; DMA bandwidth over time.
//
// Big runs are aggregated so the page stays small: past PageOptions::maxSlices, consecutive
// slices of a track merge into one "N instructions" slice per stretch of the timeline (the
// timeline keeps its shape, the detail goes); arrows are capped, those on the critical path
// first. The hot-line table and every figure are computed from every record, never capped.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "trn/base/status.h"
#include "trn/base/units.h"
#include "trn/core/timeline.h"
#include "trn/isa/program.h"
#include "trn/spec/chip_spec.h"

namespace trn::profile {

/// One core's run in the report. Runs placed at the same offset ran together (cores of one
/// launch); a sequence (the demo's layer) places each run where the previous one ended.
struct PageRun {
  std::string name;
  /// The timeline rows it draws on: runs of one lane share the tracks of their engines and
  /// queues (a core across a sequence of kernels); empty: its own rows, named by `name`. The
  /// track names carry the lane when the page has more than one.
  std::string lane;
  const isa::Program* program = nullptr;
  const core::RunStats* stats = nullptr;
  /// When it started. Two runs at one offset, and no others, are taken for the cores of an
  /// LNC=2 pair: their critical path is found across them (critical_path.h, through barriers
  /// and sendrecv) and drawn with an arrow where it changes core.
  Picoseconds offset;
};

struct PageOptions {
  std::string title = "trnsim report";
  std::size_t maxSlices = 40000;  ///< timeline slices before aggregation
  std::size_t maxArrows = 3000;   ///< dependency arrows drawn
  std::size_t bandwidthBins = 240;
};

/// What the page shows, and how much of the run it shows in full.
struct PageSummary {
  std::size_t slices = 0;      ///< timeline slices written (aggregated ones count once)
  std::size_t aggregated = 0;  ///< slices that stand for several records
  std::size_t arrows = 0;
  std::size_t lines = 0;  ///< rows of the hot-line table
  std::size_t chipsShown = 0;  ///< collective pages: chips on the timeline
  std::size_t chipsUsed = 0;   ///< collective pages: chips whose resources carried bytes
  /// Each run's name and verdict headline (verdict.h), in run order.
  std::vector<std::pair<std::string, std::string>> verdicts;
};

/// The page's data for `runs` on `chip`. Errors: invalidArgument for a run without program or
/// statistics, or whose records do not belong to its program; failedPrecondition for an
/// untimed run or one that executed instructions without keeping records.
Result<nlohmann::ordered_json> makePageData(const std::vector<PageRun>& runs,
                                            const spec::ChipSpec& chip,
                                            const PageOptions& options = {},
                                            PageSummary* summary = nullptr);

}  // namespace trn::profile
