// The verdict of a run: what bounds it, decided from figures, with the figures and the usual
// remedies. One of
//
// - compute-bound on an engine: the engine is busy most of the run (busy >= kSaturated of the
//   total), or its work is most of the critical path;
// - bandwidth-bound on the DMA engines or an HBM stack: their load (bytes over the run, counting
//   descriptor overheads, against the peak) reaches kSaturated, or the critical path is mostly
//   data moving with the DMA engines more than half loaded;
// - latency-bound: nothing is saturated and the critical path is mostly DMA issue latency
//   (fixed cost, descriptor generation: too few transfers in flight, small rows) or semaphore
//   round trips between engines;
// - dependency-bound: nothing is saturated and the critical path is compute spread over several
//   engines that hand off to each other through waits.
//
// Saturation is checked first (the busiest resource wins), then the critical path
// (critical_path.h) decides; a run without records falls back to the busiest unit.
// docs/profiling.md explains the rules with examples.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/base/units.h"
#include "trn/core/timeline.h"
#include "trn/isa/engine.h"
#include "trn/profile/critical_path.h"
#include "trn/profile/report.h"
#include "trn/spec/chip_spec.h"

namespace trn::profile {

/// A resource busy at least this fraction of the run bounds it: nothing else can then speed the
/// run by more than 1 / 0.75 = 1.33x (docs/profiling.md, "The thresholds").
inline constexpr double kSaturated = 0.75;
/// Unsaturated, a critical path mostly of data moving is bandwidth-bound once the DMA load
/// reaches this: more transfers in flight could then gain at most 1 / 0.5 = 2x.
inline constexpr double kHalfLoaded = 0.5;
/// Rows of at most this many bytes per descriptor are "small" (89 % DMA efficiency at 2 KiB on
/// trn2, docs/timing.md).
inline constexpr double kSmallRowBytes = 2048;

enum class Bound : std::uint8_t { kNone, kCompute, kBandwidth, kLatency, kDependency };

/// "none", "compute-bound", "bandwidth-bound", "latency-bound", "dependency-bound".
std::string_view boundName(Bound bound);

/// Everything the verdict is decided from. Fractions are of the run's total time; path shares
/// are of the critical path's length (equal to the total).
struct VerdictFigures {
  Picoseconds total;
  std::array<double, isa::kNumEngines> busy{};
  std::array<double, isa::kNumEngines> waiting{};
  /// DMA engine time the transfers took (bytes / efficiency at the engines' peak) over the run's
  /// total x the core's DMA peak: 1 means the engines never rested. Without records, payload
  /// bytes over total x peak.
  double dmaLoad = 0;
  double dmaBusy = 0;  ///< some transfer was moving data
  std::int64_t busiestStack = -1;
  double stackUtilisation = 0;  ///< of the busiest HBM stack, its bytes over total x stack peak
  std::uint64_t transfers = 0;
  double averageTransferBytes = 0;
  double averageDescriptorBytes = 0;
  double outstanding = 0;      ///< transfers issued and not yet landed, averaged over the run
  /// Transfers of the run's average size that must be outstanding for the DMA engines to be
  /// kSaturated loaded (Little's law: kSaturated x peak x (fixed cost + size / peak) / size).
  double inFlightNeeded = 0;
  Picoseconds averageIssue;    ///< from issue to the first byte moving, per transfer
  bool hasPath = false;        ///< records were kept and the critical path computed
  std::array<double, isa::kNumEngines> pathCompute{};
  double pathDmaIssue = 0;
  double pathDmaData = 0;
  double pathSemaphore = 0;    ///< semaphore hand-offs and the pipeline latency before them
  double pathDispatch = 0;
  std::int64_t handoffs = 0;
  std::int64_t pathTransfers = 0;
};

struct Verdict {
  Bound bound = Bound::kNone;
  std::string subject;   ///< "pe", "DMA engines", "HBM stack 1", "DMA issue latency", ...
  std::string headline;  ///< one sentence
  std::vector<std::string> evidence;  ///< the figures behind it, one per line
  std::vector<std::string> remedies;  ///< the usual fixes for this bound
  VerdictFigures figures;
};

/// The figures of a run of one core (`stats`, with records when `path` is given) on `chip`,
/// whose report is `report`.
VerdictFigures verdictFigures(const Report& report, const core::RunStats& stats,
                              const spec::ChipSpec& chip, const CriticalPath* path);

/// Decides the verdict from `figures` (the rules above).
Verdict decideVerdict(const VerdictFigures& figures);

/// The verdict as text: the headline, then the evidence and remedies as indented lines.
std::string formatVerdict(const Verdict& verdict);

/// The verdict in a few words for tables: "latency-bound (DMA latency)", "compute-bound (pe)".
std::string verdictLabel(const Verdict& verdict);

/// The verdict of a run of `program` on one core of `chip`: with the critical path when `stats`
/// holds every instruction's record, else from the figures alone (the busiest unit).
Result<Verdict> explainRun(const isa::Program& program, const core::RunStats& stats,
                           const spec::ChipSpec& chip);

/// The verdict of a run of several cores (programs[i] ran on cores[i]): explainRun of the core
/// that took longest, the one that bounds the run.
Result<Verdict> explainSlowestCore(std::span<const isa::Program* const> programs,
                                   std::span<const core::RunStats> cores,
                                   const spec::ChipSpec& chip);

}  // namespace trn::profile
