// Rotary position embedding reference kernel (Llama / Hugging Face "rotate_half" convention).
//
// Layout: x [H, S, D] is viewed as rows of T tokens of one head (T*D contiguous elements, T the
// largest divisor of S with T*D <= 512), and those rows go on the partitions: a 128-partition
// tile holds 128/(S/T) whole heads (or 128 row blocks of one head when a head has more than 128
// of them), so every DMA moves long contiguous runs. The cos/sin rows of each partition's tokens
// are loaded once per tile layout and kept, duplicated over the two halves and with the sign of
// rotate_half folded into sin, in PSUM: a vector-engine tensor_tensor with one PSUM operand
// streams at one element per cycle, so out = x * [c, c] + rotate(x) * [-s, s] costs three
// single-rate passes with fp32 products and one rounding to x's dtype. Some tiles go to GpSimd
// (from SBUF copies of the tables) so both engines share the element-wise work. Under an SPMD
// grid each program instance takes a contiguous block of those tiles, with the tables they need.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "trn/kernel/kernel.h"
#include "trn/kernels/reference.h"

namespace trn::kernels {

/// out[h, s, :D/2] = x1 * cos[s] - x2 * sin[s] and out[h, s, D/2:] = x2 * cos[s] + x1 * sin[s]
/// with x1 = x[h, s, :D/2], x2 = x[h, s, D/2:]; x [H, S, D] (D even, at most 512), cos and sin
/// [S, D/2]; out in x's dtype.
kernel::Tensor rope(kernel::Kernel& k, kernel::Tensor x, kernel::Tensor cos, kernel::Tensor sin);

/// The same with cos and sin [S, D] as a model computes them (Hugging Face's cat(freqs, freqs)):
/// out = x * cos + rotate_half(x) * sin, each half of a token reading its own half of the tables
/// (the graph compiler's fused trn.Rope, whose tables are graph inputs).
kernel::Tensor ropeFullTables(kernel::Kernel& k, kernel::Tensor x, kernel::Tensor cos,
                              kernel::Tensor sin);

/// float64 reference of (x, cos, sin).
std::vector<HostTensor> ropeReference(std::span<const HostTensor> inputs);

/// Inputs for rope at `specs` (x, cos, sin): x uniform in [-1, 1); cos and sin the genuine
/// cos(s * theta_i) and sin(s * theta_i) with theta_i = 10000^(-2i/D), all rounded to their
/// dtypes.
std::vector<HostTensor> ropeInputs(std::span<const kernel::TensorSpec> specs, std::uint64_t seed);

}  // namespace trn::kernels
