#include "trn/profile/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>

namespace trn::profile {

double guardedRatio(double numerator, double denominator) {
  return denominator > 0 ? numerator / denominator : 0.0;
}

namespace {

constexpr double kPicosecondsPerSecond = 1e12;

double fractionOf(Picoseconds part, Picoseconds whole) {
  return guardedRatio(static_cast<double>(part.count()), static_cast<double>(whole.count()));
}

EngineUsage engineUsage(isa::Engine engine, const core::RunStats& stats, bool timed) {
  const auto slot = static_cast<std::size_t>(engine);
  const core::EngineTotals& totals = stats.engines[slot];
  EngineUsage usage;
  usage.engine = engine;
  usage.instructions = totals.instructions;
  if (!timed) {
    return usage;
  }
  // Merged statistics of several cores hold each engine's time summed over them.
  const Picoseconds span = stats.total * std::max(1, stats.cores);
  usage.busy = totals.busy;
  usage.waiting = totals.waiting;
  usage.idle = std::max(Picoseconds(0), span - totals.busy - totals.waiting);
  usage.busyFraction = fractionOf(usage.busy, span);
  usage.waitingFraction = fractionOf(usage.waiting, span);
  usage.idleFraction = fractionOf(usage.idle, span);
  return usage;
}

DmaUsage dmaUsage(const core::DmaTotals& totals, Picoseconds total, double peakBytesPerSecond,
                  bool timed) {
  DmaUsage usage;
  usage.transfers = totals.transfers;
  usage.bytes = totals.bytes;
  usage.descriptors = totals.descriptors;
  if (!timed) {
    return usage;
  }
  usage.busy = totals.busy;
  usage.busyFraction = fractionOf(totals.busy, total);
  const double busySeconds = static_cast<double>(totals.busy.count()) / kPicosecondsPerSecond;
  usage.efficiency =
      guardedRatio(static_cast<double>(totals.bytes), busySeconds * peakBytesPerSecond);
  return usage;
}

/// Busiest engine in engine order, then DMA; strict comparison keeps the earlier one on a tie.
void findCriticalEngine(Report& report) {
  for (const EngineUsage& usage : report.engines) {
    if (usage.busy > report.criticalBusy) {
      report.criticalBusy = usage.busy;
      report.criticalEngine = std::string(isa::engineName(usage.engine));
    }
  }
  if (report.dma.busy > report.criticalBusy) {
    report.criticalBusy = report.dma.busy;
    report.criticalEngine = "dma";
  }
}

double percent(double fraction) { return fraction * 100.0; }

void appendEngineTable(std::string& out, const Report& report) {
  if (report.timed) {
    out += fmt::format("{:<8}{:>10}{:>14}{:>14}{:>14}{:>8}{:>8}{:>8}\n", "engine", "instrs", "busy",
                       "waiting", "idle", "busy%", "wait%", "idle%");
    for (const EngineUsage& e : report.engines) {
      out += fmt::format("{:<8}{:>10}{:>14}{:>14}{:>14}{:>8.1f}{:>8.1f}{:>8.1f}\n",
                         isa::engineName(e.engine), e.instructions, formatDuration(e.busy),
                         formatDuration(e.waiting), formatDuration(e.idle), percent(e.busyFraction),
                         percent(e.waitingFraction), percent(e.idleFraction));
    }
    return;
  }
  out += fmt::format("{:<8}{:>10}\n", "engine", "instrs");
  for (const EngineUsage& e : report.engines) {
    out += fmt::format("{:<8}{:>10}\n", isa::engineName(e.engine), e.instructions);
  }
}

}  // namespace

std::string formatDuration(Picoseconds time) {
  struct Unit {
    std::int64_t picoseconds;
    std::string_view name;
  };
  constexpr std::array<Unit, 4> kUnits = {
      {{1'000'000'000'000, "s"}, {1'000'000'000, "ms"}, {1'000'000, "us"}, {1'000, "ns"}}};
  for (const Unit& unit : kUnits) {
    if (time.count() >= unit.picoseconds) {
      return fmt::format("{:.3f} {}",
                         static_cast<double>(time.count()) / static_cast<double>(unit.picoseconds),
                         unit.name);
    }
  }
  return fmt::format("{} ps", time.count());
}

Report makeReport(const core::RunStats& stats, const spec::ChipSpec& chip) {
  Report report;
  report.chip = chip.name;
  report.mode = stats.mode;
  report.timed = core::hasTiming(stats.mode);
  report.total = report.timed ? stats.total : Picoseconds(0);
  report.instructions = stats.instructions;
  report.cores = std::max(1, stats.cores);
  for (std::size_t slot = 0; slot < isa::kAllEngines.size(); ++slot) {
    report.engines[slot] = engineUsage(isa::kAllEngines[slot], stats, report.timed);
  }

  const spec::TensorEngine& pe = chip.core.pe;
  const double peFlopsPerSecond = static_cast<double>(pe.rows) * static_cast<double>(pe.columns) *
                                  2.0 * static_cast<double>(pe.clock.count());
  const auto cores = static_cast<double>(report.cores);
  report.peBf16PeakTflops = cores * peFlopsPerSecond / 1e12;
  report.dmaPeakBytesPerSecond = cores * static_cast<double>(chip.core.dma.enginesPerCore) *
                                 static_cast<double>(chip.core.dma.engineBandwidth.count());
  report.dma = dmaUsage(stats.dma, report.total * report.cores,
                        report.dmaPeakBytesPerSecond / cores, report.timed);
  report.flops = stats.flops;
  report.hbmBytes = stats.dma.hbmBytes;

  const double totalSeconds = static_cast<double>(report.total.count()) / kPicosecondsPerSecond;
  // FLOP per picosecond is exactly TFLOP/s.
  report.achievedTflops =
      guardedRatio(static_cast<double>(stats.flops), static_cast<double>(report.total.count()));
  report.peUtilisation = guardedRatio(report.achievedTflops, report.peBf16PeakTflops);
  report.hbmBytesPerSecond = guardedRatio(static_cast<double>(report.hbmBytes), totalSeconds);
  report.hbmUtilisation = guardedRatio(report.hbmBytesPerSecond, report.dmaPeakBytesPerSecond);
  findCriticalEngine(report);
  return report;
}

std::string formatReport(const Report& report) {
  std::string out = fmt::format(
      "trnsim run report: {}, {}{}\n", report.chip.empty() ? "?" : report.chip,
      core::runModeName(report.mode),
      report.cores > 1 ? fmt::format(", {} cores (times summed over them)", report.cores)
                       : std::string());
  if (report.timed) {
    out += fmt::format("{:<15}{} ({} ps)\n", "total time", formatDuration(report.total),
                       report.total.count());
  } else {
    out += fmt::format("{:<15}unavailable ({} run: no timing)\n", "total time",
                       core::runModeName(report.mode));
  }
  out += fmt::format("{:<15}{}\n\n", "instructions", report.instructions);
  appendEngineTable(out, report);

  const DmaUsage& dma = report.dma;
  out += fmt::format("\n{:<15}{} transfers, {} bytes, {} descriptors", "dma", dma.transfers,
                     dma.bytes, dma.descriptors);
  if (report.timed) {
    out +=
        fmt::format("; busy {} ({:.1f} %), efficiency {:.1f} % of the core DMA peak",
                    formatDuration(dma.busy), percent(dma.busyFraction), percent(dma.efficiency));
  }
  out += '\n';

  if (!report.timed) {
    out += fmt::format("{:<15}{} FLOP (rates need a timed run)\n", "compute", report.flops);
    out += fmt::format("{:<15}{} bytes moved\n", "HBM", report.hbmBytes);
    return out;
  }
  out += fmt::format(
      "{:<15}{} FLOP, {:.3f} TFLOP/s; PE utilisation {:.1f} % of the BF16 dense peak "
      "({:.1f} TFLOP/s)\n",
      "compute", report.flops, report.achievedTflops, percent(report.peUtilisation),
      report.peBf16PeakTflops);
  out += fmt::format(
      "{:<15}{} bytes moved, {:.3f} GB/s; {:.1f} % of the core DMA peak ({:.1f} GB/s)\n", "HBM",
      report.hbmBytes, report.hbmBytesPerSecond / 1e9, percent(report.hbmUtilisation),
      report.dmaPeakBytesPerSecond / 1e9);
  if (report.criticalEngine.empty()) {
    out += fmt::format("{:<15}none (nothing was busy)\n", "critical");
  } else {
    out += fmt::format("{:<15}{} (busy {}, {:.1f} % of total)\n", "critical", report.criticalEngine,
                       formatDuration(report.criticalBusy),
                       percent(fractionOf(report.criticalBusy, report.total * report.cores)));
  }
  return out;
}

}  // namespace trn::profile
