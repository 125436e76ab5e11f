// The float64 references' building blocks: the allclose comparison, input rounding, the BLAS
// product and the blocked attention reference, each against a definition written out here.
#include "trn/kernels/reference.h"

#include <gtest/gtest.h>

#include <cmath>

#include "trn/kernels/attention.h"

namespace trn::kernels {
namespace {

HostTensor vec(std::vector<double> values) {
  const auto n = static_cast<std::int64_t>(values.size());
  return HostTensor{{n}, std::move(values)};
}

TEST(KernelReference, CompareUsesAtolPlusRtolTimesReference) {
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

TEST(KernelReference, NanAndShapeMismatchFail) {
  const Comparison nan = compare(vec({NAN, 1.0}), vec({0.0, 1.0}), {1.0, 1.0});
  EXPECT_FALSE(nan.pass);
  EXPECT_EQ(nan.failures, 1);
  EXPECT_EQ(nan.worstElement, 0);
  const Comparison shape = compare(vec({1.0}), vec({1.0, 2.0}), {1.0, 1.0});
  EXPECT_FALSE(shape.pass);
  EXPECT_EQ(shape.failures, 2);
}

TEST(KernelReference, InputsAreRoundedToTheirDtype) {
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

TEST(KernelReference, MatmulReferencesAgree) {
  const HostTensor aT{{2, 3}, {1, 2, 3, 4, 5, 6}};  // a = [[1,4],[2,5],[3,6]]
  const HostTensor b{{2, 2}, {1, 0, 0, 2}};
  const HostTensor c = matmulTransposedA(aT, b);
  EXPECT_EQ(c.shape, (std::vector<std::int64_t>{3, 2}));
  EXPECT_EQ(c.values, (std::vector<double>{1, 8, 2, 10, 3, 12}));
  const HostTensor a{{3, 2}, {1, 4, 2, 5, 3, 6}};
  EXPECT_EQ(matmul(a, b).values, c.values);
}

TEST(KernelReference, GemmTransposesBAndAccumulatesWithBeta) {
  const std::vector<double> a = {1, 2, 3, 4, 5, 6};  // [2, 3]
  const std::vector<double> bT = {1, 0, 1, 0, 1, 0};  // b^T [2, 3]: b = [[1,0],[0,1],[1,0]]
  std::vector<double> c = {10, 20, 30, 40};
  gemm({.m = 2, .n = 2, .k = 3, .transposeB = true, .beta = 1.0}, a.data(), bT.data(), c.data());
  EXPECT_EQ(c, (std::vector<double>{10 + 4, 20 + 2, 30 + 10, 40 + 5}));
}

TEST(KernelReference, AttentionReferenceMatchesTheDefinitionAcrossRowBlocks) {
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

}  // namespace
}  // namespace trn::kernels
