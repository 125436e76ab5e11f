// Projection kernels of a Llama decoder layer: out[S, N] = x[S, K] @ w[K, N] for token-major
// activations x (tokens on rows, as the layer keeps them in HBM) and a weight w[K, N], optionally
// plus a residual r[S, N] added while PSUM is drained (the attention output projection with its
// residual connection), or a bias b[N] and an activation, or a multiplier m[S, N], applied there
// (the graph compiler's fused trn.Linear: nn.Linear and its activation, a SwiGLU MLP's gate).
//
// Layout on chip: the tensor engine contracts over partitions, so each block of up to 512 tokens
// of x is loaded row-wise and transposed on the tensor engine (128 x 128 blocks into PSUM, copied
// back by the vector and scalar engines) into xT[K, tokens]; those tiles are the stationary
// operands, and 512-column tiles of w, loaded a few K tiles per DMA, are the moving ones. Each
// output tile [128 tokens, 512] accumulates over K in fp32 PSUM; the four token tiles of a block
// accumulate side by side so every weight tile loaded serves the whole block, and the
// accumulators rotate over six PSUM banks so the next column tile starts while the previous one
// is drained. Weights are triggered by the tensor engine on its own DMA queue and x by GpSimd on
// another, so each arrives in the order it is used. The result has x's dtype. Any S, K, N work
// (the last tiles are clipped); x, w and r share one dtype, bf16 or fp32.
//
// Why the tensor engine transposes x rather than a DMA transpose: per 128 x 128 block it costs
// 128 PE cycles against the N cycles of that block's matmuls (5 % at N = 2560, 6 % at 2048), and
// the copy back to SBUF runs on otherwise idle engines. A DMA transpose reads 256-byte rows (one
// descriptor per 128 elements) at 90 % efficiency: about 2.1x the DMA time of a plain load, which
// at the output projection's shape (DMA ~50 us busy for ~55 us of matmuls) would make the DMA
// engines the bound, and it delays the first matmuls, which wait for the transposed x.
//
// SPMD: under a launch grid each program instance computes a block of output columns (128 at a
// time), so it streams only its columns of w (and all of x): the split that keeps each
// instance's weight traffic lowest.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "trn/isa/enums.h"
#include "trn/kernel/kernel.h"
#include "trn/kernels/reference.h"

namespace trn::kernels {

/// out = x @ w, x [S, K], w [K, N], out [S, N] in x's dtype.
kernel::Tensor linear(kernel::Kernel& k, kernel::Tensor x, kernel::Tensor w);

/// out = x @ w + r, r [S, N]; the addition is fused into the PSUM evacuation (one rounding).
kernel::Tensor linearResidual(kernel::Kernel& k, kernel::Tensor x, kernel::Tensor w,
                              kernel::Tensor r);

/// What a projection applies to its fp32 product as PSUM is drained: a bias added to every row
/// (a broadcast row add on the vector engine), then an activation on the scalar engine, the
/// result rounded once to x's dtype.
struct LinearEpilogue {
  std::optional<kernel::Tensor> bias;  ///< b [N] in x's dtype, or none
  std::optional<isa::ActivationFunction> activation;
  /// m [S, N] in x's dtype, multiplied into the fp32 sum as PSUM drains (a SwiGLU MLP's gate
  /// times its up projection), or none; not with a bias or an activation.
  std::optional<kernel::Tensor> multiplier;
};

/// out = act(x @ w + b), or m * (x @ w), with the epilogue's parts (any may be absent).
kernel::Tensor linearEpilogue(kernel::Kernel& k, kernel::Tensor x, kernel::Tensor w,
                              const LinearEpilogue& epilogue);

/// float64 references: {x @ w} and {x @ w + r} from inputs (x, w) and (x, w, r).
std::vector<HostTensor> linearReference(std::span<const HostTensor> inputs);
std::vector<HostTensor> linearResidualReference(std::span<const HostTensor> inputs);

}  // namespace trn::kernels
