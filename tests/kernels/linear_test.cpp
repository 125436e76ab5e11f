// Tests of the projection kernels linear and linear_residual: checked against their float64
// references (functional+timing, race detection on) at aligned and ragged shapes, several token
// blocks, bf16 and fp32; bad inputs are rejected at the kernel's check line; and at the Llama
// qkv shape the simulated time stays within a bound derived from the tensor-engine work.
#include "trn/kernels/linear.h"

#include <gtest/gtest.h>

#include <cmath>
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
  std::int64_t k = 0;
  std::int64_t n = 0;
};

std::vector<kernel::TensorSpec> specsFor(const Shape& shape, DType dtype, bool residual) {
  std::vector<kernel::TensorSpec> specs = {{"x", {shape.s, shape.k}, dtype},
                                           {"w", {shape.k, shape.n}, dtype}};
  if (residual) {
    specs.push_back({"r", {shape.s, shape.n}, dtype});
  }
  return specs;
}

/// fp32 operands: products rounded to fp32 and fp32 sums over K <= 1100 terms of magnitude
/// |x w| <= sqrt(3) * sqrt(3 / K): the error stays below K 2^-24 sum|x w| ~ 1e-4 and is
/// ~sqrt(K) 2^-24 in practice; rtol covers the result's own fp32 rounding.
constexpr Tolerance kFp32Tolerance{1e-5, 1e-5};

/// Checks the registered kernel `name` at `shape` (the entry's tolerance for bf16).
void expectMatches(const std::string& name, const Shape& shape, DType dtype) {
  const KernelEntry* entry = findKernel(name);
  ASSERT_NE(entry, nullptr) << name;
  SCOPED_TRACE(name + " S=" + std::to_string(shape.s) + " K=" + std::to_string(shape.k) +
               " N=" + std::to_string(shape.n) + (dtype == DType::kBf16 ? " bf16" : " fp32"));
  harness::CheckOptions options;
  if (dtype == DType::kFp32) {
    options.tolerance = kFp32Tolerance;
  }
  auto result = harness::checkKernel(kernel::testutil::trn2Session(), *entry, specsFor(shape, dtype, name == "linear_residual"), options);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  ASSERT_EQ(result->comparisons.size(), 1u);
  const Comparison& c = result->comparisons[0];
  EXPECT_TRUE(result->pass) << c.failures << " elements outside the tolerance; max abs error "
                            << c.maxAbsError << ", max rel error " << c.maxRelError
                            << ", worst element " << c.worstElement;
  EXPECT_EQ(result->outputs[0].shape, (std::vector<std::int64_t>{shape.s, shape.n}));
}

/// Runs `name` on fp32 inputs at `shape` with --auto-cast matmult into `type`, checked at fp32
/// tolerance against the reference at operands rounded to `type` (what the harness compares under
/// auto-cast).
Result<harness::CheckResult> runAutoCast(const std::string& name, const Shape& shape,
                                         DType type = DType::kBf16) {
  harness::CheckOptions options;
  options.compile.autoCast = {kernel::AutoCast::kMatmult, type};
  options.tolerance = kFp32Tolerance;
  return harness::checkKernel(kernel::testutil::trn2Session(), *findKernel(name),
                              specsFor(shape, DType::kFp32, name == "linear_residual"), options);
}

TEST(LinearKernel, AutoCastMultipliesFp32TensorsInItsTypeWithFp32Accumulation) {
  for (const DType type : {DType::kBf16, DType::kFp16, DType::kTf32, DType::kFp8E4m3}) {
    for (const std::string name : {"linear", "linear_residual"}) {
      SCOPED_TRACE(name + " in " + std::string(dtypeName(type)));
      auto result = runAutoCast(name, {200, 300, 700}, type);
      ASSERT_TRUE(result.ok()) << result.status().toString();
      const Comparison& c = result->comparisons[0];
      // Within fp32 rounding of the rounded operands' products (a product of two such operands
      // is exact in fp32): every operand was rounded exactly as the reference rounds it, once,
      // and the sums stayed fp32.
      EXPECT_TRUE(result->pass) << c.failures << " elements outside; max abs error "
                                << c.maxAbsError;
      // Against the products of the unrounded fp32 inputs the error is the type's, far outside.
      const std::vector<HostTensor> exact = findKernel(name)->reference(result->inputs);
      const Comparison unrounded = compare(result->outputs[0], exact[0], kFp32Tolerance);
      EXPECT_FALSE(unrounded.pass);
    }
  }
}

