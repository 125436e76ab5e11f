// Internal to the scheduler (simulation.cpp): the parts of a sendrecv exchange between the two
// cores of a pair that do not depend on the scheduler's state (docs/chip.md, "Exchanging tiles"):
// whether the two instructions' tiles match, how long the tiles take to cross, and the copy.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "sequencer_state.h"
#include "trn/base/status.h"
#include "trn/core/dma_model.h"
#include "trn/core/neuron_core.h"
#include "trn/isa/instruction_set.h"

namespace trn::core {

/// One side of an exchange: the core, the engine at the sendrecv and its sequencer, the
/// instruction.
struct ExchangeEnd {
  NeuronCore* core = nullptr;
  isa::Engine engine = isa::Engine::kPool;
  SequencerState* seq = nullptr;
  const isa::SendRecv* instr = nullptr;
};

/// An error when a side's src does not hold as many elements of one dtype as the other's dst.
Status checkExchangeTiles(const isa::SendRecv& first, const isa::SendRecv& second);

/// The time in ps for both tiles to cross at once, each as a DMA transfer of its shape alone on
/// a core's idle engines.
std::int64_t exchangeCrossingTime(const isa::SendRecv& first, const isa::SendRecv& second,
                                  const spec::ChipSpec& chip, const DmaModel& dma);

/// Copies each side's src to the other side's dst (both read before either is written); an error
/// carries `describe(i)` of the side i it happened on.
Status swapTiles(const std::array<ExchangeEnd, 2>& ends,
                 const std::function<std::string(std::size_t)>& describe);

}  // namespace trn::core
