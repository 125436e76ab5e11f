// Row softmax reference kernel (NKI softmax tutorial): tokens on the partitions in tiles of up to
// 128 rows (the last ragged), the softmax dimension along the free dimension. Under an SPMD grid
// each program instance takes a contiguous block of whole row tiles.
#pragma once

#include <span>
#include <vector>

#include "trn/kernel/kernel.h"
#include "trn/kernels/reference.h"

namespace trn::kernels {

/// out[i, :] = exp(x[i, :] - max) / sum(exp(x[i, :] - max)) for x [N, D] (fp32, bf16 or fp16),
/// out in x's dtype. The vector engine takes the negated row max and the reciprocal of the sum,
/// the scalar engine computes exp(x - max) into fp32 with the row sum fused, and GpSimd scales by
/// the reciprocal while rounding to the output dtype: three engines with about equal work per
/// tile, each less than the tile's DMA time.
kernel::Tensor softmax(kernel::Kernel& k, kernel::Tensor x);

/// float64 reference.
std::vector<HostTensor> softmaxReference(std::span<const HostTensor> inputs);

}  // namespace trn::kernels
