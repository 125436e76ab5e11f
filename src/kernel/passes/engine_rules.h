// Engine assignment rules (nki-reference §4): which engine issues an instruction the author did
// not pin. Matmul and transpose go to the tensor engine, element-wise, tensor-scalar and
// reduction work to the vector engine, activations to the scalar engine, iota and masks to
// GpSimd, and DMA triggers provisionally to the sync engine (the DMA placement pass moves them).
// Guarantee: the first candidate the instruction's verifier accepts is the one used, so an
// assigned engine is always a legal one.
#pragma once

#include <array>
#include <span>

#include "trn/isa/instruction_set.h"

namespace trn::kernel {

/// Engines in order of preference (a fixed array: no allocation per traced instruction).
struct EngineCandidates {
  std::array<isa::Engine, isa::kNumEngines> order{};
  std::size_t count = 0;
  [[nodiscard]] std::span<const isa::Engine> engines() const {
    return std::span(order).first(count);
  }
};

/// The engines allowed to issue `body`, most preferred first.
EngineCandidates engineCandidates(const isa::InstructionBody& body);

}  // namespace trn::kernel
