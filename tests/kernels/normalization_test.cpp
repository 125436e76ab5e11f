// Tests of the normalisation kernels (layernorm, layernorm_bn, the layernorm tutorial's two
// ports, rmsnorm): each runs at full and
// ragged shapes (rows not a multiple of 128, D not a multiple of 512) in fp32 and bf16 against the
// float64 reference; bad shapes fail at the kernel's line; RMS norm at the Llama demo shape is
// bound by its DMA traffic, and the bn_stats layer norm beats the nl-level one.
#include "trn/kernels/normalization.h"

#include <gtest/gtest.h>

#include "registered_kernel_util.h"

namespace trn::kernels {
namespace {

using testutil::compileError;
using testutil::expectMatchesReference;
using testutil::timingOnly;

/// fp32 outputs: no final rounding to bf16, so only the fp32 statistics' error remains (sums
/// over D <= 4096 terms: at most D 2^-24 <= 2^-12 relative).
constexpr Tolerance kFp32RmsNorm{0.0, 0x1p-12};
constexpr Tolerance kFp32LayerNorm{2 * 0x1p-12, 0x1p-12};

std::vector<kernel::TensorSpec> normSpecs(std::int64_t n, std::int64_t d, DType dtype,
                                          bool withBeta) {
  std::vector<kernel::TensorSpec> specs = {{"x", {n, d}, dtype}, {"gamma", {d}, dtype}};
  if (withBeta) {
    specs.push_back({"beta", {d}, dtype});
  }
  return specs;
}

TEST(NormalizationKernels, RmsNormMatchesReference) {
  expectMatchesReference("rmsnorm", normSpecs(300, 1000, DType::kBf16, false));
  expectMatchesReference("rmsnorm", normSpecs(128, 2048, DType::kBf16, false));
  expectMatchesReference("rmsnorm", normSpecs(1, 8, DType::kBf16, false));
  expectMatchesReference("rmsnorm", normSpecs(200, 96, DType::kFp16, false));
  expectMatchesReference("rmsnorm", normSpecs(130, 700, DType::kFp32, false), kFp32RmsNorm);
}

TEST(NormalizationKernels, LayerNormMatchesReference) {
  expectMatchesReference("layernorm", normSpecs(300, 700, DType::kFp32, true), kFp32LayerNorm);
  expectMatchesReference("layernorm", normSpecs(130, 1100, DType::kBf16, true));
  expectMatchesReference("layernorm", normSpecs(5, 64, DType::kFp32, true), kFp32LayerNorm);
}

TEST(NormalizationKernels, LayerNormBnMatchesReference) {
  // D = 1100: bn_stats records of 512, 512 and 76 columns.
  expectMatchesReference("layernorm_bn", normSpecs(300, 1100, DType::kFp32, true), kFp32LayerNorm);
  expectMatchesReference("layernorm_bn", normSpecs(130, 2048, DType::kBf16, true));
  expectMatchesReference("layernorm_bn", normSpecs(7, 100, DType::kFp32, true), kFp32LayerNorm);
}

// The layernorm tutorial's two kernels as ported (normalization.h): ragged rows, D not a multiple
// of bn_stats' 512 columns, fp32 and bf16.
TEST(NormalizationKernels, LayerNormTutorialPortsMatchReference) {
  for (const std::string name : {"layernorm_tutorial_v1", "layernorm_tutorial_v2"}) {
    SCOPED_TRACE(name);
    expectMatchesReference(name, normSpecs(300, 1100, DType::kFp32, true), kFp32LayerNorm);
    expectMatchesReference(name, normSpecs(130, 700, DType::kBf16, true));
    expectMatchesReference(name, normSpecs(5, 64, DType::kFp32, true), kFp32LayerNorm);
  }
}

TEST(NormalizationKernels, BadShapesFailAtTheKernelLine) {
  std::string error =
      compileError("rmsnorm", {{"x", {128, 64}, DType::kBf16}, {"w", {32}, DType::kBf16}});
  EXPECT_NE(error.find("normalization.cpp:"), std::string::npos) << error;
  EXPECT_NE(error.find("rmsnorm: a parameter vector has 32 elements but x has D = 64"),
            std::string::npos)
      << error;
  error = compileError("rmsnorm", {{"x", {8192}, DType::kBf16}, {"w", {8192}, DType::kBf16}});
  EXPECT_NE(error.find("rmsnorm: x must be 2-D, not [8192]"), std::string::npos) << error;
  error = compileError("layernorm_bn", {{"x", {128, 64}, DType::kFp32},
                                        {"gamma", {64}, DType::kFp32},
                                        {"beta", {64, 1}, DType::kFp32}});
  EXPECT_NE(error.find("normalization.cpp:"), std::string::npos) << error;
  EXPECT_NE(error.find("layernorm_bn: each parameter vector must be 1-D, not [64, 1]"),
            std::string::npos)
      << error;
  error = compileError("layernorm", {{"x", {128, 64}, DType::kInt32},
                                     {"gamma", {64}, DType::kFp32},
                                     {"beta", {64}, DType::kFp32}});
  EXPECT_NE(error.find("layernorm: x must be fp32, bf16 or fp16"), std::string::npos) << error;
}

// The Llama demo's RMS norm (x [512, 2048] bf16) moves 2 MiB in and 2 MiB out (the weight is
// one 4 KiB row, repeated onto the partitions by the tensor engine). At the core's DMA peak (16
// engines x 23 B/ns = 368 GB/s) with 4 KiB rows (efficiency 4096 / (4096 + 256) = 94%) that takes
// 12.1 us. Per 128-row tile the engines need less than the tile's 2.9 us of DMA (scalar engine:
// 2048 squares at 1.2 GHz, 1.7 us; vector engine and GpSimd: 2 passes over 910 and 1138 columns,
// 0.95 us each), so what stays exposed is the pipeline's fill and drain: the DMA fixed cost
// (1.3 us) of the first load and of the last store, and the last tile's compute (about 3.7 us).
// DMA must be the critical engine and the run within 15% of the sum of those.
TEST(NormalizationKernels, RmsNormAtTheLlamaShapeIsDmaBound) {
  const harness::CheckResult run =
      timingOnly("rmsnorm", {{"x", {512, 2048}, DType::kBf16}, {"w", {2048}, DType::kBf16}});
  const double bytes = 2.0 * 512 * 2048 * 2;
  const double dmaSeconds = bytes / (368e9 * 4096.0 / (4096.0 + 256.0));
  const double expected = dmaSeconds + 2 * 1.3e-6 + 3.7e-6;
  const double seconds = static_cast<double>(run.report.total.count()) * 1e-12;
  EXPECT_GT(seconds, dmaSeconds);
  EXPECT_LT(seconds, 1.15 * expected) << "simulated " << seconds * 1e6 << " us";
  EXPECT_EQ(run.report.criticalEngine, "dma");
}

// The tutorial's point: bn_stats/bn_aggr and a fused tensor_scalar beat the nl-level version,
// which makes a separate vector-engine pass for every nl call (mean, var, subtract, multiply,
// gamma, beta).
TEST(NormalizationKernels, BnStatsLayerNormIsFasterThanTheNlVersion) {
  const std::vector<kernel::TensorSpec> specs = normSpecs(1024, 2048, DType::kFp32, true);
  const harness::CheckResult nl = timingOnly("layernorm", specs);
  const harness::CheckResult bn = timingOnly("layernorm_bn", specs);
  EXPECT_LT(bn.report.total.count() * 3, nl.report.total.count() * 2)
      << "layernorm_bn " << bn.report.total.count() / 1000000.0 << " us, layernorm "
      << nl.report.total.count() / 1000000.0 << " us";
  EXPECT_EQ(bn.report.criticalEngine, "dma");
}

// The tutorial measured v2 14.9 % faster than v1 on Trn1 (docs/fidelity.md); the ports keep the
// order: v2 replaces v1's separate mean and mean-of-squares passes and its subtract and multiply
// with bn_stats and one two-stage tensor_scalar.
TEST(NormalizationKernels, LayerNormTutorialV2IsFasterThanV1) {
  const std::vector<kernel::TensorSpec> specs = normSpecs(1024, 2048, DType::kFp32, true);
  const harness::CheckResult v1 = timingOnly("layernorm_tutorial_v1", specs);
  const harness::CheckResult v2 = timingOnly("layernorm_tutorial_v2", specs);
  EXPECT_LT(v2.report.total.count(), v1.report.total.count());
}

}  // namespace
}  // namespace trn::kernels
