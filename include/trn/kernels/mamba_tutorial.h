// The three versions of the NKI fused_mamba tutorial's selective scan (nki-samples
// tutorials/fused_mamba, mamba_v1..v3), ported line for line so that their simulated times can
// be set beside the device times the tutorial measures: the same loop orders, tile sizes,
// instruction choices and loads. Inputs as the tutorial takes them: delta, u [batch, channels,
// seq_len], A [channels, state_size], B, C [batch, state_size, seq_len]; the output has delta's
// dtype. For channel c, state n and step t,
//   h[c, n, t] = exp(delta[c, t] * A[c, n]) * h[c, n, t-1] + delta[c, t] * B[n, t] * u[c, t],
//   y[c, t]    = sum_n C[n, t] * h[c, n, t],          h[c, n, -1] = 0.
// - v1: batch, then state, then 128-channel tile loops; delta and u are loaded again for every
//   state, and the per-channel-tile sums of all channel tiles stay in SBUF across the states.
// - v2: the channel-tile loop moves outside the state loop, so delta and u are loaded once per
//   channel tile and one sum tile is live.
// - v3: v2 with the sequence cut into 512-step tiles, the scan's state carried from tile to tile.
// Like the tutorial, v1 and v2 need channels a multiple of 128 and v3 also seq_len a multiple of
// 512. `B_i.broadcast_to` is one tensor-engine instruction per 512 columns whose PSUM result the
// vector engine's tensor_tensor reads (nl::broadcastPartitionsInPsum, in pieces of 2048 columns
// so B's and C's fit in PSUM together), as the tutorial's steps 3 and 5 list "p-dim broadcast +
// tensor_tensor"; v3 writes scanC to PSUM as the tutorial declares it. The element-wise
// instructions take the engine the backend's rules pick, as the tutorial leaves it to the
// compiler. selective_scan (selective_scan.h) is our own design of the
// same operation.
#pragma once

#include <span>
#include <vector>

#include "trn/kernel/kernel.h"
#include "trn/kernels/reference.h"

namespace trn::kernels {

kernel::Tensor mambaV1(kernel::Kernel& k, kernel::Tensor delta, kernel::Tensor u, kernel::Tensor a,
                       kernel::Tensor b, kernel::Tensor c);
kernel::Tensor mambaV2(kernel::Kernel& k, kernel::Tensor delta, kernel::Tensor u, kernel::Tensor a,
                       kernel::Tensor b, kernel::Tensor c);
kernel::Tensor mambaV3(kernel::Kernel& k, kernel::Tensor delta, kernel::Tensor u, kernel::Tensor a,
                       kernel::Tensor b, kernel::Tensor c);

/// The scan of every batch from its definition in float64 (inputs in the kernels' order).
std::vector<HostTensor> mambaReference(std::span<const HostTensor> inputs);

}  // namespace trn::kernels
