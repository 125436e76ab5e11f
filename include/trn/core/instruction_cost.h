// How many cycles of its engine's clock an instruction occupies the engine. The instruction's
// operands give a cost query (engine, dtypes, ALU ops, operand placement, strides, free sizes);
// the chip's cost class for the instruction (spec/cost_model.h) selects a variant and evaluates its
// formula. Control instructions and DMA triggers occupy the sequencer for the chip's minimum
// initiation interval. Results are cached by query, so repeated shapes cost one hash lookup.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "trn/base/status.h"
#include "trn/isa/instruction_set.h"
#include "trn/spec/chip_spec.h"

namespace trn::core {

/// The clock of `engine` in `chip`.
Hertz engineClock(const spec::ChipSpec& chip, isa::Engine engine);

struct InstructionCost {
  std::int64_t cycles = 0;       ///< in cycles of the executing engine
  std::int64_t picoseconds = 0;  ///< the cycles at the engine's clock, rounded up
  std::string_view variant;      ///< the cost-class variant that applied ("" when no class)
  std::int64_t flops = 0;        ///< 2*K*M*N for a matmul; 0 otherwise
};

class CostCalculator {
 public:
  /// Binds every instruction type to the chip's cost class named in its InstrInfo; fails when a
  /// class a compute instruction needs is missing.
  static Result<CostCalculator> create(const spec::ChipSpec& chip);

  /// Move-only: the memo of the last cost per instruction type points into the cache.
  CostCalculator(CostCalculator&&) = default;
  CostCalculator& operator=(CostCalculator&&) = default;
  CostCalculator(const CostCalculator&) = delete;
  CostCalculator& operator=(const CostCalculator&) = delete;

  /// The cost of `instr` when executed by `engine`. The cost is held by the calculator (a
  /// pointer rather than a copy: a copy returned through the stack stalls the simulator's
  /// planning loop on store forwarding); read it before the calculator is moved or destroyed.
  Result<const InstructionCost*> cost(isa::Engine engine, const isa::InstructionBody& body);

  /// The compact description of an instruction that determines its cost (public for hashing).
  struct Key {
    std::uint32_t body = 0;  ///< InstructionBody alternative
    std::uint32_t engine = 0;
    std::uint32_t dtypeMask = 0;
    std::uint32_t ops = 0;    ///< up to four ALU ops, 8 bits each (+1; 0 = none)
    std::uint32_t flags = 0;  ///< psum inputs, all-SBUF, unit stride, fill zero
    std::array<std::int64_t, 7> variables{};
    friend bool operator==(const Key&, const Key&) = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& key) const;
  };

 private:
  CostCalculator() = default;

  std::array<InstructionCost, isa::kNumEngines> dispatch_{};  ///< control and DMA triggers
  std::array<Hertz, isa::kNumEngines> clocks_{};
  std::vector<const spec::CostClass*> classes_;  ///< by InstructionBody alternative
  std::unordered_map<Key, InstructionCost, KeyHash> cache_;
  /// The last key and cost of each instruction type: streams repeat shapes, so most lookups
  /// end here without hashing.
  std::vector<std::pair<Key, const InstructionCost*>> last_;
};

}  // namespace trn::core
