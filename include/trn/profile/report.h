// The run report: where a NeuronCore run spent its time and how close it came to the hardware's
// peaks, derived from core::RunStats and the chip description. Per engine it splits the run into
// busy, waiting-on-semaphore and idle time; for the core it gives achieved TFLOP/s, TensorE
// utilisation against the dense BF16 peak, HBM bytes and bandwidth utilisation against the
// core's DMA peak, DMA efficiency, and the critical (busiest) engine. formatReport renders it as
// a fixed-width text table. A functional-only run has no clock: its report keeps the counts and
// marks every time-based figure as unavailable (all of them are then zero).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "trn/base/units.h"
#include "trn/core/timeline.h"
#include "trn/isa/engine.h"
#include "trn/spec/chip_spec.h"

namespace trn::profile {

/// Where one engine's time went. The three times add up to the run's total time (idle is what
/// remains after busy and waiting, never negative); fractions are of the total (0 when untimed).
struct EngineUsage {
  isa::Engine engine = isa::Engine::kPe;
  std::uint64_t instructions = 0;
  Picoseconds busy;     ///< executing instructions
  Picoseconds waiting;  ///< ready but blocked on semaphore waits
  Picoseconds idle;     ///< total - busy - waiting, clamped at 0
  double busyFraction = 0;
  double waitingFraction = 0;
  double idleFraction = 0;
};

/// What the core's DMA engines did.
struct DmaUsage {
  std::uint64_t transfers = 0;
  std::int64_t bytes = 0;        ///< payload bytes written
  std::int64_t descriptors = 0;  ///< contiguous buffers moved
  Picoseconds busy;              ///< time during which at least one transfer moved data
  double busyFraction = 0;       ///< busy / total
  /// bytes / (busy x core DMA peak): how much of the peak the DMA engines achieved while moving
  /// data (descriptor overheads, few engines per transfer and transposes lower it); 0 if not busy.
  double efficiency = 0;
};

/// The report of one run.
struct Report {
  std::string chip;  ///< ChipSpec::name
  core::RunMode mode = core::RunMode::kFunctionalOnly;
  bool timed = false;  ///< the mode models time; when false every time-based figure is 0
  Picoseconds total;   ///< simulated time of the run
  /// Physical cores the run used (core::RunStats::cores). With several, engine and DMA times are
  /// summed over them, fractions are of total x cores, and the peaks are the cores' together.
  std::int32_t cores = 1;
  std::uint64_t instructions = 0;

  std::array<EngineUsage, isa::kNumEngines> engines{};  ///< in isa::kAllEngines order
  DmaUsage dma;

  std::int64_t flops = 0;     ///< TensorE floating-point operations
  double achievedTflops = 0;  ///< flops / total, in 1e12 FLOP/s
  /// Dense BF16 peak of TensorE: rows x columns x 2 FLOP per cycle at the PE clock, in TFLOP/s
  /// (78.6 on trn2).
  double peBf16PeakTflops = 0;
  /// achievedTflops / peBf16PeakTflops. Always measured against the BF16 peak, whatever the data
  /// types: FP8 double-row matmuls do two multiplies per PE per cycle and can take this above
  /// 1.0, which is then a real speed-up over BF16, not an error.
  double peUtilisation = 0;

  std::int64_t hbmBytes = 0;  ///< bytes read from or written to HBM by the core's DMA
  /// Peak bandwidth of the core's DMA: engines per core x engine bandwidth, in bytes/s (368e9 on
  /// trn2). The core reaches HBM only through these engines, so this bounds its HBM traffic.
  double dmaPeakBytesPerSecond = 0;
  double hbmBytesPerSecond = 0;  ///< hbmBytes / total
  double hbmUtilisation = 0;     ///< hbmBytesPerSecond / dmaPeakBytesPerSecond

  /// The engine with the most busy time ("pe", "act", "dve", "pool", "sp", or "dma" for the DMA
  /// engines as one unit); ties go to the first in engine order, DMA last. "" when nothing was
  /// busy (e.g. an untimed run).
  std::string criticalEngine;
  Picoseconds criticalBusy;  ///< its busy time
};

/// Derives the report of a run on `chip`. Every division is guarded: zero total time, zero DMA
/// busy time or a zero peak give 0 rather than a NaN or infinity.
Report makeReport(const core::RunStats& stats, const spec::ChipSpec& chip);

/// The report as readable fixed-width text, one engine per table row, ending in a newline.
std::string formatReport(const Report& report);

/// numerator / denominator, or 0 when the denominator is not positive.
double guardedRatio(double numerator, double denominator);

/// A time in the largest unit that keeps it >= 1, with three decimals ("600.000 ns").
std::string formatDuration(Picoseconds time);

}  // namespace trn::profile
