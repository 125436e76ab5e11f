// Every reference kernel on every chip description: each compiles at its default shapes for trn1,
// trn2 and trn3 (the lowering chosen from the chip's features and limits) and runs timing-only
// without a verifier error, race or deadlock, and matches its float64 reference at shapes that
// are no multiple of any tile on each of them. Two lowerings differ by chip: matmul_fp8_scaled
// without the double-row mode on trn1 (its K = 300 is one pair of K tiles, two plain matmuls,
// and a 44-row tail), and layernorm's row mean as one matmul over several PSUM banks on trn3
// (1500 fp32 columns, core.pe.output_spans_banks).
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "trn/harness/check.h"
#include "trn/kernels/registry.h"
#include "trn/runtime/session.h"
#include "trn/spec/loader.h"

namespace trn::kernels {
namespace {

/// A session on the chip called `name`, opened once per chip.
const runtime::Session& sessionFor(const std::string& name) {
  static std::vector<std::pair<std::string, std::unique_ptr<runtime::Session>>> sessions;
  for (const auto& [chip, session] : sessions) {
    if (chip == name) {
      return *session;
    }
  }
  Result<spec::ChipSpec> loaded = spec::loadChip(name);
  EXPECT_TRUE(loaded.ok()) << loaded.status().toString();
  sessions.emplace_back(name,
                        std::make_unique<runtime::Session>(
                            std::make_shared<const spec::ChipSpec>(std::move(loaded).value())));
  return *sessions.back().second;
}

TEST(EveryChip, EveryKernelCompilesAndRunsOnTrn1Trn2AndTrn3) {
  for (const std::string chip : {"trn1", "trn2", "trn3"}) {
    for (const KernelEntry& entry : referenceKernels()) {
      SCOPED_TRACE(entry.name + " on " + chip);
      harness::CheckOptions options;
      options.run.mode = core::RunMode::kTimingOnly;
      auto result = harness::checkKernel(sessionFor(chip), entry, entry.defaultInputs, options);
      ASSERT_TRUE(result.ok()) << result.status().toString();
      EXPECT_GT(result->stats.total.count(), 0);
    }
  }
}

/// Shapes that are no multiple of any tile (128 partitions, 512 columns, 2 x 128 fp8 rows), by
/// kernel and input; the inputs keep their default dtypes. matmul_basic is one fixed tile, and
/// the mamba tutorial ports keep the tutorial's multiples of 128 channels and 512 steps.
const std::map<std::string, std::map<std::string, std::vector<std::int64_t>>>& oddShapes() {
  const std::map<std::string, std::vector<std::int64_t>> mambaShapes = {{"delta", {2, 128, 512}},
                                                                        {"u", {2, 128, 512}},
                                                                        {"A", {128, 5}},
                                                                        {"B", {2, 5, 512}},
                                                                        {"C", {2, 5, 512}}};
  static const std::map<std::string, std::map<std::string, std::vector<std::int64_t>>> shapes = {
      {"avgpool2d", {{"x", {100, 30, 22}}}},
      {"flash_attention", {{"q", {6, 300, 64}}, {"k", {2, 300, 64}}, {"v", {2, 300, 64}}}},
      {"flash_attention_full", {{"q", {6, 300, 64}}, {"k", {2, 300, 64}}, {"v", {2, 300, 64}}}},
      {"layernorm", {{"x", {200, 1500}}, {"gamma", {1500}}, {"beta", {1500}}}},
      {"layernorm_bn", {{"x", {200, 1500}}, {"gamma", {1500}}, {"beta", {1500}}}},
      {"layernorm_tutorial_v1", {{"x", {200, 1500}}, {"gamma", {1500}}, {"beta", {1500}}}},
      {"layernorm_tutorial_v2", {{"x", {200, 1500}}, {"gamma", {1500}}, {"beta", {1500}}}},
      {"linear", {{"x", {200, 300}}, {"w", {300, 700}}}},
      {"linear_residual", {{"x", {200, 300}}, {"w", {300, 700}}, {"r", {200, 700}}}},
      {"mamba_v1", mambaShapes},
      {"mamba_v2", mambaShapes},
      {"mamba_v3", mambaShapes},
      {"matmul_basic", {}},
      {"matmul_blocked", {{"lhsT", {300, 200}}, {"rhs", {300, 700}}}},
      {"matmul_fp8_scaled", {{"lhsT", {300, 200}}, {"rhs", {300, 700}}, {"scale", {700}}}},
      {"matmul_hoisted", {{"lhsT", {300, 200}}, {"rhs", {300, 700}}}},
      {"matmul_optimised", {{"lhsT", {300, 200}}, {"rhs", {300, 700}}}},
      {"matmul_tiled", {{"lhsT", {300, 200}}, {"rhs", {300, 700}}}},
      {"rmsnorm", {{"x", {200, 1500}}, {"w", {1500}}}},
      {"rope", {{"x", {6, 300, 64}}, {"cos", {300, 32}}, {"sin", {300, 32}}}},
      {"selective_scan",
       {{"delta", {100, 300}},
        {"u", {100, 300}},
        {"A", {100, 16}},
        {"B", {16, 300}},
        {"C", {16, 300}}}},
      {"softmax", {{"x", {200, 1500}}}},
      {"swiglu_mlp",
       {{"x", {130, 129}},
        {"wg", {129, 260}},
        {"wu", {129, 260}},
        {"wd", {260, 129}},
        {"r", {130, 129}}}},
      {"tensor_add", {{"a", {130, 70}}, {"b", {130, 70}}}},
      {"transpose2d", {{"x", {100, 30, 20}}}},
  };
  return shapes;
}

/// Checks `name` on `chip` at `specs` against its float64 reference.
void expectMatchesOn(const std::string& chip, const std::string& name,
                     const std::vector<kernel::TensorSpec>& specs) {
  SCOPED_TRACE(name + " on " + chip);
  auto result = harness::checkKernel(sessionFor(chip), *findKernel(name), specs);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  ASSERT_TRUE(result->checked);
  EXPECT_TRUE(result->pass) << result->comparisons[0].failures << " elements outside; max abs "
                            << result->comparisons[0].maxAbsError;
}

TEST(EveryChip, EveryKernelMatchesItsReferenceAtOddShapesOnEveryChip) {
  for (const KernelEntry& entry : referenceKernels()) {
    const auto odd = oddShapes().find(entry.name);
    ASSERT_NE(odd, oddShapes().end()) << "no odd shapes listed for " << entry.name;
    std::vector<kernel::TensorSpec> specs = entry.defaultInputs;
    for (kernel::TensorSpec& spec : specs) {
      if (const auto shape = odd->second.find(spec.name); shape != odd->second.end()) {
        spec.shape = shape->second;
      }
    }
    for (const std::string chip : {"trn1", "trn2", "trn3"}) {
      expectMatchesOn(chip, entry.name, specs);
    }
  }
}

// Rows longer than the prefetch ring fits (before 2026-12-03 these spilled, and the spilling pass
// lowered them to an invalid program): layernorm_bn at D = 8192 fp32 needs its x tiles, gamma,
// beta, the normalised tile and the output (224 KiB per partition with two tiles loaded ahead)
// and prefetches less on Trn1's 192 KiB instead of overflowing SBUF, as rmsnorm does at long bf16
// rows, and tensor_add tiles its columns; they match their references on both chips, and
// layernorm_bn runs at the layernorm tutorial's 4096 rows. Rows no kernel design here tiles (the
// layer norms at D = 12345 fp32: gamma and beta alone take 96 KiB per partition) are a located
// error at the kernel's line, never an internal one; softmax at 40,000 fp32 fits by spilling.
TEST(EveryChip, LongRowsPrefetchLessOrSayTheyDoNotFit) {
  const auto rows = [](std::int64_t n, std::int64_t d) {
    return std::vector<kernel::TensorSpec>{
        {"x", {n, d}, DType::kFp32}, {"gamma", {d}, DType::kFp32}, {"beta", {d}, DType::kFp32}};
  };
  for (const std::string chip : {"trn1", "trn2"}) {
    expectMatchesOn(chip, "layernorm_bn", rows(300, 8192));
    // bf16 rows of 20,000: three tiles ahead would need 156 KiB with w, scaled and out 117 KiB.
    expectMatchesOn(chip, "rmsnorm",
                    {{"x", {300, 20000}, DType::kBf16}, {"w", {20000}, DType::kBf16}});
    // tensor_add cuts rows into tiles of 8192 columns: 60,000 fp32 would be 240 KiB a row.
    expectMatchesOn(chip, "tensor_add",
                    {{"a", {130, 60000}, DType::kFp32}, {"b", {130, 60000}, DType::kFp32}});
    SCOPED_TRACE(chip);
    harness::CheckOptions options;
    options.run.mode = core::RunMode::kTimingOnly;
    auto result =
        harness::checkKernel(sessionFor(chip), *findKernel("layernorm_bn"), rows(4096, 8192), options);
    ASSERT_TRUE(result.ok()) << result.status().toString();
  }
  for (const std::string name : {"layernorm", "layernorm_bn", "layernorm_tutorial_v1"}) {
    SCOPED_TRACE(name);
    auto result = harness::checkKernel(sessionFor("trn1"), *findKernel(name), rows(333, 12345));
    ASSERT_FALSE(result.ok());
    const std::string error = result.status().toString();
    EXPECT_NE(error.find("normalization.cpp:"), std::string::npos) << error;
    EXPECT_NE(error.find("sbuf is full"), std::string::npos) << error;
  }
  // Softmax rows of 40,000 fp32: a tile takes 160,000 of trn1's 196,608 bytes per partition, so
  // the prefetched second row tile (x[128:130]) fits only where the first is: the first leaves
  // (its clean load, no store) and comes back for its reductions, and the second leaves in turn
  // until its own: each reloaded once from x, 130 x 40,000 x 4 bytes in all.
  const std::vector<kernel::TensorSpec> longSoftmaxRows = {{"x", {130, 40000}, DType::kFp32}};
  auto softmax =
      harness::checkKernel(sessionFor("trn1"), *findKernel("softmax"), longSoftmaxRows);
  ASSERT_TRUE(softmax.ok()) << softmax.status().toString();
  EXPECT_TRUE(softmax->pass) << softmax->comparisons[0].failures << " elements outside";
  EXPECT_EQ(softmax->compiled->summary.spills, 2);
  EXPECT_EQ(softmax->compiled->summary.spillBytes, 130 * 40000 * 4);
}

}  // namespace
}  // namespace trn::kernels
