// Flash-attention forward (NKI flash_fwd, nki-reference §7.1, and the attention_fwd_performance
// ladder) in the tile language: o = softmax(scale q k^T + bias (+ causal mask)) v per query head,
// computed with the online softmax so the [S, S] score matrix never exists. Grouped-query
// attention: query head h reads key/value head h / (Hq / Hkv). The scale is 1/sqrt(D) unless
// given; the optional additive bias [S, S] (an attention mask of 0 and -inf, or any additive
// term) is shared by every head.
//
// Layouts (HBM, row-major): q [Hq, S, D], k and v [Hkv, S, D], o [Hq, S, D] in q's dtype; D from
// 1 to 128 (64 and 128 are the fast cases), S at most 8192 and any length (a ragged last tile of
// fewer than 128 queries or keys is fine); bf16 or fp32 inputs, one dtype for all three; the bias
// bf16 or fp32.
//
// Per 128-query tile, the keys are streamed in blocks of up to kAttentionBlockKeys: q k^T on the
// tensor engine (q^T and k^T loaded with DMA transposes so D is on the partitions, 512 keys per
// matmul), the row max on the vector engine straight from PSUM, exp(scale * s - scale * max) on
// the scalar engine into the input dtype, P transposed on the tensor engine (keys onto the
// partitions) and P @ [v | 1] accumulated in PSUM: the ones column appended to v gives the row
// sums of the same rounded P. The fp32 accumulator is rescaled by exp(old max - new max) once per
// block and divided by the sum only at the end (delayed division). Causal: key blocks above the
// diagonal are never computed and the one 512-key chunk that holds the diagonal is masked with
// range_select (which also yields its max). With a bias, each chunk's bias tile is loaded a few
// items ahead and scale * s + bias is formed on the vector engine from PSUM into SBUF (one more
// pass over the chunk), the max taken from it and the exp applied to it unscaled; the running
// max is kept finite, so a key block in which a row sees only -inf contributes nothing. The work
// items (query tile, key block) run as a software pipeline skewed over several items, across tiles
// and heads, so every engine's in-order stream has independent work; the P^T copies out of PSUM go
// to the scalar or the vector engine by estimated load. Keys and values are loaded 512 at a time as
// the items reach them and stay in SBUF for their kv head; the output of a 512-query group leaves
// in one DMA.
//
// What bounds it (trn2 model): per 512 keys the vector engine's max pass over fp32 PSUM (533 ns)
// and the scalar engine's exp (427 ns), plus a P^T copy (267 ns vector or 427 ns scalar), against
// 640 ns of tensor engine work at D = 128; the scalar and vector engines are the busiest.
//
// SPMD: under a launch grid each program instance takes a contiguous block of query heads (so
// the query heads of a kv head stay together and an instance loads only the kv heads it reads).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "trn/kernel/compiler.h"
#include "trn/kernel/kernel.h"
#include "trn/kernels/reference.h"

namespace trn::kernels {

struct AttentionOptions {
  /// Query i attends to keys 0..i only (the Llama prefill case).
  bool causal = true;
};

/// What the scores are besides q k^T (the graph compiler's fused attention sets them from the
/// model: its scale constant, its additive mask).
struct AttentionScores {
  /// The factor of q k^T inside the softmax; empty: 1 / sqrt(D).
  std::optional<float> scale;
  /// An additive [S, S] term on the scaled scores, the same for every head (bf16 or fp32).
  std::optional<kernel::Tensor> bias;
};

/// Keys per online-softmax step (one running-max update and accumulator rescale).
inline constexpr std::int64_t kAttentionBlockKeys = 1024;

/// o[Hq, S, D] = softmax(scale q k^T (+ bias) (+ causal mask)) v, see above.
kernel::Tensor flashAttention(kernel::Kernel& k, kernel::Tensor q, kernel::Tensor key,
                              kernel::Tensor value, AttentionOptions options = {},
                              const AttentionScores& scores = {});

/// The float64 reference from the definition: per query head, logits = scale q k^T (+ bias) over
/// the allowed keys, softmax, times v. Inputs q, k, v as above, then optionally the bias [S, S];
/// the scale is 1/sqrt(D) unless given.
std::vector<HostTensor> attentionReference(std::span<const HostTensor> inputs, bool causal,
                                           std::optional<double> scale = std::nullopt);

/// Useful FLOPs: 2 per multiply-accumulate of q k^T and of P v over the unmasked (query, key)
/// pairs only: 4 * Hq * D * S * S without a mask, 4 * Hq * D * S (S + 1) / 2 with the causal one
/// (the skipped and masked halves of the diagonal tiles are not counted).
double attentionFlops(std::span<const kernel::TensorSpec> inputs, bool causal);

}  // namespace trn::kernels
