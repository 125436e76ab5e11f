#include "trn/profile/chip_summary.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "trn/profile/report.h"

namespace trn::profile {
namespace {

/// The summary of `stack` in `stacks`, added when it is not there yet.
StackSummary& stackSummary(std::vector<StackSummary>& stacks, std::int64_t stack,
                           double peakBytesPerSecond) {
  auto it = std::find_if(stacks.begin(), stacks.end(),
                         [&](const StackSummary& st) { return st.stack == stack; });
  if (it == stacks.end()) {
    it = stacks.insert(stacks.end(), StackSummary{stack, {}, 0, 0, peakBytesPerSecond, 0});
  }
  return *it;
}

}  // namespace

ChipSummary makeChipSummary(std::span<const core::RunStats> cores,
                            std::span<const int> physicalCores, const spec::ChipSpec& chip) {
  ChipSummary s;
  s.chip = chip.name;
  const spec::TensorEngine& pe = chip.core.pe;
  const double coreTflops = static_cast<double>(pe.rows) * static_cast<double>(pe.columns) * 2.0 *
                            static_cast<double>(pe.clock.count()) / 1e12;
  const double stackPeak = guardedRatio(static_cast<double>(chip.hbm.bandwidth.count()),
                                        static_cast<double>(chip.hbm.stacks));
  for (std::size_t i = 0; i < cores.size() && i < physicalCores.size(); ++i) {
    const core::RunStats& stats = cores[i];
    s.timed = core::hasTiming(stats.mode);
    CoreSummary c;
    c.physicalCore = physicalCores[i];
    const auto& stackOf = chip.hbm.stackOfCore;
    c.stack = static_cast<std::size_t>(c.physicalCore) < stackOf.size()
                  ? stackOf[static_cast<std::size_t>(c.physicalCore)]
                  : 0;
    c.total = stats.total;
    c.instructions = stats.instructions;
    const auto total = static_cast<double>(stats.total.count());
    c.peBusyFraction = guardedRatio(
        static_cast<double>(stats.engines[static_cast<std::size_t>(isa::Engine::kPe)].busy.count()),
        total);
    c.dmaBusyFraction = guardedRatio(static_cast<double>(stats.dma.busy.count()), total);
    c.flops = stats.flops;
    c.hbmBytes = stats.dma.hbmBytes;
    s.total = std::max(s.total, stats.total);
    s.flops += stats.flops;
    stackSummary(s.stacks, c.stack, stackPeak).cores.push_back(c.physicalCore);
    // Untimed runs have no bytes by stack: a core's traffic is then its own stack's.
    if (stats.dma.hbmBytesByStack.empty()) {
      stackSummary(s.stacks, c.stack, stackPeak).hbmBytes += c.hbmBytes;
    }
    for (std::size_t k = 0; k < stats.dma.hbmBytesByStack.size(); ++k) {
      if (stats.dma.hbmBytesByStack[k] > 0) {
        stackSummary(s.stacks, static_cast<std::int64_t>(k), stackPeak).hbmBytes +=
            stats.dma.hbmBytesByStack[k];
      }
    }
    s.cores.push_back(c);
  }
  std::sort(s.stacks.begin(), s.stacks.end(),
            [](const StackSummary& a, const StackSummary& b) { return a.stack < b.stack; });
  const double seconds = static_cast<double>(s.total.count()) / 1e12;
  for (StackSummary& st : s.stacks) {
    st.bytesPerSecond = guardedRatio(static_cast<double>(st.hbmBytes), seconds);
    st.utilisation = guardedRatio(st.bytesPerSecond, st.peakBytesPerSecond);
  }
  s.achievedTflops =
      guardedRatio(static_cast<double>(s.flops), static_cast<double>(s.total.count()));
  s.usedPeakTflops = coreTflops * static_cast<double>(s.cores.size());
  s.chipPeakTflops = coreTflops * static_cast<double>(chip.chip.neuronCores);
  s.mfuUsed = guardedRatio(s.achievedTflops, s.usedPeakTflops);
  s.mfuChip = guardedRatio(s.achievedTflops, s.chipPeakTflops);
  return s;
}

std::string formatChipSummary(const ChipSummary& s) {
  std::string out = fmt::format("chip summary: {}, {} cores\n", s.chip, s.cores.size());
  if (!s.timed) {
    out += fmt::format("{:<6}{:>7}{:>14}{:>18}{:>16}\n", "core", "stack", "instrs", "FLOP",
                       "HBM bytes");
    for (const CoreSummary& c : s.cores) {
      out += fmt::format("{:<6}{:>7}{:>14}{:>18}{:>16}\n", c.physicalCore, c.stack, c.instructions,
                         c.flops, c.hbmBytes);
    }
    return out + "(times and rates need a timed run)\n";
  }
  out += fmt::format("{:<6}{:>7}{:>14}{:>14}{:>8}{:>8}{:>18}{:>16}\n", "core", "stack", "time",
                     "instrs", "pe%", "dma%", "FLOP", "HBM bytes");
  for (const CoreSummary& c : s.cores) {
    out += fmt::format("{:<6}{:>7}{:>14}{:>14}{:>8.1f}{:>8.1f}{:>18}{:>16}\n", c.physicalCore,
                       c.stack, formatDuration(c.total), c.instructions, 100 * c.peBusyFraction,
                       100 * c.dmaBusyFraction, c.flops, c.hbmBytes);
  }
  for (const StackSummary& st : s.stacks) {
    const std::string cores = st.cores.empty()
                                  ? std::string("no core of the run; reached from others")
                                  : fmt::format("cores {}", fmt::join(st.cores, ", "));
    out +=
        fmt::format("HBM stack {} ({}): {:.1f} GB/s of {:.1f} GB/s ({:.1f} %)\n", st.stack, cores,
                    st.bytesPerSecond / 1e9, st.peakBytesPerSecond / 1e9, 100 * st.utilisation);
  }
  out += fmt::format(
      "chip: {} total, {:.3f} TFLOP/s; MFU {:.1f} % of the {} cores used ({:.1f} TFLOP/s), "
      "{:.1f} % of the chip ({:.1f} TFLOP/s)\n",
      formatDuration(s.total), s.achievedTflops, 100 * s.mfuUsed, s.cores.size(), s.usedPeakTflops,
      100 * s.mfuChip, s.chipPeakTflops);
  return out;
}

}  // namespace trn::profile
