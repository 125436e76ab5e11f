// The fused Llama MLP with its residual connection:
//   out[S, H] = (silu(x @ wg) * (x @ wu)) @ wd + r,   silu(z) = z / (1 + exp(-z)),
// x [S, H] token-major, wg and wu [H, F], wd [F, H], r [S, H]; F is the intermediate size.
//
// Per block of up to 512 tokens the intermediate h = silu(g) * u never leaves the chip: x is
// transposed on the tensor engine into xT[H, tokens]; the gate and up projections are computed
// transposed, gT[F chunk, tokens] = wg[H, F chunk]^T @ xT (weights stationary, xT moving, fp32
// PSUM), so F lands on partitions; the scalar engine applies silu to gT and the vector engine
// multiplies by uT into hT[F, tokens] in SBUF, in x's dtype. F on partitions is exactly the
// contraction the down projection needs, so hT tiles are its stationary operands with no
// transpose, wd tiles its moving ones, and out[tokens, 512 columns] accumulates over F in PSUM;
// the residual is added while PSUM is drained. Weights stream through SBUF once per token block
// in groups of four K tiles per DMA, in use order on the tensor engine's DMA queue, gate and up
// interleaved; the first gate blocks are narrow (128, 256 columns, then 512) because a gate chunk
// waits for its whole block. Any S, H, F work; all inputs share one dtype, bf16 or fp32, and the
// result has it.
//
// SBUF: a token block holds xT and hT ((H + F) / 128 tiles of 512 tokens; 60 KiB per partition in
// bf16 at H = 2048, F = 5632) next to x's rows (16 KiB) and the weight ring (a gate block and one
// ahead, 64 KiB); the demo shape peaks at 164 KiB of the 224 KiB per partition (also under the
// 192 KiB of a 24 MiB SBUF). Blocks are 512 tokens (the moving free size), fewer when xT and hT
// would exceed 64 KiB (e.g. 256 in fp32).
//
// SPMD: under a launch grid each program instance takes a block of whole 128-token tiles and
// streams all three weights for them; splitting F or the output columns instead would need a
// sum across instances or recompute the gate and up products in each (mlp.cpp says why).
#pragma once

#include <span>
#include <vector>

#include "trn/kernel/kernel.h"
#include "trn/kernels/reference.h"

namespace trn::kernels {

/// out = (silu(x @ wg) * (x @ wu)) @ wd + r.
kernel::Tensor swigluMlp(kernel::Kernel& k, kernel::Tensor x, kernel::Tensor wg, kernel::Tensor wu,
                         kernel::Tensor wd, kernel::Tensor r);

/// The float64 reference from inputs (x, wg, wu, wd, r), with no intermediate rounding.
std::vector<HostTensor> swigluMlpReference(std::span<const HostTensor> inputs);

}  // namespace trn::kernels
