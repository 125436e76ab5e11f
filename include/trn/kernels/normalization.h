// Row normalisation reference kernels: layer norm (our two designs and the NKI layernorm
// tutorial's two versions ported line for line) and RMS norm (Llama). Rows (tokens) lie on the partitions in tiles of up to 128 rows, the last one
// ragged; the normalised dimension D is the free dimension of each tile. The 1-D parameters are
// loaded once and repeated onto every partition by the tensor engine. Statistics are kept in fp32
// whatever the input dtype; the output has the input's dtype. Under an SPMD grid each program
// instance normalises a contiguous block of whole row tiles (docs/kernels.md, "SPMD splits").
#pragma once

#include <optional>

#include <span>
#include <vector>

#include "trn/kernel/kernel.h"
#include "trn/kernels/reference.h"

namespace trn::kernels {

/// eps of the layer norms (PyTorch's default) and of the RMS norm (Llama's).
inline constexpr float kLayerNormEps = 1e-5f;
inline constexpr float kRmsNormEps = 1e-6f;

/// out = (x - mean) / sqrt(var + eps) * gamma + beta along D for x [N, D], gamma [D], beta [D],
/// written with nl-level functions (the tutorial's v1): nl.mean, nl.var (two-pass), nl.rsqrt and
/// element-wise nl arithmetic; gamma and beta are broadcast to the partitions with nl's
/// ones-vector matmul.
kernel::Tensor layerNorm(kernel::Kernel& k, kernel::Tensor x, kernel::Tensor gamma,
                         kernel::Tensor beta);

/// The same layer norm in the tutorial's v2 style: bn_stats over chunks of at most 512 columns
/// and bn_aggr give mean and variance (vector engine), rsqrt and one two-stage tensor_scalar
/// (x - mean) * rstd on the scalar engine, then gamma and beta on the vector engine and GpSimd,
/// which split the columns so that the three engines carry about equal work.
kernel::Tensor layerNormBn(kernel::Kernel& k, kernel::Tensor x, kernel::Tensor gamma,
                           kernel::Tensor beta);

/// The bn_stats layer norm with another eps and an optional beta (the graph compiler's
/// LayerNormalization: the model's own; without beta, out = normed * gamma).
kernel::Tensor layerNormBnEps(kernel::Kernel& k, kernel::Tensor x, kernel::Tensor gamma,
                              std::optional<kernel::Tensor> beta, float eps);

/// The layernorm tutorial's two kernels (nki-samples tutorials/layernorm,
/// nki_layernorm_kernel_v1/v2) ported line for line, so that the device times it publishes can
/// be set beside them (docs/fidelity.md); layerNorm and layerNormBn above are our own designs.
/// Both load gamma and beta once and broadcast them to 128 partitions (nl::broadcastPartitions),
/// then per 128-row tile: v1 computes the mean with nl.mean, the variance as
/// mean(x^2) - mean^2, (x - mean) * rsqrt(var + eps) and * gamma + beta with nl arithmetic; v2
/// takes mean and variance from bn_stats (per 512 columns) and bn_aggr, and (x - mean) * rstd as
/// one two-stage tensor_scalar. Engines are the backend's choice where the tutorial leaves them
/// to the compiler. No SPMD split (the tutorial has none).
kernel::Tensor layerNormTutorialV1(kernel::Kernel& k, kernel::Tensor x, kernel::Tensor gamma,
                                   kernel::Tensor beta);
kernel::Tensor layerNormTutorialV2(kernel::Kernel& k, kernel::Tensor x, kernel::Tensor gamma,
                                   kernel::Tensor beta);

/// out = x / sqrt(mean(x^2) + 1e-6) * w along D for x [N, D] and w [D], in x's dtype. The scalar
/// engine squares and sums each row in fp32 and takes rsqrt; then the vector engine and GpSimd,
/// each on its share of the columns, scale by it with a rounding to x's dtype (as Hugging Face's
/// Llama RMSNorm rounds before the weight) and multiply by w. Loads run two tiles ahead, and per
/// 128-row tile every engine needs less time than the tile's DMA, so the kernel is bound by its
/// DMA traffic.
kernel::Tensor rmsNorm(kernel::Kernel& k, kernel::Tensor x, kernel::Tensor w);

/// The RMS norm with another eps (the graph compiler's fused trn.RmsNorm: the model's own).
kernel::Tensor rmsNormEps(kernel::Kernel& k, kernel::Tensor x, kernel::Tensor w, float eps);

/// float64 references: layer norm of (x, gamma, beta) and RMS norm of (x, w).
std::vector<HostTensor> layerNormReference(std::span<const HostTensor> inputs);
std::vector<HostTensor> rmsNormReference(std::span<const HostTensor> inputs);

}  // namespace trn::kernels
