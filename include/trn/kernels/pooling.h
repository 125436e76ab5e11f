// 2-D average pooling reference kernel (NKI average_pool2d tutorial): channels on the partitions
// in tiles of 128 (the last ragged), each channel's H x W image along the free dimension. A 4-D
// free access pattern presents every pool window as the two innermost dimensions, so one vector
// engine reduce sums all windows of a tile at once.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "trn/kernel/kernel.h"
#include "trn/kernels/reference.h"

namespace trn::kernels {

/// out[c, i, j] = mean of x[c, pool*i .. pool*i + pool - 1, pool*j .. pool*j + pool - 1] for
/// x [C, H, W] (fp32, bf16 or fp16) with H and W multiples of `pool`; out [C, H/pool, W/pool]
/// in x's dtype. Window sums are fp32 and divided by pool^2 with one correctly rounded division.
/// Images larger than 32 KiB per channel are processed in bands of output rows.
kernel::Tensor avgPool2d(kernel::Kernel& k, kernel::Tensor x, std::int64_t pool);

/// float64 reference of avgPool2d with `pool`.
std::vector<HostTensor> avgPool2dReference(std::span<const HostTensor> inputs, std::int64_t pool);

}  // namespace trn::kernels
