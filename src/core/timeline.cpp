#include "trn/core/timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

namespace trn::core {

namespace {

constexpr std::array<std::pair<RunMode, std::string_view>, 3> kModeNames = {{
    {RunMode::kFunctionalTiming, "functional+timing"},
    {RunMode::kTimingOnly, "timing-only"},
    {RunMode::kFunctionalOnly, "functional-only"},
}};

}  // namespace

std::string_view runModeName(RunMode mode) {
  for (const auto& [m, name] : kModeNames) {
    if (m == mode) {
      return name;
    }
  }
  return "?";
}

Result<RunMode> parseRunMode(std::string_view text) {
  for (const auto& [mode, name] : kModeNames) {
    if (name == text) {
      return mode;
    }
  }
  return invalidArgument(fmt::format(
      "unknown mode '{}' (expected functional+timing, timing-only or functional-only)", text));
}

RunStats mergeStats(std::span<const RunStats> cores) {
  RunStats merged;
  merged.cores = 0;
  for (const RunStats& s : cores) {
    merged.mode = s.mode;
    merged.instructions += s.instructions;
    merged.total = std::max(merged.total, s.total);
    for (std::size_t e = 0; e < merged.engines.size(); ++e) {
      merged.engines[e].instructions += s.engines[e].instructions;
      merged.engines[e].busy += s.engines[e].busy;
      merged.engines[e].waiting += s.engines[e].waiting;
    }
    merged.dma.transfers += s.dma.transfers;
    merged.dma.bytes += s.dma.bytes;
    merged.dma.hbmBytes += s.dma.hbmBytes;
    if (merged.dma.hbmBytesByStack.size() < s.dma.hbmBytesByStack.size()) {
      merged.dma.hbmBytesByStack.resize(s.dma.hbmBytesByStack.size(), 0);
    }
    for (std::size_t k = 0; k < s.dma.hbmBytesByStack.size(); ++k) {
      merged.dma.hbmBytesByStack[k] += s.dma.hbmBytesByStack[k];
    }
    merged.dma.descriptors += s.dma.descriptors;
    merged.dma.busy += s.dma.busy;
    merged.flops += s.flops;
    merged.unrecorded += s.unrecorded;
    merged.cores += s.cores;
  }
  return merged;
}

}  // namespace trn::core
