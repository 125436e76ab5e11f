// Free-dimension transpose reference kernel (NKI transpose2d tutorial): each partition (row) of
// x holds a row-major F1 x F2 matrix, and the kernel writes its F2 x F1 transpose, moving the data
// within each partition with one SBUF-to-SBUF copy whose source access pattern walks the matrix
// column by column. Nothing crosses partitions, so no tensor-engine transpose is involved.
#pragma once

#include <span>
#include <vector>

#include "trn/kernel/kernel.h"
#include "trn/kernels/reference.h"

namespace trn::kernels {

/// out[p, j, i] = x[p, i, j] for x [P, F1, F2] of any dtype; bit-exact. Rows are tiled by 128 (the
/// last tile ragged); when one row's matrix exceeds 32 KiB it is cut into blocks of F1 x F2
/// (each block still moves by one copy).
kernel::Tensor transpose2d(kernel::Kernel& k, kernel::Tensor x);

/// float64 reference.
std::vector<HostTensor> transpose2dReference(std::span<const HostTensor> inputs);

}  // namespace trn::kernels
