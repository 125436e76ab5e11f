// What a run of a NeuronCore produced besides data: the simulation mode, the simulated time, and
// per-engine and DMA totals, plus (when recording is on) one record per executed instruction and
// per DMA transfer. The profile module turns this into reports and Perfetto traces; times are
// integer picoseconds from the start of the run.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/base/units.h"
#include "trn/isa/engine.h"

namespace trn::core {

/// How much of the machine a run models (architecture.md "Modes").
enum class RunMode : std::uint8_t {
  kFunctionalTiming,  ///< data values and time (the default of the command line)
  kTimingOnly,        ///< time only: no data is computed or stored; control flow still runs
  kFunctionalOnly,    ///< data values only; no clock
};

/// "functional+timing", "timing-only", "functional-only".
std::string_view runModeName(RunMode mode);
Result<RunMode> parseRunMode(std::string_view text);

/// True when the mode computes time / data values.
constexpr bool hasTiming(RunMode mode) { return mode != RunMode::kFunctionalOnly; }
constexpr bool hasData(RunMode mode) { return mode != RunMode::kTimingOnly; }

/// One executed instruction (one entry per execution: a loop body appears once per iteration).
struct InstructionRecord {
  isa::Engine engine = isa::Engine::kPe;
  std::uint32_t index = 0;  ///< position in the engine's stream
  Picoseconds ready;        ///< the sequencer reached it and its previous instruction was done
  Picoseconds start;        ///< its semaphore waits were seen to hold; the engine is busy from here
  Picoseconds end;          ///< the engine is free for its next instruction
  Picoseconds complete;     ///< results visible and semaphore updates applied
  std::int64_t cycles = 0;  ///< cost in cycles of the engine's clock (before throttling)
  std::string_view variant;  ///< cost-class variant that applied ("" for control and DMA triggers)
  double throttle = 1.0;     ///< TensorE power-throttle limit applied (1 = full speed)
  std::int64_t flops = 0;    ///< floating-point operations (2*K*M*N for a matmul, else 0)
};

/// One DMA transfer, issued by an instruction and run on a queue of the core's DMA engines.
struct TransferRecord {
  std::uint32_t instruction = 0;  ///< index into RunStats::records of the issuing instruction
  std::int32_t queue = 0;         ///< DMA queue id (0..15)
  Picoseconds issued;             ///< the issuing instruction started
  Picoseconds start;              ///< data started to move (after fixed cost and descriptors)
  Picoseconds end;                ///< last byte landed; semaphore updates applied
  std::int64_t bytes = 0;         ///< payload bytes written
  std::int64_t hbmBytes = 0;      ///< bytes read from or written to HBM
  std::int64_t descriptors = 0;   ///< contiguous buffers moved (one per element run)
  std::int32_t engines = 0;       ///< DMA engines that took part
  double efficiency = 1.0;        ///< payload time / engine time (descriptor overheads, transposes)
};

/// Where one engine's time went.
struct EngineTotals {
  std::uint64_t instructions = 0;
  Picoseconds busy;     ///< executing instructions
  Picoseconds waiting;  ///< ready but blocked on semaphore waits
};

/// Totals over the DMA transfers of a run.
struct DmaTotals {
  std::uint64_t transfers = 0;
  std::int64_t bytes = 0;
  std::int64_t hbmBytes = 0;
  /// hbmBytes by the chip's HBM stack they lie in (timed modes; one entry per stack).
  std::vector<std::int64_t> hbmBytesByStack;
  std::int64_t descriptors = 0;
  Picoseconds busy;  ///< time during which at least one transfer moved data
};

/// What a run did.
struct RunStats {
  RunMode mode = RunMode::kFunctionalOnly;
  std::uint64_t instructions = 0;
  Picoseconds total;  ///< simulated time until the last engine and transfer finished (0 untimed)
  std::array<EngineTotals, isa::kNumEngines> engines{};
  DmaTotals dma;
  std::int64_t flops = 0;  ///< TensorE floating-point operations
  /// Filled only when CoreOptions::record is set, up to CoreOptions::maxRecords records.
  std::vector<InstructionRecord> records;
  std::vector<TransferRecord> transfers;
  /// Instructions executed after the record limit was reached, so not recorded.
  std::uint64_t unrecorded = 0;
  /// Physical cores whose totals these are: 1 for a core's own statistics, more for the merged
  /// statistics of a multi-core run (mergeStats), whose records stay with each core.
  std::int32_t cores = 1;
};

/// The statistics of cores run together as one: the longest total time, every count and busy
/// or waiting time summed, `cores` their number, and no records.
RunStats mergeStats(std::span<const RunStats> cores);

}  // namespace trn::core
