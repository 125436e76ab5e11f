// The kernel-IR verifier, run after every pass in debug builds (CompileOptions::verifyEachPass).
// It checks what the passes promise each other: every operand names a buffer of its memory, every
// instruction obeys the hardware rules on its engine, allocated operands stay inside their tile's
// placement, and every semaphore wait can be satisfied by the updates of the program. A failure
// is a trnsim bug and names the pass that broke the IR.
#pragma once

#include <string_view>

#include "trn/base/status.h"
#include "trn/isa/core_limits.h"
#include "trn/kernel/kernel_ir.h"

namespace trn::kernel {

Status verifyIR(const KernelIR& ir, const isa::CoreLimits& limits, std::string_view afterPass);

}  // namespace trn::kernel
