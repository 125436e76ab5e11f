// The critical path of a recorded NeuronCore run, or of the cores of a logical core run together,
// computed from the records rather than guessed: starting from the event that ends last, it walks
// back through what each step waited for,
//
// - an instruction started when its engine was free (the previous instruction of the stream)
//   or, when it blocked on a semaphore, when the update that released it was seen
//   (dependencies.h);
// - a core_barrier or sendrecv passed when the last core to arrive at it arrived (the k-th of
//   each core meet, docs/chip.md): the path crosses to that core's instruction, the stretch from
//   its arrival to this core's release being the remote semaphore write (and a sendrecv's
//   crossing);
// - a DMA transfer moved data once issued (fixed cost, descriptor generation) or, when its queue
//   was busy, once the transfer ahead of it on the queue had landed;
//
// until it reaches time 0. The segments it leaves tile [0, end of the run] exactly, each with
// its cause, so their times add up to the run's length. The verdict (verdict.h) reads the sums.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/base/units.h"
#include "trn/core/timeline.h"
#include "trn/isa/engine.h"
#include "trn/isa/program.h"
#include "trn/profile/dependencies.h"

namespace trn::profile {

/// What a stretch of the critical path was spent on.
enum class PathCause : std::uint8_t {
  kCompute,     ///< an instruction occupying its engine (start..end)
  kCompletion,  ///< an instruction's pipeline latency before its update was applied (end..complete)
  kSemaphore,   ///< from an update to the start of the instruction it released
  kDmaIssue,    ///< a transfer issued but not yet moving data (fixed cost, descriptors)
  kDmaData,     ///< a transfer moving data (on its own or behind the transfer ahead on its queue)
  kDispatch,    ///< gaps between an engine's instructions, and before the first one
  kCrossCore,   ///< from the last core's arrival at a barrier or sendrecv to this core's release
};

/// "compute", "completion", "semaphore", "dma issue", "dma data", "dispatch", "cross-core".
std::string_view pathCauseName(PathCause cause);

/// One stretch of the critical path.
struct PathSegment {
  Picoseconds start;
  Picoseconds end;
  PathCause cause = PathCause::kDispatch;
  isa::Engine engine = isa::Engine::kPe;  ///< of the instruction (or of the transfer's issuer)
  std::int64_t record = -1;               ///< index into RunStats::records, -1 for none
  std::int64_t transfer = -1;             ///< index into RunStats::transfers for DMA stretches
  std::int32_t core = 0;  ///< whose records `record` and `transfer` index (position in the run)
};

struct CriticalPath {
  std::vector<PathSegment> segments;  ///< in time order; they tile [0, length]
  Picoseconds length;                 ///< when the last instruction or transfer ended
  std::array<Picoseconds, isa::kNumEngines> compute{};  ///< kCompute time, per engine
  Picoseconds completion;
  Picoseconds semaphore;
  Picoseconds dmaIssue;
  Picoseconds dmaData;
  Picoseconds dispatch;
  Picoseconds crossCore;
  std::int64_t handoffs = 0;   ///< semaphore waits the path goes through
  std::int64_t crossings = 0;  ///< barriers and sendrecvs where the path changes core
  std::int64_t transfers = 0;  ///< transfers on the path

  [[nodiscard]] Picoseconds totalCompute() const;
};

/// The critical path of `stats` (a run of `program` with records kept). An empty path when
/// nothing was recorded. Errors: those of findDependencies.
Result<CriticalPath> findCriticalPath(const isa::Program& program, const core::RunStats& stats);

/// The same, from dependencies already found for the run.
CriticalPath findCriticalPath(const core::RunStats& stats, std::span<const Dependency> deps);

/// The critical path of the cores of one logical core run together (programs[i] ran on
/// *cores[i], records kept; runtime::RunResult::cores), through their barriers and sendrecvs.
/// Errors: those of findDependencies, and invalidArgument when the spans differ in length or
/// hold a null pointer.
Result<CriticalPath> findCriticalPath(std::span<const isa::Program* const> programs,
                                      std::span<const core::RunStats* const> cores);

}  // namespace trn::profile
