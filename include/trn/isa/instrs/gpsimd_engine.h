// GpSimd engine (POOL) instructions: index generation, masks, gathers and cross-partition
// reductions (nki-reference §3, hardware-trn2.md §7).
#pragma once

#include <tuple>

#include "trn/base/status.h"
#include "trn/isa/exec_context.h"
#include "trn/isa/field.h"
#include "trn/isa/instruction.h"
#include "trn/isa/type_list.h"

namespace trn::isa {

/// The instructions declared in this header, in opcode order.
using GpSimdEngineInstructions = TypeList<>;

}  // namespace trn::isa
