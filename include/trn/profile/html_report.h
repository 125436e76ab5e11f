// The offline HTML report: one self-contained file that opens in a browser from disk, with no
// network. It holds the page's style and scripts (Apache ECharts, bundled in tools/report-ui,
// and the report's own script) and the run's data (page_data.h) as JSON, and shows the verdict
// with its evidence and remedies, per-engine busy / waiting / idle, the timeline (engines, DMA
// queues and cores; zoom, pan, hover details, the critical path outlined, semaphore arrows),
// DMA bandwidth over time and the table of hot source lines. docs/profiling.md shows how to
// read it.
//
// Once drawn, the page marks its <body> with data-status ("rendered", or "error" with the
// messages in data-errors) and data-slices (the timeline's slice count), which the browser test
// reads. A collective's report (collective_page.h) uses the same page and script.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "trn/base/status.h"
#include "trn/profile/collective_page.h"
#include "trn/profile/page_data.h"

namespace trn::profile {

/// Writes the report of `runs` on `chip` to `out`. The errors of makePageData, reported before
/// anything is written; ioError when the stream fails.
Status writeHtmlReport(std::ostream& out, const std::vector<PageRun>& runs,
                       const spec::ChipSpec& chip, const PageOptions& options = {},
                       PageSummary* summary = nullptr);

/// Writes the report to the file `path` (replacing it; its directory is created when missing),
/// with writeHtmlReport's errors and an ioError naming `path` when it cannot be written.
Status writeHtmlReportFile(const std::string& path, const std::vector<PageRun>& runs,
                           const spec::ChipSpec& chip, const PageOptions& options = {},
                           PageSummary* summary = nullptr);

/// Writes the report of a timed collective (collective_page.h) to `out`, with
/// makeCollectivePageData's errors and an ioError when the stream fails.
Status writeCollectiveReport(std::ostream& out, const CollectiveRun& run,
                             const CollectivePageOptions& options = {},
                             PageSummary* summary = nullptr);

/// The same to the file `path`, as writeHtmlReportFile writes its file.
Status writeCollectiveReportFile(const std::string& path, const CollectiveRun& run,
                                 const CollectivePageOptions& options = {},
                                 PageSummary* summary = nullptr);

}  // namespace trn::profile
