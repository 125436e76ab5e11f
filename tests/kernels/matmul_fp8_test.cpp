// Tests of matmul_fp8_scaled: at full, ragged and tail-only shapes in functional+timing mode with
// race detection, every element within the fp32-accumulation bound of the float64 reference of
// the fp8-rounded inputs; clear errors for bad operands; and in timing-only mode at a large shape
// the double-row kernel beats the bf16 matmul_optimised by the factor the PE spec gives.
#include "trn/kernels/matmul_fp8.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "../kernel/kernel_test_util.h"
#include "registered_kernel_util.h"
#include "trn/harness/check.h"
#include "trn/kernels/registry.h"

namespace trn::kernels {
namespace {

using kernel::TensorSpec;
using kernel::testutil::trn2;

const KernelEntry& entry() { return testutil::entryNamed("matmul_fp8_scaled"); }

std::vector<TensorSpec> specs(std::int64_t k, std::int64_t m, std::int64_t n,
                              DType lhsType = DType::kFp8E4m3, DType rhsType = DType::kFp8E4m3) {
  return {{"lhsT", {k, m}, lhsType}, {"rhs", {k, n}, rhsType}, {"scale", {n}, DType::kFp32}};
}

/// Runs the kernel at `s` and checks it two ways: the registry's allclose tolerance, and per
/// element the rigorous bound of the arithmetic. Each fp8 x fp8 product is exact in fp32 (4-bit
/// significands give an 8-bit product, and exponents stay in fp32's range), so the only errors
/// are the K - 1 fp32 additions, |err| <= (K - 1) u sum_k |a_k b_k| with u = 2^-24, each
/// contribution scaled by |scale| and then one more fp32 rounding of the product with the scale
/// (u |ref|).
void checkShape(const std::vector<TensorSpec>& s, std::uint64_t seed,
                const KernelEntry& kernelEntry = entry()) {
  const std::int64_t k = s[0].shape[0];
  const std::int64_t m = s[0].shape[1];
  const std::int64_t n = s[1].shape[1];
  SCOPED_TRACE("K=" + std::to_string(k) + " M=" + std::to_string(m) + " N=" + std::to_string(n));
  harness::CheckOptions options;
  options.run.seed = seed;
  auto result = harness::checkKernel(kernel::testutil::trn2Session(), kernelEntry, s, options);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  ASSERT_EQ(result->comparisons.size(), 1u);
  EXPECT_TRUE(result->pass) << "max abs error " << result->comparisons[0].maxAbsError;
  const HostTensor& lhsT = result->inputs[0];
  const HostTensor& rhs = result->inputs[1];
  const HostTensor& scale = result->inputs[2];
  const HostTensor& out = result->outputs[0];
  const double u = std::ldexp(1.0, -24);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double exact = 0.0;
      double magnitude = 0.0;
      for (std::int64_t p = 0; p < k; ++p) {
        const double product = lhsT[p * m + i] * rhs[p * n + j];
        exact += product;
        magnitude += std::abs(product);
      }
      exact *= scale[j];
      const double bound =
          static_cast<double>(k - 1) * u * magnitude * std::abs(scale[j]) + u * std::abs(exact);
      ASSERT_LE(std::abs(out[i * n + j] - exact), bound)
          << "out[" << i << ", " << j << "] = " << out[i * n + j] << ", reference " << exact;
    }
  }
}

TEST(MatmulFp8Kernel, OneDoubleRowTileMatchesReference) { checkShape(specs(256, 128, 512), 1); }

TEST(MatmulFp8Kernel, RaggedShapesMatchReference) {
  // K = 2 x 256 + 128: double-row tiles and one full single-row tail; M, N not tile multiples.
  checkShape(specs(640, 129, 513), 2);
  // K = 256 + 44: a short tail; several lhsT blocks and rhs panels are not needed here, but the
  // last M and N tiles are ragged.
  checkShape(specs(300, 200, 700), 3);
  // K = 2 x 256 + 128 + 72: two tail tiles.
  checkShape(specs(712, 64, 96), 4);
}

TEST(MatmulFp8Kernel, TailOnlyContractionMatchesReference) {
  // K < 256: no double-row tile at all, only single-row fp8 matmuls.
  checkShape(specs(100, 64, 300), 5);
}

TEST(MatmulFp8Kernel, SeveralPanelsAndBlocksMatchReference) {
  // Small groups: three rhs panels (512, 512, 76 columns) and three lhsT blocks (128, 128, 44),
  // so the even/odd buffers alternate and every panel after the first is prefetched.
  KernelEntry small = entry();
  small.def = kernel::makeKernel(
      "matmul_fp8_scaled_small_groups",
      [](kernel::Kernel& k, kernel::Tensor lhsT, kernel::Tensor rhs, kernel::Tensor scale) {
        return matmulFp8Scaled(k, lhsT, rhs, scale, {.panelN = 512, .blockM = 128});
      });
  checkShape(specs(640, 300, 1100), 6, small);
  // One panel wider than the 512-column PSUM tile with two blocks: the defaults at K = 384.
  checkShape(specs(384, 600, 1100), 8);
}

TEST(MatmulFp8Kernel, MixedE4m3AndE5m2MatchReference) {
  checkShape(specs(384, 130, 520, DType::kFp8E4m3, DType::kFp8E5m2), 7);
}

/// The compile error for `s`, or "" if it compiled.
std::string compileError(const std::vector<TensorSpec>& s) {
  auto compiled = kernel::compile(entry().def, s, kernel::testutil::limits());
  return compiled.ok() ? std::string() : compiled.status().toString();
}

