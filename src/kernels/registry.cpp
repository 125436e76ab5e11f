#include "trn/kernels/registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <deque>
#include <mutex>

#include "trn/kernels/attention.h"
#include "trn/kernels/elementwise.h"
#include "trn/kernels/linear.h"
#include "trn/kernels/mamba_tutorial.h"
#include "trn/kernels/matmul.h"
#include "trn/kernels/matmul_fp8.h"
#include "trn/kernels/mlp.h"
#include "trn/kernels/normalization.h"
#include "trn/kernels/pooling.h"
#include "trn/kernels/rope.h"
#include "trn/kernels/selective_scan.h"
#include "trn/kernels/softmax.h"
#include "trn/kernels/transpose.h"

namespace trn::kernels {
namespace {

std::vector<HostTensor> addReference(std::span<const HostTensor> in) {
  HostTensor out = in[0];
  for (std::int64_t i = 0; i < out.size(); ++i) {
    out[i] += in[1][i];
  }
  return {out};
}

std::vector<HostTensor> matmulReference(std::span<const HostTensor> in) {
  return {matmulTransposedA(in[0], in[1])};
}

/// 2 K M N for lhsT [K, M] and rhs [K, N].
double matmulFlops(std::span<const kernel::TensorSpec> in) {
  return 2.0 * static_cast<double>(in[0].shape.at(0)) * static_cast<double>(in[0].shape.at(1)) *
         static_cast<double>(in[1].shape.at(1));
}

/// One correct rounding into the output dtype (that of the first input): rtol = unit roundoff.
Tolerance outputRounding(std::span<const kernel::TensorSpec> in) {
  return {0.0, unitRoundoff(in[0].dtype)};
}

/// (lhsT^T @ rhs) * scale[None, :] for lhsT [K, M], rhs [K, N], scale [N].
std::vector<HostTensor> matmulFp8Reference(std::span<const HostTensor> in) {
  HostTensor out = matmulTransposedA(in[0], in[1]);
  const std::int64_t n = in[1].dim(1);
  for (std::int64_t i = 0; i < out.size(); ++i) {
    out[i] *= in[2][i % n];
  }
  return {out};
}

/// fp8 operands uniform in [-1, 1) (randomInputs), scales uniform in [0.5, 2).
std::vector<HostTensor> matmulFp8Inputs(std::span<const kernel::TensorSpec> specs,
                                        std::uint64_t seed) {
  std::vector<HostTensor> inputs = randomInputs(specs, seed);
  inputs[2] = randomInput(specs[2], seed + 2, 0.5, 2.0);
  return inputs;
}

/// q uniform in [-4, 4), k and v in [-1, 1): logits of standard deviation 4/3 after the
/// 1/sqrt(D) scale, so the softmax is peaked and the running max matters.
std::vector<HostTensor> attentionInputs(std::span<const kernel::TensorSpec> specs,
                                        std::uint64_t seed) {
  std::vector<HostTensor> inputs = randomInputs(specs, seed);
  if (!specs.empty()) {
    inputs[0] = randomInput(specs[0], seed, -4.0, 4.0);
  }
  return inputs;
}

/// bf16 P: each weight is rounded by at most 2^-9 relative, so the weighted mean of v (|v| <= 1,
/// as the inputs are generated) moves by at most 2^-8; the bf16 output adds 2^-9 relative. The
/// NKI flash tests use atol 1e-2.
constexpr Tolerance kAttentionTolerance{4e-3, 0x1p-8};
/// fp32 inputs: worst-case fp32 accumulation over D <= 128 and up to ~1100 keys per block is
/// 7.2e-5 (measured 5.9e-7).
constexpr Tolerance kAttentionFp32Tolerance{1e-4, 1e-6};

KernelEntry attentionEntry(std::string name, std::string summary, bool causal) {
  return {name,
          std::move(summary),
          {{"q", {32, 512, 64}, DType::kBf16},
           {"k", {4, 512, 64}, DType::kBf16},
           {"v", {4, 512, 64}, DType::kBf16}},
          kernel::makeKernel(name,
                             [causal](kernel::Kernel& k, kernel::Tensor q, kernel::Tensor key,
                                      kernel::Tensor value) {
                               return flashAttention(k, q, key, value, {.causal = causal});
                             }),
          [causal](std::span<const HostTensor> in) { return attentionReference(in, causal); },
          kAttentionTolerance,
          [causal](std::span<const kernel::TensorSpec> in) { return attentionFlops(in, causal); },
          attentionInputs,
          [](std::span<const kernel::TensorSpec> in) {
            return in[0].dtype == DType::kFp32 ? kAttentionFp32Tolerance : kAttentionTolerance;
          },
          /*spmd=*/true};
}

double noFlops(std::span<const kernel::TensorSpec> /*inputs*/) { return 0.0; }

/// fp32 sums of bf16 products: the tutorial's np.allclose(atol=1e-4, rtol=1e-2).
constexpr Tolerance kMatmulTolerance{1e-4, 1e-2};

/// fp8 x fp8 products are exact in fp32, so the error is the fp32 accumulation over K plus one
/// rounding of the scale multiply (u = 2^-24): rtol 1e-5 (~170 u) bounds the relative part and
/// atol 1e-4 the sums that cancel (measured max |err| 1.2e-5 at the default K = 2048, 2.5e-5 at
/// K = 8192, with |a|, |b| <= 1 and scales < 2). 2000x tighter than the NKI test's rtol 2e-2,
/// which also covers on-the-fly quantisation and a bf16 result. matmul_fp8_test checks every
/// element against the rigorous bound (K - 1) u sum_k |a_k b_k| |s| + u |ref|.
constexpr Tolerance kMatmulFp8Tolerance{1e-4, 1e-5};

/// An fp32 recurrence whose rounding errors decay with the state (|exp(delta A)| < 1), so they do
/// not grow with L: measured max |err| 1.2e-7 at the default shape (|y| <= 0.57, three seeds).
/// atol 1e-6 and rtol 1e-5 leave a 10x margin and are 100x / 1000x tighter than the tutorial's
/// allclose(atol=1e-4, rtol=1e-2); selective_scan_test checks every element against a rigorous
/// rounding-error bound of the recurrence.
constexpr Tolerance kSelectiveScanTolerance{1e-6, 1e-5};

/// bf16 projections: fp32 PSUM sums of exact bf16 products rounded once to bf16, a relative
/// error of at most 2^-9; rtol 2^-8 allows twice that. atol covers the fp32 accumulation near
/// zero outputs (~sqrt(K) 2^-24 |x||w| ~ 1e-6 for unit-variance inputs; 1e-3 is generous). At
/// [256, 2048] x [2048, 512] the largest error is 0.0156 at |out| = 4.7 (half a bf16 ulp).
constexpr Tolerance kProjectionTolerance{1e-3, 0x1p-8};

/// The bf16 SwiGLU MLP: the final rounding as for the projections (rtol 2^-8), plus h rounded to
/// bf16 before the down projection: 2^-9 relative per term, ~2^-9 sqrt(sum_f (h_f wd_f)^2)
/// ~ 2e-3 for unit-variance outputs, so atol 1e-2 is about five standard deviations (the NKI
/// library's bf16 tests use rtol 2e-2). At S=128, H=1024, F=2816 the largest error is 0.011.
constexpr Tolerance kSwigluTolerance{1e-2, 0x1p-8};

/// fp32 projections and MLP: fp32 sums over K of fp32 products, measured errors 1.2e-6 to 1.3e-6.
constexpr Tolerance kProjectionFp32Tolerance{1e-5, 1e-5};

Tolerance projectionToleranceAt(std::span<const kernel::TensorSpec> in) {
  return in[0].dtype == DType::kFp32 ? kProjectionFp32Tolerance : kProjectionTolerance;
}

/// A port of the fused_mamba tutorial at the tutorial's default shapes (batch 1, 256 channels,
/// 2048 steps, 16 states, fp32).
KernelEntry mambaEntry(std::string name, std::string summary, kernel::KernelDef def) {
  return {std::move(name),
          std::move(summary),
          {{"delta", {1, 256, 2048}, DType::kFp32},
           {"u", {1, 256, 2048}, DType::kFp32},
           {"A", {256, 16}, DType::kFp32},
           {"B", {1, 16, 2048}, DType::kFp32},
           {"C", {1, 16, 2048}, DType::kFp32}},
          std::move(def),
          mambaReference,
          kSelectiveScanTolerance,
          noFlops,
          selectiveScanInputs,
          {}};
}

KernelEntry matmulEntry(std::string name, std::string summary, kernel::KernelDef def) {
  return {std::move(name),
          std::move(summary),
          {{"lhsT", {256, 384}, DType::kBf16}, {"rhs", {256, 1024}, DType::kBf16}},
          std::move(def),
          matmulReference,
          kMatmulTolerance,
          matmulFlops,
          {},
          {},
          /*spmd=*/true};
}

/// Tolerances of the row-wise kernels (normalization.h, softmax.h, rope.h, pooling.h): the bf16
/// bounds, used at every dtype; the tests check fp32 runs against tighter ones.
///
/// softmax: one bf16 rounding of the output (2^-8) on top of fp32 errors that are relative
/// (positive terms only): exp, reciprocal and scale rounded once each, the row sum at most
/// (D - 1) 2^-24 <= 2^-12 for D <= 4096.
constexpr Tolerance kSoftmaxTolerance{1e-7, 0x1p-8 + 0x1p-12};
/// layer norm: one bf16 rounding (2^-8); mean and variance are fp32 sums over D, whose error
/// (at most D 2^-24 relative, 2^-12 for D <= 4096) scales the normalised value (|.| <= 2 for
/// the uniform test inputs), hence the absolute term.
constexpr Tolerance kLayerNormTolerance{2 * 0x1p-12, 0x1p-8};
/// RMS norm: two bf16 roundings (x * rstd, then * w, as Llama's RMSNorm rounds) give 2^-7, and
/// the fp32 sum of squares adds at most 2^-12 relative to rstd.
constexpr Tolerance kRmsNormTolerance{0.0, 0x1p-7 + 0x1p-12};
/// RoPE: fp32 products and sum (errors <= 3 2^-24 (|x1 c| + |x2 s|) <= 2^-22 for |x| <= 1),
/// then one bf16 rounding of the output.
constexpr Tolerance kRopeTolerance{0x1p-22, 0x1p-8};
/// average pool: a fp32 window sum and one division, then one bf16 rounding.
constexpr Tolerance kPoolTolerance{1e-6, 0x1p-8};

constexpr std::int64_t kAvgPoolSize = 2;

/// Inputs of the projection kernels at realistic scales: activations x (input 0) with unit
/// variance, as an RMSNorm output has, uniform in [-sqrt(3), sqrt(3)); each weight [K, N] uniform
/// in +-sqrt(3 / K), so var(w) = 1 / K and a projection keeps unit variance; the residual
/// (the last input when `residual`) uniform in [-1, 1).
std::vector<HostTensor> projectionInputs(std::span<const kernel::TensorSpec> specs,
                                         std::uint64_t seed, bool residual) {
  std::vector<HostTensor> inputs;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const kernel::TensorSpec& spec = specs[i];
    double bound = std::sqrt(3.0);
    if (residual && i + 1 == specs.size()) {
      bound = 1.0;
    } else if (i > 0) {
      bound = std::sqrt(3.0 / static_cast<double>(std::max<std::int64_t>(1, spec.shape.at(0))));
    }
    inputs.push_back(randomInput(spec, seed + i, -bound, bound));
  }
  return inputs;
}

/// 2 S K N for x [S, K] and w [K, N].
double linearFlops(std::span<const kernel::TensorSpec> in) {
  return 2.0 * static_cast<double>(in[0].shape.at(0)) * static_cast<double>(in[0].shape.at(1)) *
         static_cast<double>(in[1].shape.at(1));
}

/// Three products of 2 S H F each for x [S, H] and wg [H, F].
double swigluFlops(std::span<const kernel::TensorSpec> in) {
  return 3.0 * 2.0 * static_cast<double>(in[0].shape.at(0)) *
         static_cast<double>(in[0].shape.at(1)) * static_cast<double>(in[1].shape.at(1));
}

}  // namespace

