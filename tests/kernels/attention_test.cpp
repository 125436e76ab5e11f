// Tests of the flash-attention forward kernels: causal and full attention against the float64
// definition at bf16 and fp32, with grouped-query heads, ragged sequence lengths and several key
// blocks per query tile (so the running max and the accumulator rescale are exercised); clear
// errors for unsupported inputs; and in timing-only mode the long-sequence case compiles quickly
// and keeps the tensor engine as busy as the per-block work of the other engines allows.
#include "trn/kernels/attention.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "../kernel/kernel_test_util.h"
#include "trn/kernels/check.h"
#include "trn/kernels/registry.h"

namespace trn::kernels {
namespace {

using kernel::testutil::trn2;

struct Shape {
  std::int64_t hq = 1;
  std::int64_t hkv = 1;
  std::int64_t s = 128;
  std::int64_t d = 64;
  DType dtype = DType::kBf16;
};

std::vector<kernel::TensorSpec> specsOf(const Shape& c) {
  return {{"q", {c.hq, c.s, c.d}, c.dtype},
          {"k", {c.hkv, c.s, c.d}, c.dtype},
          {"v", {c.hkv, c.s, c.d}, c.dtype}};
}

std::string describe(const Shape& c) {
  return "Hq=" + std::to_string(c.hq) + " Hkv=" + std::to_string(c.hkv) +
         " S=" + std::to_string(c.s) + " D=" + std::to_string(c.d) +
         (c.dtype == DType::kBf16 ? " bf16" : " fp32");
}

/// fp32 end to end: logits from fp32 products of |q| <= 4, |k| <= 1 summed over D <= 128 terms
/// (gamma_128 * 4 * 128 = 3.1e-5, 2.7e-6 after the 1/sqrt(D) scale), so each softmax weight is
/// within 5.5e-6 relative; P @ v summed over at most 1100 keys adds gamma_1100 = 6.6e-5 of
/// sum |p v| <= sum p. Weighted mean of |v| <= 1: at most 7.2e-5 (+ 2^-24 relative from the
/// final division).
constexpr Tolerance kFp32Tolerance{1e-4, 1e-6};

void expectMatches(const std::string& name, const Shape& c,
                   std::optional<Tolerance> tolerance = std::nullopt) {
  SCOPED_TRACE(name + " " + describe(c));
  const KernelEntry* entry = findKernel(name);
  ASSERT_NE(entry, nullptr);
  CheckOptions options;
  options.chip = trn2();
  options.tolerance = tolerance;
  const std::vector<kernel::TensorSpec> specs = specsOf(c);
  auto result = checkKernel(*entry, specs, options);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  ASSERT_EQ(result->comparisons.size(), 1u);
  const Comparison& cmp = result->comparisons[0];
  EXPECT_TRUE(result->pass) << "max abs error " << cmp.maxAbsError << ", " << cmp.failures
                            << " elements outside, worst at " << cmp.worstElement;
}

TEST(AttentionKernels, CausalBf16) { expectMatches("flash_attention", {2, 1, 256, 64}); }

TEST(AttentionKernels, CausalFp32RaggedGroupedQuery) {
  expectMatches("flash_attention", {4, 2, 200, 128, DType::kFp32}, kFp32Tolerance);
}

TEST(AttentionKernels, FullBf16) { expectMatches("flash_attention_full", {2, 2, 384, 128}); }

TEST(AttentionKernels, GroupedQueryFourToOneRagged) {
  expectMatches("flash_attention", {8, 2, 160, 64});
  expectMatches("flash_attention_full", {4, 1, 130, 128});
}

// More than one key block per query tile: the running max, the rescale and a ragged last chunk.
TEST(AttentionKernels, SeveralKeyBlocks) {
  expectMatches("flash_attention", {1, 1, 1300, 64});
  expectMatches("flash_attention_full", {1, 1, 1100, 128, DType::kFp32}, kFp32Tolerance);
}

/// The compile error of `name` at these shapes.
std::string compileError(const std::string& name, const Shape& c) {
  const KernelEntry* entry = findKernel(name);
  EXPECT_NE(entry, nullptr);
  const std::vector<kernel::TensorSpec> specs = specsOf(c);
  auto compiled = kernel::compile(entry->def, specs, kernel::testutil::limits());
  EXPECT_FALSE(compiled.ok());
  return compiled.ok() ? std::string() : compiled.status().toString();
}

TEST(AttentionKernels, RejectsUnsupportedInputsAtTheKernelLine) {
  const std::string d96 = compileError("flash_attention", {1, 1, 128, 96});
  EXPECT_NE(d96.find("attention.cpp:"), std::string::npos) << d96;
  EXPECT_NE(d96.find("head dim D = 96"), std::string::npos) << d96;
  const std::string group = compileError("flash_attention", {3, 2, 128, 64});
  EXPECT_NE(group.find("Hq = 3 query heads is not a multiple of Hkv = 2"), std::string::npos)
      << group;

  const KernelEntry* entry = findKernel("flash_attention_full");
  ASSERT_NE(entry, nullptr);
  const std::vector<kernel::TensorSpec> mismatch = {{"q", {2, 256, 64}, DType::kBf16},
                                                    {"k", {1, 256, 64}, DType::kBf16},
                                                    {"v", {1, 200, 64}, DType::kBf16}};
  auto compiled = kernel::compile(entry->def, mismatch, kernel::testutil::limits());
  ASSERT_FALSE(compiled.ok());
  const std::string shape = compiled.status().toString();
  EXPECT_NE(shape.find("attention.cpp:"), std::string::npos) << shape;
  EXPECT_NE(shape.find("k [1, 256, 64] and v [1, 200, 64] must have one shape"), std::string::npos)
      << shape;
  const std::vector<kernel::TensorSpec> dtypes = {{"q", {1, 128, 64}, DType::kBf16},
                                                  {"k", {1, 128, 64}, DType::kFp32},
                                                  {"v", {1, 128, 64}, DType::kFp32}};
  compiled = kernel::compile(entry->def, dtypes, kernel::testutil::limits());
  ASSERT_FALSE(compiled.ok());
  EXPECT_NE(compiled.status().toString().find("must all be bf16 or all fp32"), std::string::npos)
      << compiled.status().toString();
}

}  // namespace
}  // namespace trn::kernels