TEST(MatmulFp8Kernel, BadOperandsGiveClearErrors) {
  struct Bad {
    std::vector<TensorSpec> specs;
    std::string message;
  };
  const std::vector<Bad> cases = {
      {{{"lhsT", {256, 128, 1}, DType::kFp8E4m3},
        {"rhs", {256, 512}, DType::kFp8E4m3},
        {"scale", {512}, DType::kFp32}},
       "takes 2-D lhsT [K, M], 2-D rhs [K, N] and 1-D scale [N]"},
      {{{"lhsT", {256, 128}, DType::kFp8E4m3},
        {"rhs", {384, 512}, DType::kFp8E4m3},
        {"scale", {512}, DType::kFp32}},
       "lhsT has K = 256 rows but rhs has 384"},
      {{{"lhsT", {256, 128}, DType::kFp8E4m3},
        {"rhs", {256, 512}, DType::kFp8E4m3},
        {"scale", {500}, DType::kFp32}},
       "scale has 500 entries but rhs has N = 512 columns"},
      {specs(256, 128, 512, DType::kBf16, DType::kFp8E4m3), "must be fp8_e4m3 or fp8_e5m2"},
      {{{"lhsT", {256, 128}, DType::kFp8E4m3},
        {"rhs", {256, 512}, DType::kFp8E4m3},
        {"scale", {512}, DType::kBf16}},
       "scale must be fp32"},
      {specs(kMatmulFp8MaxK + 128, 128, 512), "K = 16512 exceeds 16384"},
  };
  for (const Bad& bad : cases) {
    const std::string error = compileError(bad.specs);
    EXPECT_NE(error.find(bad.message), std::string::npos) << error;
    EXPECT_NE(error.find("matmul_fp8.cpp:"), std::string::npos) << error;
  }
  // The largest K still fits SBUF with 512-column panels.
  EXPECT_EQ(compileError(specs(kMatmulFp8MaxK, 300, 1100)), "");
}

/// The timing-only report of registered kernel `name` at `s`.
profile::Report timedReport(const std::string& name, const std::vector<TensorSpec>& s) {
  const KernelEntry* e = findKernel(name);
  EXPECT_NE(e, nullptr);
  harness::CheckOptions options;
  options.run.mode = core::RunMode::kTimingOnly;
  auto result = harness::checkKernel(kernel::testutil::trn2Session(), *e, s, options);
  EXPECT_TRUE(result.ok()) << result.status().toString();
  return result.ok() ? result->report : profile::Report{};
}

// At K = M = N = 4096 the double-row kernel is PE-bound and takes about half the time the bf16
// kernel takes at best. The spec numbers: a bf16 matmul [128 x 128] x [128 x 512] and a double-row
// fp8 matmul [128 x 2 x 128] x [128 x 2 x 512] both take max(64, 512) = 512 PE cycles at 2.4 GHz,
// the second doing twice the work: the PE needs 2 K M N / (2 x 78.6e12) = 874 us for fp8
// against 1748 us for bf16. The fp8 kernel's other work stays below that: its DMA moves the fp32
// result (64 MiB), rhs once (16 MiB) and lhsT once per 1536-column rhs panel (3 x 16 MiB), 128
// MiB at the 368 GB/s core DMA peak = 365 us at full efficiency and under 550 us with the 256 B
// per-descriptor cost of its 512 B and 2 KiB descriptors; the vector engine's PSUM evacuation is
// 512 cycles at 0.96 GHz per output tile against 16 x 512 PE cycles at 2.4 GHz. So the fp8
// kernel should stay within 10 % of its PE bound (the first column piece of the operands loads
// before the first matmul, the last store follows the last matmul, and the PE throttle ramps for
// 3 us); the bf16 kernel cannot beat its own PE bound, so the ratio is at least 2 / 1.1. Against
// the BF16 peak the fp8 kernel's PE utilisation is then above 2 / 1.1 = 1.8, which no single-row
// matmul can reach.
TEST(MatmulFp8Kernel, DoubleRowIsTwiceAsFastAsBf16) {
  constexpr std::int64_t kSize = 4096;
  const profile::Report fp8 = timedReport("matmul_fp8_scaled", specs(kSize, kSize, kSize));
  const profile::Report bf16 =
      timedReport("matmul_optimised",
                  {{"lhsT", {kSize, kSize}, DType::kBf16}, {"rhs", {kSize, kSize}, DType::kBf16}});
  ASSERT_GT(fp8.total.count(), 0);
  ASSERT_GT(bf16.total.count(), 0);
  const double pePeakSeconds = 2.0 * kSize * kSize * kSize / (2.0 * fp8.peBf16PeakTflops * 1e12);
  const double fp8Seconds = static_cast<double>(fp8.total.count()) * 1e-12;
  EXPECT_GE(fp8Seconds, pePeakSeconds);
  EXPECT_LE(fp8Seconds, 1.1 * pePeakSeconds);
  const double bf16Seconds = static_cast<double>(bf16.total.count()) * 1e-12;
  EXPECT_GE(bf16Seconds, 2.0 * pePeakSeconds);
  EXPECT_GE(bf16Seconds / fp8Seconds, 2.0 / 1.1);
  EXPECT_GT(fp8.peUtilisation, bf16.peUtilisation);
  EXPECT_GT(fp8.peUtilisation, 1.8);
  EXPECT_EQ(fp8.criticalEngine, "pe");
}

}  // namespace
}  // namespace trn::kernels
