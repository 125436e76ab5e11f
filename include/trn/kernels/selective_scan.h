// The Mamba v1 selective scan (after the NKI fused_mamba tutorial, mamba_v1..v3): for channel c,
// state n and step t,
//   h[c, n, t] = exp(delta[c, t] * A[c, n]) * h[c, n, t-1] + delta[c, t] * B[n, t] * u[c, t],
//   y[c, t]    = sum_n C[n, t] * h[c, n, t],          h[c, n, -1] = 0,
// with delta, u [C, L], A [C, N], B, C [N, L] (shared by the channels; batch 1) and y [C, L],
// fp32 throughout (inputs may be fp32 or bf16, widened on load). Channels go on the partitions
// in tiles of up to 128; the recurrence runs along the free dimension in the vector engine's
// tensor_tensor_scan; exp on the scalar engine with A's column as the per-partition scale;
// B and C broadcast to the partitions by DMA. The sequence is tiled (v3) and each channel
// tile's state carries from one sequence tile into the next.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "trn/kernel/kernel.h"
#include "trn/kernels/reference.h"

namespace trn::kernels {

/// Sequence steps per tile (the tutorial's seq_len tile); shorter when N is large, so the
/// per-state tiles fit SBUF.
inline constexpr std::int64_t kSelectiveScanSeqTile = 256;

/// y [C, L] fp32 = the selective scan of delta, u [C, L], A [C, N], B, C [N, L].
kernel::Tensor selectiveScan(kernel::Kernel& k, kernel::Tensor delta, kernel::Tensor u,
                             kernel::Tensor a, kernel::Tensor b, kernel::Tensor c);

/// The selective scan from its definition in float64 (inputs in the kernel's order).
std::vector<HostTensor> selectiveScanReference(std::span<const HostTensor> inputs);

/// Inputs on which the recurrence is stable and typical of Mamba: delta uniform in
/// [0.001, 0.1] (softplus outputs), A[c, n] = -(n + 1) (S4D-real initialisation), u, B and C
/// uniform in [-1, 1), each rounded to its spec's dtype.
std::vector<HostTensor> selectiveScanInputs(std::span<const kernel::TensorSpec> specs,
                                            std::uint64_t seed);

}  // namespace trn::kernels
