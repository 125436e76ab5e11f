// Vector engine (DVE) special-purpose instructions: batch-norm statistics, top-8 search
// and replace, 32-partition shuffles, and transposes (nki-reference §3).
#pragma once

#include <tuple>

#include "trn/base/status.h"
#include "trn/isa/exec_context.h"
#include "trn/isa/field.h"
#include "trn/isa/instruction.h"
#include "trn/isa/type_list.h"

namespace trn::isa {

/// The instructions declared in this header, in opcode order.
using VectorSpecialInstructions = TypeList<>;

}  // namespace trn::isa
