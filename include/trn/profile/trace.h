// The run trace: a NeuronCore run's instruction and DMA transfer records written as Chrome
// trace-event JSON, which ui.perfetto.dev and chrome://tracing open (the offline HTML report,
// html_report.h, needs neither). The core is one process ("NeuronCore", pid 0) with one track
// per engine that executed anything (tid = engine index, named e.g. "pe (Tensor)") followed by
// one track per DMA queue that carried a transfer (tid = 100 + queue, "dma queue 3"). Each
// executed instruction is a complete ("X") event from its start to its end with the
// instruction's text, stream index, cycles, cost variant, semaphore waits and signals, time
// spent waiting, throttle, FLOPs and source location in its arguments; each transfer is an X
// event on its queue's track from the moment data starts to move until the last byte lands,
// with its issuing instruction's text and source location. Source files are shown relative to
// the kernel's project (source_paths.h). Each semaphore wait that blocked is a flow ("s" on
// the slice that signalled, "f" on the slice it released; dependencies.h), and two counter
// tracks per run give the DMA bandwidth (GB/s) and the transfers moving data, averaged over up
// to 1,000 stretches of the run. Times are microseconds (the format's unit); the exact
// picosecond total is kept in "otherData". Events are streamed one by one, so memory does not
// grow with the number of records beyond the run's dependencies.
#pragma once

#include <ostream>
#include <span>
#include <string>

#include "trn/base/status.h"
#include "trn/core/timeline.h"
#include "trn/isa/program.h"

namespace trn::profile {

/// Track (tid) of DMA queue `queue`: kDmaQueueTrackBase + queue, after the engines' tracks.
inline constexpr int kDmaQueueTrackBase = 100;

/// Writes the trace of `stats` (a run of `program`) to `out`. Errors, reported before anything
/// is written: invalidArgument when a record does not belong to `program` (an engine stream
/// index out of range, a transfer naming a record that does not exist) and failedPrecondition
/// when instructions ran but no records were kept (CoreOptions::record was off); ioError when
/// the stream fails.
Status writeTrace(std::ostream& out, const isa::Program& program, const core::RunStats& stats);

/// Writes the trace to the file `path` (replacing it). The same errors as writeTrace, plus an
/// ioError naming `path` when the file cannot be opened or written.
Status writeTraceFile(const std::string& path, const isa::Program& program,
                      const core::RunStats& stats);

/// One run of a sequence (e.g. one kernel of a model layer) for writeSequenceTrace, or one core
/// of a run. Consecutive segments of the same `step` (>= 0) are the cores of one run: they start
/// together.
struct TraceSegment {
  std::string name;
  const isa::Program* program = nullptr;
  const core::RunStats* stats = nullptr;
  int step = -1;
};

/// Writes several runs as one trace, laid end to end: run i is process i, named by its segment,
/// and starts when the previous run ended (each run's total; the longest core's for the cores
/// of one step). "otherData" holds the total and each
/// run's mode, total and instruction count. The same errors as writeTrace, naming the segment.
Status writeSequenceTrace(std::ostream& out, std::span<const TraceSegment> segments);

/// writeSequenceTrace to the file `path`, with writeTraceFile's file errors.
Status writeSequenceTraceFile(const std::string& path, std::span<const TraceSegment> segments);

/// Writes the cores of one chip run as one trace file: core i is process i, named by its
/// segment ("core 1"), each with its engine and DMA queue tracks, all from time 0 (one
/// timeline). A run of one core is written as writeTraceFile writes it. "otherData" holds the longest total and each core's figures. The same errors as
/// writeTraceFile, naming the segment.
Status writeCoresTraceFile(const std::string& path, std::span<const TraceSegment> cores);

}  // namespace trn::profile
