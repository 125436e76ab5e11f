#include "trn/profile/verdict.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstddef>
#include <optional>

#include "trn/base/check.h"

namespace trn::profile {
namespace {

double seconds(Picoseconds t) { return static_cast<double>(t.count()) * 1e-12; }
double share(Picoseconds part, Picoseconds whole) {
  return guardedRatio(static_cast<double>(part.count()), static_cast<double>(whole.count()));
}
std::string percent(double fraction) { return fmt::format("{:.1f} %", fraction * 100.0); }

std::size_t busiestEngine(const std::array<double, isa::kNumEngines>& values) {
  return static_cast<std::size_t>(std::max_element(values.begin(), values.end()) - values.begin());
}

std::string engineLabel(std::size_t slot) {
  return std::string(isa::engineName(isa::kAllEngines[slot]));
}

void computeRemedies(Verdict& v, std::size_t engine) {
  if (isa::kAllEngines[engine] == isa::Engine::kPe) {
    v.remedies = {
        "feed TensorE bf16 or fp8 rather than fp32 (an fp32 matmul costs 4x)",
        "fill all 128 rows and give each matmul at least 64 moving columns (below that every "
        "matmul still pays MIN_II)",
        "move transposes off TensorE (dma_transpose) and cut redundant matmuls"};
  } else {
    v.remedies = {
        "spread element-wise work over ScalarE, VectorE and GpSimd instead of one engine",
        "fuse operations (an activation's scale and bias, tensor_scalar with two ops)",
        "keep operands bf16 and in SBUF for VectorE's 2x/4x modes; avoid PSUM sources"};
  }
}

void pathEvidence(Verdict& v, const VerdictFigures& f) {
  std::string parts;
  for (std::size_t e = 0; e < f.pathCompute.size(); ++e) {
    if (f.pathCompute[e] > 0) {
      parts += fmt::format("{} {}, ", engineLabel(e), percent(f.pathCompute[e]));
    }
  }
  v.evidence.push_back(fmt::format(
      "critical path ({}): compute {}dma issue {}, dma data {}, semaphore hand-offs {} ({} "
      "waits), dispatch {}",
      formatDuration(f.total), parts, percent(f.pathDmaIssue), percent(f.pathDmaData),
      percent(f.pathSemaphore), f.handoffs, percent(f.pathDispatch)));
}

void commonEvidence(Verdict& v, const VerdictFigures& f) {
  std::string engines;
  for (std::size_t e = 0; e < f.busy.size(); ++e) {
    if (f.busy[e] > 0 || f.waiting[e] > 0) {
      engines += fmt::format("{}{} busy {} waiting {}", engines.empty() ? "" : "; ",
                             engineLabel(e), percent(f.busy[e]), percent(f.waiting[e]));
    }
  }
  if (!engines.empty()) {
    v.evidence.push_back("engines: " + engines);
  }
  if (f.transfers > 0) {
    v.evidence.push_back(fmt::format(
        "DMA: load {} of the engines' peak, moving data {} of the time; {} transfers of {:.0f} B "
        "on average ({:.0f} B per descriptor); {:.2f} outstanding on average; {} from issue to "
        "first byte",
        percent(f.dmaLoad), percent(f.dmaBusy), f.transfers, f.averageTransferBytes,
        f.averageDescriptorBytes, f.outstanding, formatDuration(f.averageIssue)));
  }
  if (f.busiestStack >= 0) {
    v.evidence.push_back(fmt::format("HBM stack {}: {} of its bandwidth", f.busiestStack,
                                     percent(f.stackUtilisation)));
  }
  if (f.hasPath) {
    pathEvidence(v, f);
  } else {
    v.evidence.push_back(
        "no critical path: the run kept no records (--report and --trace keep them)");
  }
}

/// `onPath`: not saturated over the run, but the critical path is mostly data moving.
void bandwidth(Verdict& v, const VerdictFigures& f, bool onPath = false) {
  v.bound = Bound::kBandwidth;
  const bool stack = f.stackUtilisation > f.dmaLoad;
  v.subject = stack ? fmt::format("HBM stack {}", f.busiestStack) : "DMA engines";
  v.headline = stack ? fmt::format("bandwidth-bound on HBM stack {}: {} of its bandwidth",
                                   f.busiestStack, percent(f.stackUtilisation))
                     : fmt::format("bandwidth-bound on the DMA engines: {} of their peak",
                                   percent(f.dmaLoad));
  if (onPath) {
    v.headline += fmt::format(
        " over the run, and {} of the critical path is data moving: the rest of the run does "
        "not overlap the transfers",
        percent(f.pathDmaData));
  }
  v.remedies = {"move fewer bytes: keep tiles in SBUF and reuse them, fuse kernels, narrower "
                "dtypes",
                "make rows contiguous and long (>= 2 KiB per descriptor) so less engine time goes "
                "to descriptors",
                stack ? "spread tensors and cores over more HBM stacks"
                      : "overlap the remaining compute with the transfers (it is already hidden "
                        "if the engines wait little)"};
}

void latencyDma(Verdict& v, const VerdictFigures& f) {
  v.bound = Bound::kLatency;
  v.subject = "DMA latency";
  std::vector<std::string> causes;
  if (f.pathDmaIssue >= f.pathDmaData) {
    causes.push_back(
        fmt::format("issue latency ({} per transfer)", formatDuration(f.averageIssue)));
  }
  if (f.outstanding < f.inFlightNeeded) {
    causes.push_back(fmt::format(
        "too few transfers in flight ({:.2f} of the {:.1f} that would keep the DMA engines {} "
        "loaded)",
        f.outstanding, f.inFlightNeeded, percent(kSaturated)));
  }
  if (f.averageDescriptorBytes > 0 && f.averageDescriptorBytes < kSmallRowBytes) {
    causes.push_back(fmt::format("small rows ({:.0f} B per descriptor)", f.averageDescriptorBytes));
  }
  v.headline = fmt::format(
      "latency-bound on DMA: {} of the critical path waits for transfers ({} issue, {} data) "
      "while the DMA engines are {} loaded{}",
      percent(f.pathDmaIssue + f.pathDmaData), percent(f.pathDmaIssue), percent(f.pathDmaData),
      percent(f.dmaLoad),
      causes.empty() ? "" : fmt::format("; causes: {}", fmt::join(causes, ", ")));
  v.remedies = {
      "issue loads earlier and keep several in flight: double-buffer (prefetch tile i+1 while "
      "tile i computes) over several queues",
      "fewer, larger transfers (tens of KiB and more), each hiding the ~1.3 us fixed cost",
      "contiguous rows of at least 2 KiB per descriptor"};
}

void latencySemaphore(Verdict& v, const VerdictFigures& f) {
  v.bound = Bound::kLatency;
  v.subject = "semaphore round trips";
  v.headline = fmt::format(
      "latency-bound on semaphore round trips: {} of the critical path is hand-offs between "
      "engines ({} waits)",
      percent(f.pathSemaphore), f.handoffs);
  v.remedies = {"give each hand-off more work (larger tiles), so fewer waits are on the path",
                "keep dependent steps on one engine, where program order costs nothing",
                "pipeline: let the next tile's work start before this tile's result is back"};
}

void dependency(Verdict& v, const VerdictFigures& f) {
  v.bound = Bound::kDependency;
  v.subject = "dependency chain";
  std::vector<std::string> engines;
  for (std::size_t e = 0; e < f.pathCompute.size(); ++e) {
    if (f.pathCompute[e] > 0.05) {
      engines.push_back(engineLabel(e));
    }
  }
  v.headline = fmt::format(
      "dependency-bound: the critical path is compute on {} handing off through {} waits; no "
      "engine is busy more than {}",
      fmt::join(engines, ", "), f.handoffs, percent(f.busy[busiestEngine(f.busy)]));
  v.remedies = {"break the chain: software-pipeline (double-buffer) so one engine works on tile "
                "i+1 while the next finishes tile i",
                "move independent work between the dependent steps",
                "split the work into independent tiles the engines can run side by side"};
}

}  // namespace

std::string_view boundName(Bound bound) {
  switch (bound) {
    case Bound::kNone:
      return "none";
    case Bound::kCompute:
      return "compute-bound";
    case Bound::kBandwidth:
      return "bandwidth-bound";
    case Bound::kLatency:
      return "latency-bound";
    case Bound::kDependency:
      return "dependency-bound";
  }
  return "?";
}

VerdictFigures verdictFigures(const Report& report, const core::RunStats& stats,
                              const spec::ChipSpec& chip, const CriticalPath* path) {
  VerdictFigures f;
  f.total = report.total;
  if (!report.timed || report.total.count() <= 0) {
    return f;
  }
  for (std::size_t e = 0; e < report.engines.size(); ++e) {
    f.busy[e] = report.engines[e].busyFraction;
    f.waiting[e] = report.engines[e].waitingFraction;
  }
  const double cores = std::max(1, report.cores);
  const double span = seconds(report.total) * cores;
  const double corePeak = report.dmaPeakBytesPerSecond / cores;
  f.transfers = stats.dma.transfers;
  f.dmaBusy = report.dma.busyFraction;
  f.averageTransferBytes =
      guardedRatio(static_cast<double>(stats.dma.bytes), static_cast<double>(stats.dma.transfers));
  f.averageDescriptorBytes = guardedRatio(static_cast<double>(stats.dma.bytes),
                                          static_cast<double>(stats.dma.descriptors));
  if (!stats.transfers.empty()) {
    double engineBytes = 0;
    Picoseconds outstanding;
    Picoseconds issue;
    for (const core::TransferRecord& t : stats.transfers) {
      engineBytes += static_cast<double>(t.bytes) / std::max(t.efficiency, 1e-9);
      outstanding += t.end - t.issued;
      issue += t.start - t.issued;
    }
    f.dmaLoad = guardedRatio(engineBytes, span * corePeak);
    f.outstanding = share(outstanding, report.total);
    f.averageIssue = Picoseconds(issue.count() / static_cast<std::int64_t>(stats.transfers.size()));
    // Little's law: each transfer is outstanding for its fixed cost plus its bytes at the peak.
    const double residence = seconds(chip.core.dma.fixedCost) +
                             guardedRatio(f.averageTransferBytes, corePeak);
    f.inFlightNeeded = kSaturated * guardedRatio(corePeak * residence, f.averageTransferBytes);
  } else {
    f.dmaLoad = guardedRatio(static_cast<double>(stats.dma.bytes), span * corePeak);
  }
  const double stackPeak = guardedRatio(static_cast<double>(chip.hbm.bandwidth.count()),
                                        static_cast<double>(chip.hbm.stacks));
  for (std::size_t s = 0; s < stats.dma.hbmBytesByStack.size(); ++s) {
    const double use =
        guardedRatio(static_cast<double>(stats.dma.hbmBytesByStack[s]),
                     seconds(report.total) * stackPeak);
    if (stats.dma.hbmBytesByStack[s] > 0 && use > f.stackUtilisation) {
      f.stackUtilisation = use;
      f.busiestStack = static_cast<std::int64_t>(s);
    }
  }
  if (path != nullptr && path->length.count() > 0) {
    f.hasPath = true;
    for (std::size_t e = 0; e < path->compute.size(); ++e) {
      f.pathCompute[e] = share(path->compute[e], path->length);
    }
    f.pathDmaIssue = share(path->dmaIssue, path->length);
    f.pathDmaData = share(path->dmaData, path->length);
    f.pathSemaphore = share(path->semaphore + path->completion, path->length);
    f.pathDispatch = share(path->dispatch, path->length);
    f.handoffs = path->handoffs;
    f.pathTransfers = path->transfers;
  }
  return f;
}

Verdict decideVerdict(const VerdictFigures& f) {
  Verdict v;
  v.figures = f;
  if (f.total.count() <= 0) {
    v.headline = "no verdict: the run took no simulated time (untimed, or nothing ran)";
    return v;
  }
  const std::size_t engine = busiestEngine(f.busy);
  const double memory = std::max(f.dmaLoad, f.stackUtilisation);
  double pathCompute = 0;
  for (const double c : f.pathCompute) {
    pathCompute += c;
  }
  const std::size_t pathEngine = busiestEngine(f.pathCompute);
  const double pathDma = f.pathDmaIssue + f.pathDmaData;

  if (f.busy[engine] >= kSaturated && f.busy[engine] >= memory) {
    v.bound = Bound::kCompute;
    v.subject = engineLabel(engine);
    v.headline = fmt::format("compute-bound on {}: busy {} of the run", v.subject,
                             percent(f.busy[engine]));
    computeRemedies(v, engine);
  } else if (memory >= kSaturated) {
    bandwidth(v, f);
  } else if (!f.hasPath) {
    // No records: the busiest unit is all there is to go on.
    if (f.busy[engine] >= memory) {
      v.bound = Bound::kCompute;
      v.subject = engineLabel(engine);
      v.headline = fmt::format("busiest unit {} ({} busy); record the run for the critical path",
                               v.subject, percent(f.busy[engine]));
      computeRemedies(v, engine);
    } else {
      bandwidth(v, f);
    }
  } else if (pathDma >= pathCompute && pathDma >= f.pathSemaphore) {
    if (f.pathDmaData > f.pathDmaIssue && memory >= kHalfLoaded) {
      bandwidth(v, f, true);
    } else {
      latencyDma(v, f);
    }
  } else if (f.pathSemaphore >= pathCompute) {
    latencySemaphore(v, f);
  } else if (f.pathCompute[pathEngine] >= 0.75 * pathCompute) {
    v.bound = Bound::kCompute;
    v.subject = engineLabel(pathEngine);
    v.headline = fmt::format(
        "compute-bound on {}: its work is {} of the critical path (busy {} of the run)", v.subject,
        percent(f.pathCompute[pathEngine]), percent(f.busy[pathEngine]));
    computeRemedies(v, pathEngine);
  } else {
    dependency(v, f);
  }
  commonEvidence(v, f);
  return v;
}

std::string formatVerdict(const Verdict& verdict) {
  std::string out = fmt::format("verdict        {}\n", verdict.headline);
  for (const std::string& line : verdict.evidence) {
    out += fmt::format("  evidence     {}\n", line);
  }
  for (const std::string& line : verdict.remedies) {
    out += fmt::format("  remedy       {}\n", line);
  }
  return out;
}

std::string verdictLabel(const Verdict& verdict) {
  if (verdict.bound == Bound::kNone) {
    return verdict.subject.empty() ? std::string("-") : fmt::format("busiest: {}", verdict.subject);
  }
  return fmt::format("{} ({})", boundName(verdict.bound), verdict.subject);
}

Result<Verdict> explainRun(const isa::Program& program, const core::RunStats& stats,
                           const spec::ChipSpec& chip) {
  const Report report = makeReport(stats, chip);
  std::optional<CriticalPath> path;
  if (!stats.records.empty() && stats.unrecorded == 0) {
    TRN_ASSIGN_OR_RETURN(path, findCriticalPath(program, stats));
  }
  return decideVerdict(verdictFigures(report, stats, chip, path ? &*path : nullptr));
}

Result<Verdict> explainSlowestCore(std::span<const isa::Program* const> programs,
                                   std::span<const core::RunStats> cores,
                                   const spec::ChipSpec& chip) {
  TRN_CHECK(!cores.empty() && programs.size() == cores.size())
      << "explainSlowestCore needs one program per core";
  std::size_t slowest = 0;
  for (std::size_t c = 1; c < cores.size(); ++c) {
    if (cores[c].total > cores[slowest].total) {
      slowest = c;
    }
  }
  return explainRun(*programs[slowest], cores[slowest], chip);
}

}  // namespace trn::profile
