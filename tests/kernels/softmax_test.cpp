// Tests of the softmax kernel: full and ragged row tiles in fp32 and bf16 against the float64
// reference, large-magnitude rows (the max subtraction keeps exp finite), and a bad rank failing
// at the kernel's line.
#include "trn/kernels/softmax.h"

#include <gtest/gtest.h>

#include "registered_kernel_util.h"

namespace trn::kernels {
namespace {

using testutil::compileError;
using testutil::entryNamed;
using testutil::expectMatchesReference;

/// fp32 output: exp, reciprocal and scale round once each and the row sum of D positive terms
/// is within (D - 1) 2^-24 <= 2^-12 relative for D <= 4096; no bf16 rounding.
constexpr Tolerance kFp32Softmax{1e-7, 0x1p-12};

TEST(SoftmaxKernel, MatchesReference) {
  expectMatchesReference("softmax", {{"x", {300, 1000}, DType::kBf16}});
  expectMatchesReference("softmax", {{"x", {128, 2048}, DType::kBf16}});
  expectMatchesReference("softmax", {{"x", {130, 513}, DType::kFp32}}, kFp32Softmax);
  expectMatchesReference("softmax", {{"x", {3, 1}, DType::kFp32}}, kFp32Softmax);
}

TEST(SoftmaxKernel, LargeLogitsStayFinite) {
  // Logits in [-80, 80): exp without the max subtraction would overflow fp32 near 88.7.
  const std::vector<kernel::TensorSpec> specs = {{"x", {130, 257}, DType::kFp32}};
  HostTensor x = randomInput(specs[0], 7, -80.0, 80.0);
  CheckOptions options;
  options.chip = kernel::testutil::trn2();
  options.tolerance = kFp32Softmax;
  const std::vector<HostTensor> inputs = {x};
  auto result = checkKernel(entryNamed("softmax"), specs, options, nullptr, inputs);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_TRUE(result->pass) << result->comparisons[0].maxRelError;
}

TEST(SoftmaxKernel, BadRankFailsAtTheKernelLine) {
  const std::string error = compileError("softmax", {{"x", {4, 128, 64}, DType::kFp32}});
  EXPECT_NE(error.find("softmax.cpp:"), std::string::npos) << error;
  EXPECT_NE(error.find("softmax: x must be 2-D, not [4, 128, 64]"), std::string::npos) << error;
}

}  // namespace
}  // namespace trn::kernels
