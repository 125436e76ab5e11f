// Tests of the softmax kernel: full and ragged row tiles in fp32 and bf16 against the float64
// reference, large-magnitude rows (the max subtraction keeps exp finite), a bad rank failing at
// the kernel's line, and the default shape bound by its DMA traffic.
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
  expectMatchesReference("softmax", {{"x", {129, 300}, DType::kFp16}});
}

TEST(SoftmaxKernel, LargeLogitsStayFinite) {
  // Logits in [-80, 80): exp without the max subtraction would overflow fp32 near 88.7.
  const std::vector<kernel::TensorSpec> specs = {{"x", {130, 257}, DType::kFp32}};
  HostTensor x = randomInput(specs[0], 7, -80.0, 80.0);
  harness::CheckOptions options;
  options.tolerance = kFp32Softmax;
  const std::vector<HostTensor> inputs = {x};
  auto result = harness::checkKernel(kernel::testutil::trn2Session(), entryNamed("softmax"), specs, options, nullptr, inputs);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_TRUE(result->pass) << result->comparisons[0].maxRelError;
}

TEST(SoftmaxKernel, BadRankFailsAtTheKernelLine) {
  const std::string error = compileError("softmax", {{"x", {4, 128, 64}, DType::kFp32}});
  EXPECT_NE(error.find("softmax.cpp:"), std::string::npos) << error;
  EXPECT_NE(error.find("softmax: x must be 2-D, not [4, 128, 64]"), std::string::npos) << error;
}

// The default shape [1024, 2048] bf16 moves 4 MiB in and 4 MiB out in 4 KiB rows (DMA
// efficiency 4096 / (4096 + 256) = 94%): 24.2 us at 368 GB/s. Per 128-row tile each engine needs
// less than the tile's 3.0 us of DMA (vector engine: a bf16 max at 2 elements per cycle, 1.1 us;
// scalar engine: exp of 2048 elements at 1.2 GHz, 1.8 us; GpSimd: the fp32 scale, 1.7 us), so
// only fill and drain are exposed: the DMA fixed cost (1.3 us) of the first load and of the last
// store, the first tile's transfer shared with the two loaded behind it (3 x 1.4 us), and the
// last tile's compute (4.6 us). DMA must be the critical engine, within 10% of that.
TEST(SoftmaxKernel, DefaultShapeIsDmaBound) {
  const harness::CheckResult run = testutil::timingOnly("softmax", {{"x", {1024, 2048}, DType::kBf16}});
  const double bytes = 2.0 * 1024 * 2048 * 2;
  const double dmaSeconds = bytes / (368e9 * 4096.0 / (4096.0 + 256.0));
  const double expected = dmaSeconds + 2 * 1.3e-6 + 2 * 1.4e-6 + 4.6e-6;
  const double seconds = static_cast<double>(run.report.total.count()) * 1e-12;
  EXPECT_GT(seconds, dmaSeconds);
  EXPECT_LT(seconds, 1.1 * expected) << "simulated " << seconds * 1e6 << " us";
  EXPECT_EQ(run.report.criticalEngine, "dma");
}

}  // namespace
}  // namespace trn::kernels
