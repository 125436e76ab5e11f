// Tests of the kernel check harness: the allclose comparison against hand-computed cases, input
// rounding, and checkKernel on a registered kernel (passes against its reference, fails against
// a wrong one, reports MFU from the entry's FLOP count).
#include "trn/kernels/check.h"

#include <gtest/gtest.h>

#include <cmath>

#include "../kernel/kernel_test_util.h"
#include "trn/kernels/attention.h"
#include "trn/kernels/registry.h"

namespace trn::kernels {
namespace {

using kernel::testutil::trn2;

HostTensor vec(std::vector<double> values) {
  const auto n = static_cast<std::int64_t>(values.size());
  return HostTensor{{n}, std::move(values)};
}

TEST(KernelCheck, CompareUsesAtolPlusRtolTimesReference) {
  const Tolerance tol{0.1, 0.5};
  // allowed: 0.1 + 0.5 * |ref| = 0.6, 1.1, 0.1
  const Comparison ok = compare(vec({1.5, 3.0, 0.0}), vec({1.0, 2.0, 0.05}), tol);
  EXPECT_TRUE(ok.pass);
  EXPECT_DOUBLE_EQ(ok.maxAbsError, 1.0);
  EXPECT_DOUBLE_EQ(ok.maxRelError, 1.0);
  const Comparison bad = compare(vec({1.5, 3.2, 0.0}), vec({1.0, 2.0, 0.3}), tol);
  EXPECT_FALSE(bad.pass);
  EXPECT_EQ(bad.failures, 2);
  EXPECT_EQ(bad.worstElement, 1);  // 0.1 over its allowance of 1.1; element 2 is 0.05 over
}

TEST(KernelCheck, NanAndShapeMismatchFail) {
  const Comparison nan = compare(vec({NAN, 1.0}), vec({0.0, 1.0}), {1.0, 1.0});
  EXPECT_FALSE(nan.pass);
  EXPECT_EQ(nan.failures, 1);
  EXPECT_EQ(nan.worstElement, 0);
  const Comparison shape = compare(vec({1.0}), vec({1.0, 2.0}), {1.0, 1.0});
  EXPECT_FALSE(shape.pass);
  EXPECT_EQ(shape.failures, 2);
}

TEST(KernelCheck, InputsAreRoundedToTheirDtype) {
  const HostTensor t = randomInput({"x", {4, 8}, DType::kBf16}, 3);
  for (const double v : t.values) {
    EXPECT_EQ(v, roundTo(v, DType::kBf16));
    EXPECT_GE(v, -1.0);
    EXPECT_LE(v, 1.0);
  }
  // bf16 keeps 7 fraction bits: 1 + 2^-8 and 1 + 3 * 2^-8 are ties, which go to even.
  EXPECT_EQ(roundTo(1.0 + 0x1p-8, DType::kBf16), 1.0);
  EXPECT_EQ(roundTo(1.0 + 3 * 0x1p-8, DType::kBf16), 1.0 + 0x1p-6);
  EXPECT_EQ(roundTo(1.0 + 3 * 0x1p-9, DType::kBf16), 1.0 + 0x1p-7);
}

TEST(KernelCheck, MatmulReferencesAgree) {
  const HostTensor aT{{2, 3}, {1, 2, 3, 4, 5, 6}};  // a = [[1,4],[2,5],[3,6]]
  const HostTensor b{{2, 2}, {1, 0, 0, 2}};
  const HostTensor c = matmulTransposedA(aT, b);
  EXPECT_EQ(c.shape, (std::vector<std::int64_t>{3, 2}));
  EXPECT_EQ(c.values, (std::vector<double>{1, 8, 2, 10, 3, 12}));
  const HostTensor a{{3, 2}, {1, 4, 2, 5, 3, 6}};
  EXPECT_EQ(matmul(a, b).values, c.values);
}

TEST(KernelCheck, GemmTransposesBAndAccumulatesWithBeta) {
  const std::vector<double> a = {1, 2, 3, 4, 5, 6};  // [2, 3]
  const std::vector<double> bT = {1, 0, 1, 0, 1, 0};  // b^T [2, 3]: b = [[1,0],[0,1],[1,0]]
  std::vector<double> c = {10, 20, 30, 40};
  gemm({.m = 2, .n = 2, .k = 3, .transposeB = true, .beta = 1.0}, a.data(), bT.data(), c.data());
  EXPECT_EQ(c, (std::vector<double>{10 + 4, 20 + 2, 30 + 10, 40 + 5}));
}

TEST(KernelCheck, AttentionReferenceMatchesTheDefinitionAcrossRowBlocks) {
  // 130 query rows cross the reference's 128-row blocks; two query heads share one kv head.
  const std::int64_t s = 130;
  const std::int64_t d = 4;
  const std::vector<HostTensor> in = {
      randomInput({"q", {2, s, d}, DType::kFp32}, 1), randomInput({"k", {1, s, d}, DType::kFp32}, 2),
      randomInput({"v", {1, s, d}, DType::kFp32}, 3)};
  for (const bool causal : {false, true}) {
    const HostTensor out = attentionReference(in, causal).at(0);
    for (std::int64_t h = 0; h < 2; ++h) {
      for (std::int64_t i = 0; i < s; ++i) {
        const std::int64_t keys = causal ? i + 1 : s;
        std::vector<double> w(static_cast<std::size_t>(keys));
        double sum = 0;
        for (std::int64_t j = 0; j < keys; ++j) {
          double dot = 0;
          for (std::int64_t e = 0; e < d; ++e) {
            dot += in[0][(h * s + i) * d + e] * in[1][j * d + e];
          }
          w[static_cast<std::size_t>(j)] = std::exp(dot / 2.0);  // 1/sqrt(d) = 1/2
          sum += w[static_cast<std::size_t>(j)];
        }
        for (std::int64_t e = 0; e < d; ++e) {
          double expected = 0;
          for (std::int64_t j = 0; j < keys; ++j) {
            expected += w[static_cast<std::size_t>(j)] / sum * in[2][j * d + e];
          }
          ASSERT_NEAR(out[(h * s + i) * d + e], expected, 1e-12)
              << "causal " << causal << " head " << h << " row " << i << " column " << e;
        }
      }
    }
  }
}

TEST(KernelCheck, RegisteredMatmulPassesAndReportsMfu) {
  const KernelEntry* entry = findKernel("matmul_basic");
  ASSERT_NE(entry, nullptr);
  CheckOptions options;
  options.chip = trn2();
  auto result = checkKernel(*entry, entry->defaultInputs, options);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_TRUE(result->pass);
  ASSERT_EQ(result->comparisons.size(), 1u);
  EXPECT_GT(result->comparisons[0].maxAbsError, 0.0);  // fp32 accumulation is not float64
  EXPECT_DOUBLE_EQ(result->usefulFlops, 2.0 * 128 * 128 * 512);
  const double seconds = static_cast<double>(result->report.total.count()) * 1e-12;
  EXPECT_NEAR(result->mfu, result->usefulFlops / (seconds * result->report.peBf16PeakTflops * 1e12),
              1e-12);
  EXPECT_GT(result->mfu, 0.0);
  EXPECT_LT(result->mfu, 1.0);
}

TEST(KernelCheck, WrongReferenceFails) {
  KernelEntry entry = *findKernel("tensor_add");
  entry.reference = [](std::span<const HostTensor> in) {
    HostTensor out = in[0];
    for (std::int64_t i = 0; i < out.size(); ++i) {
      out[i] += in[1][i] + (i == 5 ? 1e-3 : 0.0);
    }
    return std::vector<HostTensor>{out};
  };
  CheckOptions options;
  options.chip = trn2();
  const std::vector<kernel::TensorSpec> specs = {{"a", {130, 64}, DType::kFp32},
                                                 {"b", {130, 64}, DType::kFp32}};
  auto result = checkKernel(entry, specs, options);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_FALSE(result->pass);
  EXPECT_EQ(result->comparisons[0].failures, 1);
  EXPECT_EQ(result->comparisons[0].worstElement, 5);
}

TEST(KernelCheck, NoCheckRunsTheKernelWithoutItsReference) {
  KernelEntry entry = *findKernel("tensor_add");
  bool referenceRan = false;
  entry.reference = [&referenceRan](std::span<const HostTensor> in) {
    referenceRan = true;
    return std::vector<HostTensor>{in[0]};  // wrong, so a check would fail
  };
  CheckOptions options;
  options.chip = trn2();
  options.checkNumerics = false;
  auto result = checkKernel(entry, entry.defaultInputs, options);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_FALSE(referenceRan);
  EXPECT_FALSE(result->checked);
  EXPECT_TRUE(result->pass);
  EXPECT_TRUE(result->comparisons.empty());
  ASSERT_EQ(result->outputs.size(), 1u);
  const auto sum = static_cast<float>(result->inputs[0][7]) + static_cast<float>(result->inputs[1][7]);
  EXPECT_EQ(result->outputs[0][7], static_cast<double>(sum));
}

TEST(KernelCheck, TimingOnlyRunsWithoutData) {
  CheckOptions options;
  options.chip = trn2();
  options.mode = core::RunMode::kTimingOnly;
  const KernelEntry* entry = findKernel("tensor_add");
  auto result = checkKernel(*entry, entry->defaultInputs, options);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_TRUE(result->comparisons.empty());
  EXPECT_TRUE(result->outputs.empty());
  EXPECT_GT(result->report.total.count(), 0);
  EXPECT_GT(result->report.hbmBytes, 3 * 1024 * 2048 * 4 - 1);
}

}  // namespace
}  // namespace trn::kernels
