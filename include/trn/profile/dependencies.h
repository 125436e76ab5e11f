// Semaphore dependencies of a recorded NeuronCore run: for each semaphore wait of each executed
// instruction, the update that released it (the instruction or DMA transfer after whose update
// the condition held, and kept holding until the waiter started). They are the arrows of the
// HTML report, the flow events of the trace, and the edges the critical path follows.
//
// Updates are replayed in time order from every semaphore at 0: an instruction's updates apply
// when it completes (InstructionRecord::complete), a DMA instruction's when its transfer's last
// byte lands (TransferRecord::end). A wait that held before any update has no releaser.
#pragma once

#include <cstdint>
#include <vector>

#include "trn/base/status.h"
#include "trn/base/units.h"
#include "trn/core/timeline.h"
#include "trn/isa/program.h"

namespace trn::profile {

/// One semaphore hand-off: `from` signalled semaphore `semaphore` at `signalled`, which released
/// the wait of record `to`.
struct Dependency {
  std::int64_t fromRecord = -1;    ///< index into RunStats::records of the signalling instruction
  std::int64_t fromTransfer = -1;  ///< index into RunStats::transfers when a transfer signalled
  std::int64_t to = 0;             ///< index into RunStats::records of the waiting instruction
  std::int32_t semaphore = 0;
  Picoseconds signalled;  ///< when the update was applied
  /// The waiter had reached the wait before the update (InstructionRecord::ready <= signalled):
  /// it blocked on it. False when the condition already held when the engine got there.
  bool blocked = false;
};

/// The dependencies of `stats` (a run of `program`, records kept), ordered by waiting record and
/// then by the wait's position in the instruction. Errors: invalidArgument when a record names
/// an instruction `program` does not have, or a transfer a record that does not exist.
Result<std::vector<Dependency>> findDependencies(const isa::Program& program,
                                                 const core::RunStats& stats);

/// Index of each record's transfer in RunStats::transfers (its last one when it issued several),
/// -1 for records that issued none. Assumes the transfers have been validated.
std::vector<std::int64_t> transferOfRecord(const core::RunStats& stats);

}  // namespace trn::profile
