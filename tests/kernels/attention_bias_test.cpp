// Tests of flash attention with an additive bias and an explicit scale (what the graph
// compiler's fused attention calls for masks given as inputs), and of head dims other than 64 and
// 128: each against the float64 definition (attentionReference with the bias) at fp32 and bf16,
// with -inf entries (a causal mask as PyTorch writes it, and a window that leaves a row only -inf
// in its first key block) and the causal flag on top of a bias; a bias of the wrong shape is an
// error naming it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "../kernel/kernel_test_util.h"
#include "trn/harness/check.h"
#include "trn/kernels/attention.h"
#include "trn/kernels/registry.h"

namespace trn::kernels {
namespace {

enum class BiasKind {
  kNone,
  kRandom,  ///< uniform [-2, 2) with -inf wherever (i + 3 j) % 7 == 0 and j > 0
  kCausal,  ///< 0 on and below the diagonal, -inf above (PyTorch's triu(full(-inf), 1))
  kWindow,  ///< causal, and for rows >= 1100 also -inf on keys below 1024 (a sliding window)
};

struct Case {
  std::int64_t hq = 2;
  std::int64_t hkv = 1;
  std::int64_t s = 128;
  std::int64_t d = 64;
  DType dtype = DType::kFp32;
  bool causal = false;
  float scale = 0.25f;
  BiasKind bias = BiasKind::kRandom;
};

HostTensor makeBias(const Case& c, std::uint64_t seed) {
  HostTensor bias = randomInput({"bias", {c.s, c.s}, DType::kFp32}, seed, -2.0, 2.0);
  for (std::int64_t i = 0; i < c.s; ++i) {
    for (std::int64_t j = 0; j < c.s; ++j) {
      double& b = bias[i * c.s + j];
      switch (c.bias) {
        case BiasKind::kRandom:
          b = (i + 3 * j) % 7 == 0 && j > 0 ? -INFINITY : b;
          break;
        case BiasKind::kCausal:
          b = j > i ? -INFINITY : 0.0;
          break;
        case BiasKind::kWindow:
          b = j > i || (i >= 1100 && j < 1024) ? -INFINITY : 0.0;
          break;
        case BiasKind::kNone:
          break;
      }
    }
  }
  return bias;
}

KernelEntry entryFor(const Case& c) {
  const bool withBias = c.bias != BiasKind::kNone;
  KernelEntry e;
  e.name = "flash_attention_bias_test";
  e.def = kernel::KernelDef{"flash_attention_bias_test",
                            [c, withBias](kernel::Kernel& k, std::span<const kernel::Tensor> in) {
                              AttentionScores scores;
                              scores.scale = c.scale;
                              if (withBias) {
                                scores.bias = in[3];
                              }
                              return std::vector<kernel::Tensor>{flashAttention(
                                  k, in[0], in[1], in[2], {.causal = c.causal}, scores)};
                            }};
  e.reference = [c](std::span<const HostTensor> in) {
    return attentionReference(in, c.causal, c.scale);
  };
  e.inputs = [c, withBias](std::span<const kernel::TensorSpec> specs, std::uint64_t seed) {
    std::vector<HostTensor> in = {randomInput(specs[0], seed, -4.0, 4.0),
                                  randomInput(specs[1], seed + 1), randomInput(specs[2], seed + 2)};
    if (withBias) {
      in.push_back(makeBias(c, seed + 3));
    }
    return in;
  };
  return e;
}

std::vector<kernel::TensorSpec> specsOf(const Case& c) {
  std::vector<kernel::TensorSpec> specs = {{"q", {c.hq, c.s, c.d}, c.dtype},
                                           {"k", {c.hkv, c.s, c.d}, c.dtype},
                                           {"v", {c.hkv, c.s, c.d}, c.dtype}};
  if (c.bias != BiasKind::kNone) {
    specs.push_back({"bias", {c.s, c.s}, c.dtype});
  }
  return specs;
}

/// fp32: the derivation of attention_test.cpp's kFp32Tolerance (logits from fp32 products, P @ v
/// over at most ~1300 keys) holds with the bias added in fp32 (one more rounding of each logit).
/// bf16: P rounded to bf16 moves the weighted mean of |v| <= 1 by at most 2^-8, and the bf16
/// output adds 2^-9 relative (the registry's attention tolerance).
Tolerance toleranceFor(const Case& c) {
  return c.dtype == DType::kFp32 ? Tolerance{1e-4, 1e-6} : Tolerance{4e-3, 0x1p-8};
}

void expectMatches(const Case& c) {
  SCOPED_TRACE("Hq=" + std::to_string(c.hq) + " Hkv=" + std::to_string(c.hkv) +
               " S=" + std::to_string(c.s) + " D=" + std::to_string(c.d) +
               (c.dtype == DType::kBf16 ? " bf16" : " fp32") + (c.causal ? " causal" : ""));
  const KernelEntry entry = entryFor(c);
  harness::CheckOptions options;
  options.tolerance = toleranceFor(c);
  auto result = harness::checkKernel(kernel::testutil::trn2Session(), entry, specsOf(c), options);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  ASSERT_EQ(result->comparisons.size(), 1u);
  const Comparison& cmp = result->comparisons[0];
  EXPECT_TRUE(result->pass) << "max abs error " << cmp.maxAbsError << ", " << cmp.failures
                            << " elements outside, worst at " << cmp.worstElement;
}

TEST(AttentionBias, RandomBiasWithInfinitiesFp32GroupedQuery) {
  expectMatches({.hq = 4, .hkv = 2, .s = 200, .d = 64});
}

TEST(AttentionBias, CausalMaskAsBiasOverSeveralKeyBlocksBf16) {
  expectMatches({.hq = 2,
                 .hkv = 1,
                 .s = 1300,
                 .d = 128,
                 .dtype = DType::kBf16,
                 .scale = 0.0883883f,
                 .bias = BiasKind::kCausal});
}

TEST(AttentionBias, ARowOnlyMinusInfinityInItsFirstBlockContributesNothing) {
  expectMatches({.hq = 1, .hkv = 1, .s = 1300, .d = 64, .bias = BiasKind::kWindow});
}

TEST(AttentionBias, CausalFlagOnTopOfABias) {
  expectMatches({.hq = 2, .hkv = 2, .s = 300, .d = 32, .causal = true});
}

TEST(AttentionBias, SmallAndOddHeadDims) {
  expectMatches({.hq = 4, .hkv = 2, .s = 24, .d = 8, .bias = BiasKind::kCausal});
  expectMatches({.hq = 2, .hkv = 1, .s = 160, .d = 96, .causal = true, .bias = BiasKind::kNone});
  expectMatches(
      {.hq = 2, .hkv = 2, .s = 130, .d = 17, .dtype = DType::kBf16, .bias = BiasKind::kNone});
}

TEST(AttentionBias, LongestSequenceWithABiasFitsOnChipInFp32) {
  // S = 8192 in fp32: k^T and [v | 1] of a kv head, and a query tile's bias tiles kept for the
  // heads of its group, all in SBUF; timing-only (the backend's race detection on).
  const Case c{.hq = 2, .hkv = 1, .s = 8192, .d = 128};
  harness::CheckOptions options;
  options.run.mode = core::RunMode::kTimingOnly;
  options.checkNumerics = false;
  auto result =
      harness::checkKernel(kernel::testutil::trn2Session(), entryFor(c), specsOf(c), options);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_GT(result->stats.total.count(), 0);
}

TEST(AttentionBias, ABiasOfTheWrongShapeIsAnError) {
  const Case c{.s = 128};
  std::vector<kernel::TensorSpec> specs = specsOf(c);
  specs[3].shape = {128, 64};
  auto compiled = kernel::compile(entryFor(c).def, specs, kernel::testutil::limits());
  ASSERT_FALSE(compiled.ok());
  const std::string message = compiled.status().toString();
  EXPECT_NE(message.find("the bias [128, 64] must be [S, S] = [128, 128]"), std::string::npos)
      << message;
}

}  // namespace
}  // namespace trn::kernels
