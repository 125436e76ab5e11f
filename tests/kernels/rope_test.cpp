// Tests of the rope kernel: the Llama demo's q and k shapes and ragged ones (S not a multiple of
// 128, a prime S, heads that do not fill the last tile, heads longer than 128 row blocks) in bf16
// and fp32 against the float64 reference with genuine cos/sin tables; mismatched tables and an
// odd head dimension fail at the kernel's line.
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

}  // namespace
}  // namespace trn::kernels
