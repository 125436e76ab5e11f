#include "trn/kernels/registry.h"

#include <algorithm>

#include "trn/kernels/attention.h"
#include "trn/kernels/elementwise.h"
#include "trn/kernels/matmul.h"

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
          attentionInputs};
}

double noFlops(std::span<const kernel::TensorSpec> /*inputs*/) { return 0.0; }

/// fp32 sums of bf16 products: the tutorial's np.allclose(atol=1e-4, rtol=1e-2).
constexpr Tolerance kMatmulTolerance{1e-4, 1e-2};

KernelEntry matmulEntry(std::string name, std::string summary, kernel::KernelDef def) {
  return {std::move(name),
          std::move(summary),
          {{"lhsT", {256, 384}, DType::kBf16}, {"rhs", {256, 1024}, DType::kBf16}},
          std::move(def),
          matmulReference,
          kMatmulTolerance,
          matmulFlops,
          {}};
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
         {0.0, 0x1p-24},  // one correctly rounded fp32 addition
         noFlops,
         {}},
        {"matmul_basic",
         "result = lhsT^T @ rhs, one 128x128x512 tile (NKI matmul tutorial)",
         {{"lhsT", {128, 128}, DType::kBf16}, {"rhs", {128, 512}, DType::kBf16}},
         kernel::makeKernel("matmul_basic", matmulBasic),
         matmulReference,
         kMatmulTolerance,
         matmulFlops,
         {}},
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
    };
    std::sort(all.begin(), all.end(),
              [](const KernelEntry& x, const KernelEntry& y) { return x.name < y.name; });
    return all;
  }();
  return kernels;
}

const KernelEntry* findKernel(std::string_view name) {
  for (const KernelEntry& k : referenceKernels()) {
    if (k.name == name) {
      return &k;
    }
  }
  return nullptr;
}

}  // namespace trn::kernels
