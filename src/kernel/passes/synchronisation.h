// Pass: synchronisation. Turns the dependencies between instructions on different engines and
// DMA queues into semaphore waits and updates, kept in KernelIR::semaphores.
//
// Scheme: every agent (the five engine streams, then the DMA queues) owns semaphore number
// <agent>. An instruction that some other agent waits for increments its agent's semaphore when
// it completes (a DMA when its transfer completes); a consumer waits until that semaphore
// reaches the producer's rank among its agent's signalling instructions. Engines and queues
// complete in order, so the wait also covers everything earlier on that agent.
//
// Guarantees:
// - Every dependency is enforced: by program order on the same engine or queue, by a wait, or
//   transitively through what an awaited instruction itself waited for (vector clocks).
// - No more waits than needed: a wait is added only when neither program order nor another of
//   the instruction's waits already implies it, and at most one wait per agent.
// - Only instructions that something waits for update a semaphore.
// - Dynamic loops: a body instruction updates its semaphore in every iteration, so a wait for it
//   counts all iterations and is satisfied only after the last; waits inside a body for
//   instructions before the loop stay satisfied in every iteration (semaphores only grow).
#pragma once

#include "passes/dependencies.h"
#include "trn/base/status.h"
#include "trn/isa/core_limits.h"
#include "trn/kernel/kernel_ir.h"

namespace trn::kernel {

struct SyncSummary {
  std::int64_t waits = 0;
  std::int64_t dependencies = 0;  ///< cross-agent dependencies before reduction
};

Result<SyncSummary> synchronise(KernelIR& ir, const Dependencies& deps,
                                const isa::CoreLimits& limits);

}  // namespace trn::kernel
