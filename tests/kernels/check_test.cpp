// Tests of the kernel check harness: the allclose comparison against hand-computed cases, input
// rounding, and checkKernel on a registered kernel (passes against its reference, fails against
// a wrong one, reports MFU from the entry's FLOP count).
#include "trn/kernels/check.h"

#include <gtest/gtest.h>

#include <cmath>

#include "../kernel/kernel_test_util.h"
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