const std::vector<KernelEntry>& referenceKernels() {
  static const std::vector<KernelEntry> kernels = [] {
    std::vector<KernelEntry> all = {
        attentionEntry("flash_attention",
                       "o = softmax(q k^T / sqrt(D) + causal mask) v, GQA (NKI flash_fwd)", true),
        attentionEntry("flash_attention_full",
                       "o = softmax(q k^T / sqrt(D)) v, no mask, GQA (NKI flash_fwd)", false),
        {"tensor_add",
         "out = a + b, 128-row tiles (NKI tutorial)",
         {{"a", {1024, 2048}, DType::kFp32}, {"b", {1024, 2048}, DType::kFp32}},
         kernel::makeKernel("tensor_add", tensorAdd),
         addReference,
         {0.0, 0x1p-24},
         noFlops,
         {},
         outputRounding},
        {"matmul_basic",
         "result = lhsT^T @ rhs, one 128x128x512 tile (NKI matmul tutorial)",
         {{"lhsT", {128, 128}, DType::kBf16}, {"rhs", {128, 512}, DType::kBf16}},
         kernel::makeKernel("matmul_basic", matmulBasic),
         matmulReference,
         kMatmulTolerance,
         matmulFlops,
         {},
         {},
         /*spmd=*/true},
        matmulEntry("matmul_tiled",
                    "result = lhsT^T @ rhs, M/N/K tile loops, loads in the K loop (NKI tutorial)",
                    kernel::makeKernel("matmul_tiled", matmulTiled)),
        matmulEntry("matmul_hoisted",
                    "result = lhsT^T @ rhs, loads hoisted out of the K loop (NKI tutorial)",
                    kernel::makeKernel("matmul_hoisted", matmulHoisted)),
        matmulEntry("matmul_blocked",
                    "result = lhsT^T @ rhs, free dimensions blocked 2x2 tiles (NKI tutorial)",
                    kernel::makeKernel("matmul_blocked", matmulBlocked)),
        matmulEntry(
            "matmul_optimised",
            "result = lhsT^T @ rhs, M/N/K blocking, SBUF partial sums (NKI tutorial)",
            kernel::makeKernel("matmul_optimised",
                               [](kernel::Kernel& k, kernel::Tensor lhsT, kernel::Tensor rhs) {
                                 return matmulOptimised(k, lhsT, rhs);
                               })),
        {"transpose2d",
         "out[p] = x[p]^T: an F1 x F2 transpose within each partition by access pattern (NKI "
         "tutorial)",
         {{"x", {1024, 32, 64}, DType::kFp32}},
         kernel::makeKernel("transpose2d", transpose2d),
         transpose2dReference,
         {0.0, 0.0},  // a copy: bit-exact
         noFlops,
         {},
         {}},
        {"avgpool2d",
         "out = 2x2 average pool of x [C, H, W], channels on partitions (NKI tutorial)",
         {{"x", {256, 56, 56}, DType::kFp32}},
         kernel::makeKernel(
             "avgpool2d",
             [](kernel::Kernel& k, kernel::Tensor x) { return avgPool2d(k, x, kAvgPoolSize); }),
         [](std::span<const HostTensor> in) { return avgPool2dReference(in, kAvgPoolSize); },
         kPoolTolerance,
         noFlops,
         {},
         {}},
        {"softmax",
         "out = softmax(x) along rows, x [N, D] (NKI tutorial)",
         {{"x", {1024, 2048}, DType::kBf16}},
         kernel::makeKernel("softmax", softmax),
         softmaxReference,
         kSoftmaxTolerance,
         noFlops,
         {},
         {},
         /*spmd=*/true},
        {"layernorm",
         "out = layer_norm(x) * gamma + beta along rows, nl-level ops, two-pass variance",
         {{"x", {1024, 2048}, DType::kFp32},
          {"gamma", {2048}, DType::kFp32},
          {"beta", {2048}, DType::kFp32}},
         kernel::makeKernel("layernorm", layerNorm),
         layerNormReference,
         kLayerNormTolerance,
         noFlops,
         {},
         {},
         /*spmd=*/true},
        {"layernorm_bn",
         "out = layer_norm(x) * gamma + beta along rows, bn_stats/bn_aggr, work over 3 engines",
         {{"x", {1024, 2048}, DType::kFp32},
          {"gamma", {2048}, DType::kFp32},
          {"beta", {2048}, DType::kFp32}},
         kernel::makeKernel("layernorm_bn", layerNormBn),
         layerNormReference,
         kLayerNormTolerance,
         noFlops,
         {},
         {},
         /*spmd=*/true},
        {"layernorm_tutorial_v1",
         "NKI layernorm tutorial v1 ported line for line: nl.mean, mean(x^2) - mean^2, nl ops",
         {{"x", {1024, 2048}, DType::kFp32},
          {"gamma", {2048}, DType::kFp32},
          {"beta", {2048}, DType::kFp32}},
         kernel::makeKernel("layernorm_tutorial_v1", layerNormTutorialV1),
         layerNormReference,
         kLayerNormTolerance,
         noFlops,
         {},
         {}},
        {"layernorm_tutorial_v2",
         "NKI layernorm tutorial v2 ported line for line: bn_stats/bn_aggr, tensor_scalar",
         {{"x", {1024, 2048}, DType::kFp32},
          {"gamma", {2048}, DType::kFp32},
          {"beta", {2048}, DType::kFp32}},
         kernel::makeKernel("layernorm_tutorial_v2", layerNormTutorialV2),
         layerNormReference,
         kLayerNormTolerance,
         noFlops,
         {},
         {}},
        {"rmsnorm",
         "out = x / sqrt(mean(x^2) + 1e-6) * w along rows (Llama RMSNorm)",
         {{"x", {512, 2048}, DType::kBf16}, {"w", {2048}, DType::kBf16}},
         kernel::makeKernel("rmsnorm", rmsNorm),
         rmsNormReference,
         kRmsNormTolerance,
         noFlops,
         {},
         {},
         /*spmd=*/true},
        {"rope",
         "out = x * cos + rotate_half(x) * sin, x [H, S, D] (Llama rotary embedding)",
         {{"x", {32, 512, 64}, DType::kBf16},
          {"cos", {512, 32}, DType::kFp32},
          {"sin", {512, 32}, DType::kFp32}},
         kernel::makeKernel("rope", rope),
         ropeReference,
         kRopeTolerance,
         noFlops,
         ropeInputs,
         {},
         /*spmd=*/true},
        {"matmul_fp8_scaled",
         "out = (lhsT^T @ rhs) * scale[col], fp8 double-row matmul, fp32 out (NKI sample)",
         {{"lhsT", {2048, 1024}, DType::kFp8E4m3},
          {"rhs", {2048, 2048}, DType::kFp8E4m3},
          {"scale", {2048}, DType::kFp32}},
         kernel::makeKernel(
             "matmul_fp8_scaled",
             [](kernel::Kernel& k, kernel::Tensor lhsT, kernel::Tensor rhs, kernel::Tensor scale) {
               return matmulFp8Scaled(k, lhsT, rhs, scale);
             }),
         matmulFp8Reference,
         kMatmulFp8Tolerance,
         matmulFlops,
         matmulFp8Inputs,
         {}},
        mambaEntry("mamba_v1", "NKI fused_mamba tutorial v1: state loop outside the channel tiles",
                   kernel::makeKernel("mamba_v1", mambaV1)),
        mambaEntry("mamba_v2",
                   "NKI fused_mamba tutorial v2: delta and u loaded once per channel tile",
                   kernel::makeKernel("mamba_v2", mambaV2)),
        mambaEntry("mamba_v3", "NKI fused_mamba tutorial v3: v2 with 512-step sequence tiles",
                   kernel::makeKernel("mamba_v3", mambaV3)),
        {"selective_scan",
         "Mamba v1 selective scan, tensor_tensor_scan over sequence tiles (NKI mamba tutorial)",
         {{"delta", {256, 2048}, DType::kFp32},
          {"u", {256, 2048}, DType::kFp32},
          {"A", {256, 16}, DType::kFp32},
          {"B", {16, 2048}, DType::kFp32},
          {"C", {16, 2048}, DType::kFp32}},
         kernel::makeKernel("selective_scan", selectiveScan),
         selectiveScanReference,
         kSelectiveScanTolerance,
         noFlops,
         selectiveScanInputs,
         {}},
        {"linear",
         "out = x @ w for token-major x, transposed on chip; Llama qkv projection shape",
         {{"x", {512, 2048}, DType::kBf16}, {"w", {2048, 2560}, DType::kBf16}},
         kernel::makeKernel("linear", linear),
         linearReference,
         kProjectionTolerance,
         linearFlops,
         [](std::span<const kernel::TensorSpec> specs, std::uint64_t seed) {
           return projectionInputs(specs, seed, false);
         },
         projectionToleranceAt,
         /*spmd=*/true,
         /*autoCastInputs=*/{0, 1}},
        {"linear_residual",
         "out = x @ w + r, the add fused into the PSUM evacuation; Llama attention output",
         {{"x", {512, 2048}, DType::kBf16},
          {"w", {2048, 2048}, DType::kBf16},
          {"r", {512, 2048}, DType::kBf16}},
         kernel::makeKernel("linear_residual", linearResidual),
         linearResidualReference,
         kProjectionTolerance,
         linearFlops,
         [](std::span<const kernel::TensorSpec> specs, std::uint64_t seed) {
           return projectionInputs(specs, seed, true);
         },
         projectionToleranceAt,
         /*spmd=*/true,
         /*autoCastInputs=*/{0, 1}},
        {"swiglu_mlp",
         "out = (silu(x @ wg) * (x @ wu)) @ wd + r, h kept on chip; TinyLlama MLP shape",
         {{"x", {512, 2048}, DType::kBf16},
          {"wg", {2048, 5632}, DType::kBf16},
          {"wu", {2048, 5632}, DType::kBf16},
          {"wd", {5632, 2048}, DType::kBf16},
          {"r", {512, 2048}, DType::kBf16}},
         kernel::makeKernel("swiglu_mlp", swigluMlp),
         swigluMlpReference,
         kSwigluTolerance,
         swigluFlops,
         [](std::span<const kernel::TensorSpec> specs, std::uint64_t seed) {
           return projectionInputs(specs, seed, true);
         },
         [](std::span<const kernel::TensorSpec> in) {
           return in[0].dtype == DType::kFp32 ? kProjectionFp32Tolerance : kSwigluTolerance;
         },
         /*spmd=*/true,
         /*autoCastInputs=*/{0, 1, 2, 3}},
    };
    std::sort(all.begin(), all.end(),
              [](const KernelEntry& x, const KernelEntry& y) { return x.name < y.name; });
    return all;
  }();
  return kernels;
}

