// Tests of the avgpool2d kernel (pool 2): full and ragged channel tiles in fp32 and bf16 against
// the float64 reference, images cut into bands of output rows, pool sizes 3 and 4 through the
// function directly, and sizes that are not multiples of the pool rejected at the kernel's line.
#include "trn/kernels/pooling.h"

#include <gtest/gtest.h>

#include "registered_kernel_util.h"

namespace trn::kernels {
namespace {

using testutil::compileError;
using testutil::entryNamed;
using testutil::expectMatchesReference;

/// fp32 output: a window sum of pool^2 <= 16 terms of |x| < 1 (error < 15 2^-24 x 16 absolute
/// before the division by pool^2) and one correctly rounded division.
constexpr Tolerance kFp32Pool{1e-6, 0x1p-23};

TEST(AvgPoolKernel, MatchesReference) {
  expectMatchesReference("avgpool2d", {{"x", {130, 8, 6}, DType::kFp32}}, kFp32Pool);
  expectMatchesReference("avgpool2d", {{"x", {256, 56, 56}, DType::kBf16}});
  expectMatchesReference("avgpool2d", {{"x", {3, 2, 2}, DType::kFp32}}, kFp32Pool);
  // 200 x 200 fp32 = 1600 bytes per pooled row pair: bands of 20 output rows, 5 of them.
  expectMatchesReference("avgpool2d", {{"x", {20, 200, 200}, DType::kFp32}}, kFp32Pool);
}

TEST(AvgPoolKernel, OtherPoolSizesMatchReference) {
  for (const std::int64_t pool : {3, 4}) {
    SCOPED_TRACE("pool " + std::to_string(pool));
    KernelEntry entry = entryNamed("avgpool2d");
    entry.def = kernel::makeKernel(
        "avgpool2d_" + std::to_string(pool),
        [pool](kernel::Kernel& k, kernel::Tensor x) { return avgPool2d(k, x, pool); });
    entry.reference = [pool](std::span<const HostTensor> in) {
      return avgPool2dReference(in, pool);
    };
    harness::CheckOptions options;
    options.tolerance = kFp32Pool;
    const std::vector<kernel::TensorSpec> specs = {{"x", {131, 12 * pool, 5 * pool}, DType::kFp32}};
    auto result = harness::checkKernel(kernel::testutil::trn2Session(), entry, specs, options);
    ASSERT_TRUE(result.ok()) << result.status().toString();
    EXPECT_TRUE(result->pass) << result->comparisons[0].maxAbsError;
  }
}

TEST(AvgPoolKernel, SizesNotMultiplesOfThePoolFail) {
  std::string error = compileError("avgpool2d", {{"x", {128, 7, 8}, DType::kFp32}});
  EXPECT_NE(error.find("pooling.cpp:"), std::string::npos) << error;
  EXPECT_NE(error.find("avgpool2d: H = 7 and W = 8 must be multiples of the pool size 2"),
            std::string::npos)
      << error;
  error = compileError("avgpool2d", {{"x", {128, 64}, DType::kFp32}});
  EXPECT_NE(error.find("avgpool2d: x [C, H, W] must be 3-D, not [128, 64]"), std::string::npos)
      << error;
}

}  // namespace
}  // namespace trn::kernels
