// Engine assignment rules (nki-reference §4): which engine issues an instruction the author did
// not pin. Matmul and transpose go to the tensor engine, element-wise, tensor-scalar and
// reduction work to the vector engine, activations to the scalar engine, iota and masks to
// GpSimd, and DMA triggers provisionally to the sync engine (the DMA placement pass moves them).
// Guarantee: the first candidate the instruction's verifier accepts is the one used, so an
// assigned engine is always a legal one.
#pragma once

#include <vector>

#include "trn/isa/instruction_set.h"

namespace trn::kernel {

/// The engines allowed to issue `body`, most preferred first.
std::vector<isa::Engine> engineCandidates(const isa::InstructionBody& body);

}  // namespace trn::kernel
