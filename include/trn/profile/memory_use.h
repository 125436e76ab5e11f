// SBUF and PSUM in use over a recorded NeuronCore run, for the counter tracks of the trace and
// the HTML report. The records carry no allocations, so use is inferred from the operands: a
// region is the box (partitions x bytes) an instruction or transfer writes. It is in use from
// the start of that write until the end of its last access before another write overlaps it
// (a write of exactly the same box, such as matmuls accumulating into one PSUM tile or a buffer
// refilled every iteration, keeps it in use). Reads of regions no write of the run made (or
// of parts an overlapping write has retired) count nothing. An instruction accesses its
// operands from its start to its end, a DMA transfer while its data moves.
#pragma once

#include <cstdint>
#include <vector>

#include "trn/base/status.h"
#include "trn/base/units.h"
#include "trn/core/timeline.h"
#include "trn/isa/program.h"

namespace trn::profile {

/// The bytes in use from `time` until the next sample's time.
struct MemoryUseSample {
  Picoseconds time;
  std::int64_t sbufBytes = 0;
  std::int64_t psumBytes = 0;
};

struct MemoryUse {
  std::vector<MemoryUseSample> samples;  ///< in time order, one per change, from 0 to 0 at the end
  std::int64_t sbufPeak = 0;
  std::int64_t psumPeak = 0;
};

/// The use of `stats` (a run of `program` with records). Errors: invalidArgument when a record
/// names an instruction `program` does not have.
Result<MemoryUse> memoryUse(const isa::Program& program, const core::RunStats& stats);

/// The largest use in each of `bins` equal stretches of [0, end): {sbuf, psum} bytes per bin.
std::vector<std::pair<std::int64_t, std::int64_t>> peakPerBin(const MemoryUse& use,
                                                              Picoseconds end, std::size_t bins);

}  // namespace trn::profile