TEST(LinearKernel, AutoCastGivesTheTensorEngineTheWorkOfBf16Inputs) {
  // Under auto-cast the tensor engine runs exactly the bf16 run's transposes and matmuls (the
  // casts run on the vector and scalar engines): the same instructions, and the same busy time
  // but for the power throttle's stretch, which follows the schedule; the fp32 run's matmuls
  // take four passes.
  const Shape shape{256, 512, 1024};
  const KernelEntry& entry = *findKernel("linear");
  auto peBusy = [&](DType dtype, kernel::AutoCast autoCast) {
    harness::CheckOptions options;
    options.run.mode = core::RunMode::kTimingOnly;
    options.compile.autoCast = autoCast;
    auto result = harness::checkKernel(kernel::testutil::trn2Session(), entry,
                                       specsFor(shape, dtype, false), options);
    EXPECT_TRUE(result.ok()) << result.status().toString();
    return result.ok() ? result->stats.engines[static_cast<std::size_t>(isa::Engine::kPe)]
                       : core::EngineTotals{};
  };
  const core::EngineTotals bf16 = peBusy(DType::kBf16, kernel::AutoCast::kNone);
  const core::EngineTotals cast = peBusy(DType::kFp32, kernel::AutoCast::kMatmult);
  const core::EngineTotals fp32 = peBusy(DType::kFp32, kernel::AutoCast::kNone);
  EXPECT_EQ(cast.instructions, bf16.instructions);
  EXPECT_NEAR(static_cast<double>(cast.busy.count()), static_cast<double>(bf16.busy.count()),
              0.005 * static_cast<double>(bf16.busy.count()));
  EXPECT_GT(fp32.busy.count(), 3 * bf16.busy.count());
}

TEST(LinearKernel, AutoCastOfAKernelThatDoesNotCastIsAnError) {
  harness::CheckOptions options;
  options.compile.autoCast = kernel::AutoCast::kMatmult;
  const KernelEntry& entry = *findKernel("matmul_basic");
  auto result =
      harness::checkKernel(kernel::testutil::trn2Session(), entry, entry.defaultInputs, options);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("'matmul_basic' does not auto-cast"), std::string::npos)
      << result.status().message();
  EXPECT_NE(result.status().message().find("linear, linear_residual, swiglu_mlp"),
            std::string::npos)
      << result.status().message();
}

TEST(LinearKernel, MatchesReferenceAtAlignedShapes) {
  expectMatches("linear", {256, 256, 1024}, DType::kBf16);
  expectMatches("linear", {128, 512, 512}, DType::kBf16);
}

TEST(LinearKernel, MatchesReferenceAtRaggedShapes) {
  expectMatches("linear", {200, 300, 700}, DType::kBf16);
  expectMatches("linear", {1, 77, 5}, DType::kBf16);
  expectMatches("linear", {130, 129, 513}, DType::kFp32);
}

TEST(LinearKernel, MatchesReferenceOverSeveralTokenBlocks) {
  // 700 tokens: a block of 512 and a ragged one of 188; fp32 with K = 1100 makes the blocks
  // 256 tokens (the x^T budget), so three blocks, the last ragged.
  expectMatches("linear", {700, 256, 600}, DType::kBf16);
  expectMatches("linear", {600, 1100, 130}, DType::kFp32);
}

