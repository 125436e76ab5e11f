// Element-wise reference kernels (NKI tutorial "tensor add"): tiles of up to 128 rows and 8192
// columns, the last ones ragged, double-buffered by the backend so loads overlap the vector
// engine.
#pragma once

#include "trn/kernel/kernel.h"

namespace trn::kernels {

/// out = a + b for 2-D HBM tensors of one shape and dtype.
kernel::Tensor tensorAdd(kernel::Kernel& k, kernel::Tensor a, kernel::Tensor b);

}  // namespace trn::kernels
