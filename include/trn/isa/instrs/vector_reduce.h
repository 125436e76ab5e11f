// Vector engine (DVE) reductions, scans and selections that use the per-partition
// accumulator registers (nki-reference §3).
#pragma once

#include <tuple>

#include "trn/base/status.h"
#include "trn/isa/exec_context.h"
#include "trn/isa/field.h"
#include "trn/isa/instruction.h"
#include "trn/isa/type_list.h"

namespace trn::isa {

/// The instructions declared in this header, in opcode order.
using VectorReduceInstructions = TypeList<>;

}  // namespace trn::isa
