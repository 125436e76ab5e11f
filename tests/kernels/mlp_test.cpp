// Tests of the fused SwiGLU MLP kernel swiglu_mlp: checked against its float64 reference
// (functional+timing, race detection on) at aligned and ragged shapes, several token blocks,
// bf16 and fp32; bad inputs are rejected at the kernel's check line; and at the TinyLlama shape
// the simulated time stays within a bound derived from the tensor-engine work.
#include "trn/kernels/mlp.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../kernel/kernel_test_util.h"
#include "trn/harness/check.h"
#include "trn/kernels/registry.h"

namespace trn::kernels {
namespace {

using kernel::testutil::trn2;

struct Shape {
  std::int64_t s = 0;
  std::int64_t h = 0;
  std::int64_t f = 0;
};

std::vector<kernel::TensorSpec> specsFor(const Shape& shape, DType dtype) {
  return {{"x", {shape.s, shape.h}, dtype},
          {"wg", {shape.h, shape.f}, dtype},
          {"wu", {shape.h, shape.f}, dtype},
          {"wd", {shape.f, shape.h}, dtype},
          {"r", {shape.s, shape.h}, dtype}};
}

/// fp32: every product and sum rounded to fp32 (relative 2^-24 per operation over H + F terms of
/// unit-scale values), silu evaluated to fp32 and h kept in fp32: errors ~1e-6.
constexpr Tolerance kFp32Tolerance{1e-5, 1e-5};

void expectMatches(const Shape& shape, DType dtype) {
  const KernelEntry* entry = findKernel("swiglu_mlp");
  ASSERT_NE(entry, nullptr);
  SCOPED_TRACE("S=" + std::to_string(shape.s) + " H=" + std::to_string(shape.h) +
               " F=" + std::to_string(shape.f) + (dtype == DType::kBf16 ? " bf16" : " fp32"));
  harness::CheckOptions options;
  if (dtype == DType::kFp32) {
    options.tolerance = kFp32Tolerance;
  }
  auto result = harness::checkKernel(kernel::testutil::trn2Session(), *entry, specsFor(shape, dtype), options);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  ASSERT_EQ(result->comparisons.size(), 1u);
  const Comparison& c = result->comparisons[0];
  EXPECT_TRUE(result->pass) << c.failures << " elements outside the tolerance; max abs error "
                            << c.maxAbsError << ", max rel error " << c.maxRelError
                            << ", worst element " << c.worstElement;
  EXPECT_EQ(result->outputs[0].shape, (std::vector<std::int64_t>{shape.s, shape.h}));
}

TEST(SwigluMlpKernel, MatchesReferenceAtAlignedShapes) {
  expectMatches({256, 256, 512}, DType::kBf16);
}

TEST(SwigluMlpKernel, MatchesReferenceAtRaggedShapes) {
  expectMatches({200, 300, 700}, DType::kBf16);
  // Two down-projection column tiles (512 + 128) and three gate blocks (the last of 76 columns).
  expectMatches({128, 640, 1100}, DType::kBf16);
  expectMatches({130, 129, 260}, DType::kFp32);
}

TEST(SwigluMlpKernel, AutoCastMultipliesFp32TensorsInBf16) {
  // The four matrices' products in bf16 (h rounded to bf16 between them), judged as a bf16 run
  // against the reference at bf16-rounded x, wg, wu and wd; r is added in fp32.
  harness::CheckOptions options;
  options.compile.autoCast = kernel::AutoCast::kMatmult;
  auto result = harness::checkKernel(kernel::testutil::trn2Session(), *findKernel("swiglu_mlp"),
                                     specsFor({130, 129, 260}, DType::kFp32), options);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_TRUE(result->pass) << result->comparisons[0].failures << " elements outside";
  EXPECT_EQ(result->tolerance.rtol, findKernel("swiglu_mlp")->tolerance.rtol);
}

TEST(SwigluMlpKernel, MatchesReferenceOverSeveralTokenBlocks) {
  expectMatches({600, 256, 384}, DType::kBf16);
}

TEST(SwigluMlpKernel, RejectsBadInputsAtItsCheckLine) {
  const KernelEntry* entry = findKernel("swiglu_mlp");
  ASSERT_NE(entry, nullptr);
  auto error = [&](std::vector<kernel::TensorSpec> specs) {
    auto compiled = kernel::compile(entry->def, specs, kernel::testutil::limits());
    return compiled.ok() ? std::string() : compiled.status().toString();
  };
  std::vector<kernel::TensorSpec> specs = specsFor({64, 128, 256}, DType::kBf16);
  specs[3].shape = {128, 256};  // wd [H, F] instead of [F, H]
  const std::string shape = error(specs);
  EXPECT_NE(shape.find("swiglu_mlp: shapes do not match x [S, H], wg [H, F], wu [H, F], wd [F, "
                       "H], r [S, H] with H = 128 (x's columns) and F = 256 (wg's columns); got "
                       "x [64, 128], wg [128, 256], wu [128, 256], wd [128, 256], r [64, 128]"),
            std::string::npos)
      << shape;
  EXPECT_NE(shape.find("mlp.cpp:"), std::string::npos) << shape;
  specs = specsFor({64, 128, 256}, DType::kBf16);
  specs[4].shape = {64, 128, 1};
  const std::string rank = error(specs);
  EXPECT_NE(rank.find("swiglu_mlp: takes 2-D x [S, H]"), std::string::npos) << rank;
  specs = specsFor({64, 128, 256}, DType::kBf16);
  specs[2].dtype = DType::kFp32;
  const std::string dtype = error(specs);
  EXPECT_NE(dtype.find("must all be bf16 or all fp32"), std::string::npos) << dtype;
}

// At the TinyLlama MLP shape (S = 512, H = 2048, F = 5632, bf16) the kernel is bound by the
// tensor engine: (44 x 16 x 2 gate/up + 4 x 44 x 4 down) matmuls of 512 moving columns at
// 2.4 GHz = 450.6 us, plus 3.4 us of x transposes. The DMA engines move the weights once
// (69.2 MB in 1 KiB rows, 86.5 MB of engine time with the descriptor cost) and x, r, out
// (~8 MB): ~257 us at 368 GB/s, under the tensor engine. Before the first gate chunk can finish,
// all of x (2 MiB) and the first 128 columns of wg and wu (1 MiB in 256 B rows, 2 MiB of engine
// time) must arrive: ~11 us at most, less as the tensor engine starts on what has landed; plus
// the throttle ramp and the final evacuation and store (~2.5 us): ~468 us. Allowing 5 %: at most
// 490 us, MFU >= 450.6 / 490 = 0.92.
TEST(SwigluMlpKernel, DemoShapeIsBoundByTheTensorEngine) {
  const KernelEntry* entry = findKernel("swiglu_mlp");
  ASSERT_NE(entry, nullptr);
  harness::CheckOptions options;
  options.run.mode = core::RunMode::kTimingOnly;
  auto result = harness::checkKernel(kernel::testutil::trn2Session(), *entry, entry->defaultInputs, options);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_LE(result->report.total.count(), 490'000'000);
  EXPECT_GE(result->mfu, 0.92);
  EXPECT_EQ(result->report.criticalEngine, "pe");
}

}  // namespace
}  // namespace trn::kernels
