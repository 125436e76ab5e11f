// The kernel IR as text, for `--dump-after=PASS` and tests: the buffers (with their placement
// once allocated) and one line per instruction with its engine, operands, semaphores and the
// kernel source line.
#pragma once

#include <string>

#include "trn/kernel/kernel_ir.h"

namespace trn::kernel {

std::string printIR(const KernelIR& ir);

}  // namespace trn::kernel
