// The chip summary of a run on several physical cores: per core its time, busy engines, FLOPs and
// HBM traffic; per HBM stack the bandwidth the run used against what the stack offers; for the
// chip the achieved TFLOP/s and MFU against the peak of the cores used and of the whole chip.
// Per-core detail is each core's own run report (report.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "trn/base/units.h"
#include "trn/core/timeline.h"
#include "trn/spec/chip_spec.h"

namespace trn::profile {

struct CoreSummary {
  int physicalCore = 0;
  std::int64_t stack = 0;  ///< its HBM stack
  Picoseconds total;
  std::uint64_t instructions = 0;
  double peBusyFraction = 0;   ///< TensorE busy / the core's total
  double dmaBusyFraction = 0;  ///< DMA busy / the core's total
  std::int64_t flops = 0;
  std::int64_t hbmBytes = 0;
};

struct StackSummary {
  std::int64_t stack = 0;
  std::vector<int> cores;     ///< physical cores of the run on it (none: reached from others)
  std::int64_t hbmBytes = 0;  ///< HBM traffic to its addresses, from any core
  double bytesPerSecond = 0;  ///< over the run's total time
  double peakBytesPerSecond = 0;
  double utilisation = 0;
};

struct ChipSummary {
  std::string chip;
  bool timed = false;
  Picoseconds total;  ///< the longest core
  std::vector<CoreSummary> cores;
  /// The stacks the run's cores sit on or reach, in stack order.
  std::vector<StackSummary> stacks;
  std::int64_t flops = 0;
  double achievedTflops = 0;
  double usedPeakTflops = 0;  ///< dense BF16 peak of the cores that ran
  double chipPeakTflops = 0;  ///< of every core of the chip
  double mfuUsed = 0;         ///< achievedTflops / usedPeakTflops
  double mfuChip = 0;         ///< achievedTflops / chipPeakTflops
};

/// The summary of `cores` (statistics in launch order) run on `physicalCores` of `chip`.
ChipSummary makeChipSummary(std::span<const core::RunStats> cores,
                            std::span<const int> physicalCores, const spec::ChipSpec& chip);

/// The summary as fixed-width text, ending in a newline.
std::string formatChipSummary(const ChipSummary& summary);

}  // namespace trn::profile
