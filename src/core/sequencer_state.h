// Internal: the architectural state of one sequencer of a running core (registers, accumulators,
// random-number generator) that instructions read and write through the execution context.
#pragma once

#include <cstdint>
#include <vector>

namespace trn::core {

struct SequencerState {
  std::vector<float> accumulators;
  std::vector<std::int32_t> registers;
  std::uint64_t executed = 0;  ///< instructions executed so far (stochastic-rounding stream)
  std::uint64_t rngSeed = 0;
  std::uint64_t rngPosition = 0;
};

}  // namespace trn::core
