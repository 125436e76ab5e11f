// Tests of the kernel check harness: checkKernel on a registered kernel passes against its
// reference, fails against a wrong one, reports MFU from the entry's FLOP count, skips the
// reference when asked, and runs timing-only without data.
#include "trn/harness/check.h"

#include <gtest/gtest.h>

#include <cmath>

#include "../kernel/kernel_test_util.h"
#include "trn/kernels/registry.h"

namespace trn::harness {
namespace {

using kernels::findKernel;

TEST(KernelCheck, RegisteredMatmulPassesAndReportsMfu) {
  const KernelEntry* entry = findKernel("matmul_basic");
  ASSERT_NE(entry, nullptr);
  CheckOptions options;
  auto result = checkKernel(kernel::testutil::trn2Session(), *entry, entry->defaultInputs, options);
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
  const std::vector<kernel::TensorSpec> specs = {{"a", {130, 64}, DType::kFp32},
                                                 {"b", {130, 64}, DType::kFp32}};
  auto result = checkKernel(kernel::testutil::trn2Session(), entry, specs, options);
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
  options.checkNumerics = false;
  auto result = checkKernel(kernel::testutil::trn2Session(), entry, entry.defaultInputs, options);
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
  options.run.mode = core::RunMode::kTimingOnly;
  const KernelEntry* entry = findKernel("tensor_add");
  auto result = checkKernel(kernel::testutil::trn2Session(), *entry, entry->defaultInputs, options);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_TRUE(result->comparisons.empty());
  EXPECT_TRUE(result->outputs.empty());
  EXPECT_GT(result->report.total.count(), 0);
  EXPECT_GT(result->report.hbmBytes, 3 * 1024 * 2048 * 4 - 1);
}

}  // namespace
}  // namespace trn::harness
