// Pass: DMA placement. Chooses the sequencer that triggers each DMA transfer and the queue it
// runs on, for transfers whose issuer the author did not pin.
//
// Guarantees:
// - A transfer that reads an on-chip tile (a store, or SBUF to SBUF) is triggered by the engine
//   that last wrote that tile, right behind the write in its stream, so it needs no semaphore
//   for that write and never holds back the loads behind it.
// - Every other transfer (loads from HBM) is triggered by the sync engine, whose stream does
//   nothing else, so prefetches wait only for the space they fill.
// - Every queue is fed by one issuing engine only (the sync engine gets half of the queues, the
//   compute engines share the rest), dealt round-robin, so independent transfers run in parallel
//   on the DMA engines. Loads into the tiles of one declaration site (one ring) share one queue,
//   the next in turn when the site's first load is placed: a ring's tiles are used in the order
//   they are loaded, so its loads run one after another in that order and each arrives as early
//   as the bandwidth allows, instead of all of a ring's loads in flight sharing the engines and
//   arriving together (the engines serve their queues round-robin). A queue is FIFO in the order
//   its transfers are triggered; with one issuer that is trace order, which the synchronisation
//   pass relies on (two issuers could trigger in either order at run time, and a queue's semaphore
//   count would no longer name a transfer).
#pragma once

#include "passes/dependencies.h"
#include "trn/kernel/kernel_ir.h"

namespace trn::kernel {

void placeDmas(KernelIR& ir, const Dependencies& deps, int queues);

/// The queues [first, first + count) that transfers triggered by `issuer` use.
struct QueueRange {
  int first = 0;
  int count = 1;
};
QueueRange issuerQueues(isa::Engine issuer, int queues);

/// The queue of a DMA instruction, or -1 for other instructions.
int dmaQueue(const isa::InstructionBody& body);

}  // namespace trn::kernel