TEST(LinearResidualKernel, MatchesReference) {
  expectMatches("linear_residual", {256, 256, 1024}, DType::kBf16);
  expectMatches("linear_residual", {200, 300, 700}, DType::kBf16);
  expectMatches("linear_residual", {130, 129, 513}, DType::kFp32);
  expectMatches("linear_residual", {600, 256, 520}, DType::kBf16);
}

/// The compile error for `specs`, or "" when it compiles.
std::string compileError(const std::string& name, const std::vector<kernel::TensorSpec>& specs) {
  const KernelEntry* entry = findKernel(name);
  EXPECT_NE(entry, nullptr) << name;
  auto compiled = kernel::compile(entry->def, specs, kernel::testutil::limits());
  return compiled.ok() ? std::string() : compiled.status().toString();
}

TEST(LinearKernel, RejectsBadInputsAtItsCheckLine) {
  const std::string rank =
      compileError("linear", {{"x", {512}, DType::kBf16}, {"w", {512, 64}, DType::kBf16}});
  EXPECT_NE(rank.find("linear: takes 2-D x [S, K], w [K, N]; got x [512]"), std::string::npos)
      << rank;
  EXPECT_NE(rank.find("linear.cpp:"), std::string::npos) << rank;
  const std::string k =
      compileError("linear", {{"x", {64, 100}, DType::kBf16}, {"w", {128, 64}, DType::kBf16}});
  EXPECT_NE(k.find("x [64, 100] has K = 100 columns but w [128, 64] has 128 rows"),
            std::string::npos)
      << k;
  const std::string dtype =
      compileError("linear", {{"x", {64, 128}, DType::kBf16}, {"w", {128, 64}, DType::kFp32}});
  EXPECT_NE(dtype.find("must all be bf16 or all fp32"), std::string::npos) << dtype;
  const std::string residual = compileError("linear_residual", {{"x", {64, 128}, DType::kBf16},
                                                                {"w", {128, 96}, DType::kBf16},
                                                                {"r", {64, 64}, DType::kBf16}});
  EXPECT_NE(residual.find("linear_residual: the residual r [64, 64] must be [S, N] = [64, 96]"),
            std::string::npos)
      << residual;
  EXPECT_NE(residual.find("linear.cpp:"), std::string::npos) << residual;
}

// At the Llama qkv shape (x [512, 2048] @ w [2048, 2560], bf16) the kernel is bound by the
// tensor engine. Its work: 4 x 16 x 5 matmuls of 512 moving columns (512 cycles each at 2.4 GHz)
// = 68.3 us, plus 64 transposes of 128 cycles = 3.4 us. The DMA engines move w (10.5 MB in 1 KiB
// rows: 256 B of descriptor cost per row, 13.1 MB of engine time), x (2.1 MB, 2.6 MB) and out
// (2.6 MB, 3.3 MB): 19 MB at 368 GB/s = 52 us, well under the tensor engine. What the tensor
// engine cannot hide: the first x column block and weight group (1 MiB) behind the 1.3 us DMA
// fixed cost (~4.2 us), the power-throttle ramp after idle (~0.75 us), and the last evacuation
// and store (~1.8 us): ~78.5 us in all. Allowing 10 % over that: at most 86 us, MFU >= 0.79 and
// the tensor engine busy >= 71.7 / 86 = 83 % of the time.
TEST(LinearKernel, QkvShapeIsBoundByTheTensorEngine) {
  const KernelEntry* entry = findKernel("linear");
  ASSERT_NE(entry, nullptr);
  harness::CheckOptions options;
  options.run.mode = core::RunMode::kTimingOnly;
  auto result = harness::checkKernel(kernel::testutil::trn2Session(), *entry, entry->defaultInputs, options);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_LE(result->report.total.count(), 86'000'000);
  EXPECT_GE(result->mfu, 0.79);
  EXPECT_EQ(result->report.criticalEngine, "pe");
  EXPECT_GE(result->report.engines[static_cast<std::size_t>(isa::Engine::kPe)].busyFraction, 0.83);
}

}  // namespace
}  // namespace trn::kernels