namespace {

/// The user kernels: a deque, so that the addresses findKernel hands out stay valid.
struct UserKernels {
  std::mutex mutex;
  std::deque<KernelEntry> entries;
};

UserKernels& userKernelStore() {
  static UserKernels store;
  return store;
}

const KernelEntry* findReferenceKernel(std::string_view name) {
  for (const KernelEntry& k : referenceKernels()) {
    if (k.name == name) {
      return &k;
    }
  }
  return nullptr;
}

}  // namespace

Status registerKernel(KernelEntry entry) {
  const std::string& name = entry.name;
  const bool nameOk = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
  });
  if (!nameOk) {
    return invalidArgument(fmt::format(
        "a user kernel's name must be non-empty letters, digits, '_', '-' or '.', not '{}'", name));
  }
  if (!entry.def.body) {
    return invalidArgument(fmt::format("user kernel '{}' has no kernel body (def.body)", name));
  }
  if (!entry.reference) {
    return invalidArgument(fmt::format("user kernel '{}' has no float64 reference", name));
  }
  if (entry.defaultInputs.empty()) {
    return invalidArgument(fmt::format("user kernel '{}' has no default inputs", name));
  }
  if (findReferenceKernel(name) != nullptr) {
    return invalidArgument(fmt::format("user kernel '{}': a reference kernel has that name", name));
  }
  UserKernels& store = userKernelStore();
  const std::lock_guard lock(store.mutex);
  for (const KernelEntry& k : store.entries) {
    if (k.name == name) {
      return invalidArgument(fmt::format("user kernel '{}' is registered already", name));
    }
  }
  store.entries.push_back(std::move(entry));
  return {};
}

std::vector<const KernelEntry*> userKernels() {
  UserKernels& store = userKernelStore();
  const std::lock_guard lock(store.mutex);
  std::vector<const KernelEntry*> out;
  for (const KernelEntry& k : store.entries) {
    out.push_back(&k);
  }
  return out;
}

const KernelEntry* findKernel(std::string_view name) {
  if (const KernelEntry* k = findReferenceKernel(name)) {
    return k;
  }
  UserKernels& store = userKernelStore();
  const std::lock_guard lock(store.mutex);
  for (const KernelEntry& k : store.entries) {
    if (k.name == name) {
      return &k;
    }
  }
  return nullptr;
}

}  // namespace trn::kernels
