// Tests of the transpose2d kernel: bit-exact against the reference for full and ragged row tiles,
// fp32 and bf16, matrices split into blocks when a row exceeds 32 KiB; a bad rank fails at the
// kernel's line; at the default shape the kernel is bound by its DMA traffic.
#include "trn/kernels/transpose.h"

#include <gtest/gtest.h>

#include "registered_kernel_util.h"

namespace trn::kernels {
namespace {

using testutil::compileError;
using testutil::expectMatchesReference;
using testutil::timingOnly;

TEST(TransposeKernel, MatchesReferenceExactly) {
  expectMatchesReference("transpose2d", {{"x", {5, 3, 4}, DType::kFp32}});
  expectMatchesReference("transpose2d", {{"x", {130, 64, 48}, DType::kBf16}});
  expectMatchesReference("transpose2d", {{"x", {256, 17, 33}, DType::kFp32}});
  // 3 x 9000 fp32 per row: blocks of 1 x 8192 and 1 x 808 columns.
  expectMatchesReference("transpose2d", {{"x", {2, 3, 9000}, DType::kFp32}});
}

TEST(TransposeKernel, BadRankFailsAtTheKernelLine) {
  const std::string error = compileError("transpose2d", {{"x", {128, 64}, DType::kFp32}});
  EXPECT_NE(error.find("transpose.cpp:"), std::string::npos) << error;
  EXPECT_NE(error.find("transpose2d: x [P, F1, F2] must be 3-D, not [128, 64]"), std::string::npos)
      << error;
}

// The default shape [1024, 32, 64] fp32 moves 8 MiB in and 8 MiB out in rows of 8 KiB (DMA
// efficiency 8192 / (8192 + 256) = 97%): 47.0 us at 368 GB/s. The vector engine copies a tile
// (2048 elements per partition, one per cycle at 0.96 GHz) in 2.1 us, less than the tile's
// 5.9 us of DMA, so only the fill and drain are exposed: the DMA fixed cost (1.3 us) of the
// first load and of the last store, one tile's copy and one tile's store (2.9 us). The run must
// be within 10% of that, with DMA the critical engine.
TEST(TransposeKernel, DefaultShapeIsDmaBound) {
  const harness::CheckResult run = timingOnly("transpose2d", {{"x", {1024, 32, 64}, DType::kFp32}});
  const double bytes = 2.0 * 1024 * 32 * 64 * 4;
  const double dmaSeconds = bytes / (368e9 * 8192.0 / (8192.0 + 256.0));
  const double expected = dmaSeconds + 2 * 1.3e-6 + 2.1e-6 + 2.9e-6;
  const double seconds = static_cast<double>(run.report.total.count()) * 1e-12;
  EXPECT_GT(seconds, dmaSeconds);
  EXPECT_LT(seconds, 1.1 * expected) << "simulated " << seconds * 1e6 << " us";
  EXPECT_EQ(run.report.criticalEngine, "dma");
}

}  // namespace
}  // namespace trn::kernels
