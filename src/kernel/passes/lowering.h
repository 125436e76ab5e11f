// Pass: lowering. Turns allocated, synchronised kernel IR into a Program: HBM buffers become the
// program's tensors (inputs in argument order, then outputs in return order, then scratch),
// on-chip operands lose their buffer index, and each instruction joins its engine's stream in
// trace order, keeping its source location. A dynamic loop becomes reg_set / body / reg_add /
// branch_nz on its engine, counted down in sequencer register 0.
//
// HBM operands are renumbered in place, so that no instruction is copied before it is packed:
// afterwards the IR's buffers and op count still hold, but its HBM operands name program tensors.
//
// Guarantees: the Program passes isa::verifyProgram (checked here when `verify`, as in debug
// builds; every program is verified again before it runs, by core::NeuronCore::create, so release
// builds do not verify each instruction a second time here); tensor names are unique.
#pragma once

#include "trn/base/status.h"
#include "trn/isa/core_limits.h"
#include "trn/isa/program.h"
#include "trn/kernel/kernel_ir.h"

namespace trn::kernel {

Result<isa::Program> lowerToProgram(KernelIR& ir, const isa::CoreLimits& limits, bool verify);

}  // namespace trn::kernel
