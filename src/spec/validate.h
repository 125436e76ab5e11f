// Checks that span several values of a chip description (PSUM banks x bank size = partition
// size, matmul N fits a bank, HBM stacks per core, topology shapes, cost classes complete) and
// binds the key-path references of cost formulas. Errors point at the file and line of the
// offending value.
#pragma once

#include "trn/base/status.h"
#include "trn/spec/chip_spec.h"

namespace trn::spec::detail {

/// Runs every cross-field check and binds the cost formulas of a fully loaded description.
Status finalizeChip(ChipSpec& spec);

}  // namespace trn::spec::detail
