// Tests of the rope kernel: the Llama demo's q and k shapes and ragged ones (S not a multiple of
// 128, a prime S, heads that do not fill the last tile, heads longer than 128 row blocks) in bf16
// and fp32 against the float64 reference with genuine cos/sin tables; mismatched tables and an
// odd head dimension fail at the kernel's line; the demo's q shape is bound by the vector engine.
#include "trn/kernels/rope.h"

#include <gtest/gtest.h>

#include "registered_kernel_util.h"

namespace trn::kernels {
namespace {

using testutil::compileError;
using testutil::expectMatchesReference;

/// fp32 output: products and their sum in fp32 (<= 3 2^-24 (|x1 c| + |x2 s|) <= 2^-22 for
/// |x| <= 1), no bf16 rounding.
constexpr Tolerance kFp32Rope{0x1p-22, 0x1p-23};

std::vector<kernel::TensorSpec> ropeSpecs(std::int64_t h, std::int64_t s, std::int64_t d,
                                          DType dtype, DType table = DType::kFp32) {
  return {{"x", {h, s, d}, dtype}, {"cos", {s, d / 2}, table}, {"sin", {s, d / 2}, table}};
}

TEST(RopeKernel, LlamaShapesMatchReference) {
  expectMatchesReference("rope", ropeSpecs(32, 512, 64, DType::kBf16));
  expectMatchesReference("rope", ropeSpecs(4, 512, 64, DType::kBf16));
}

TEST(RopeKernel, RaggedShapesMatchReference) {
  // S = 300: rows of 6 tokens, 50 per head, 2 heads per tile, the last tile one head.
  expectMatchesReference("rope", ropeSpecs(5, 300, 64, DType::kBf16));
  // S = 131 (prime): rows of one token; 131 row blocks per head need two chunks of one head.
  expectMatchesReference("rope", ropeSpecs(3, 131, 128, DType::kFp32), kFp32Rope);
  // S = 2048, D = 128: rows of 4 tokens, 512 per head: 4 chunks of 128 rows.
  expectMatchesReference("rope", ropeSpecs(2, 2048, 128, DType::kFp32), kFp32Rope);
  expectMatchesReference("rope", ropeSpecs(1, 1, 2, DType::kBf16, DType::kBf16));
}

TEST(RopeKernel, BadShapesFailAtTheKernelLine) {
  std::string error = compileError("rope", {{"x", {4, 16, 64}, DType::kBf16},
                                            {"cos", {16, 64}, DType::kFp32},
                                            {"sin", {16, 64}, DType::kFp32}});
  EXPECT_NE(error.find("rope.cpp:"), std::string::npos) << error;
  EXPECT_NE(error.find("rope: cos [16, 64] and sin [16, 64] must both be [S, D/2] = [16, 32]"),
            std::string::npos)
      << error;
  error = compileError("rope", ropeSpecs(4, 16, 63, DType::kBf16));
  EXPECT_NE(error.find("rope: the head dimension D = 63 must be even"), std::string::npos) << error;
}

// The demo's q (x [32, 512, 64] bf16): rows of 8 tokens, 64 per head, 2 heads per tile, 16 tiles
// of 512 elements per partition. The vector engine takes 10 of them at 3 passes of 512 cycles
// (PSUM operands: one element per cycle) at 0.96 GHz, 16.0 us; GpSimd the other 6 at 3 passes of
// 1024 cycles at 1.2 GHz, 15.4 us; the DMA's 4.3 MB in 1 KiB rows (80% efficiency) take 15.1 us.
// The run is bound by the element-wise work: the vector engine is the critical engine, busy
// exactly its share, and the run ends within 1.5x of it (fill and drain: the tables and the
// first tile's load, 1.3 us DMA fixed cost each, and the last store).
TEST(RopeKernel, LlamaQueryShapeIsBoundByTheVectorEngine) {
  const harness::CheckResult run = testutil::timingOnly("rope", ropeSpecs(32, 512, 64, DType::kBf16));
  const double dveSeconds = 10 * 3 * 512 / 0.96e9;
  const auto& dve = run.report.engines[static_cast<std::size_t>(isa::Engine::kDve)];
  EXPECT_NEAR(static_cast<double>(dve.busy.count()) * 1e-12, dveSeconds, 0.05 * dveSeconds);
  const double seconds = static_cast<double>(run.report.total.count()) * 1e-12;
  EXPECT_LT(seconds, 1.5 * dveSeconds) << "simulated " << seconds * 1e6 << " us";
  EXPECT_EQ(run.report.criticalEngine, "dve");
}

}  // namespace
}  // namespace trn::kernels
