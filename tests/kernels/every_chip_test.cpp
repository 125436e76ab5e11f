// Every reference kernel on every chip description: each compiles at its default shapes for trn1,
// trn2 and trn3 (the lowering chosen from the chip's features and limits) and runs timing-only
// without a verifier error, race or deadlock; the kernels whose lowering differs by chip are
// also checked for numerics there against their float64 references.
#include <gtest/gtest.h>

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

TEST(EveryChip, Fp8MatmulWithoutDoubleRowOnTrn1MatchesTheReference) {
  // Trn1 has no double-row mode: each pair of K tiles is two plain fp8 matmuls. K = 300 takes
  // one pair and a 44-row tail.
  expectMatchesOn("trn1", "matmul_fp8_scaled",
                  {{"lhsT", {300, 200}, DType::kFp8E4m3},
                   {"rhs", {300, 700}, DType::kFp8E4m3},
                   {"scale", {700}, DType::kFp32}});
}

TEST(EveryChip, LayerNormWithOneMatmulOverSeveralPsumBanksOnTrn3MatchesTheReference) {
  // On Trn3 a tensor-engine result may span PSUM banks (core.pe.output_spans_banks): the row
  // mean of 1500 columns is one matmul into 6 KB of PSUM.
  expectMatchesOn("trn3", "layernorm",
                  {{"x", {200, 1500}, DType::kFp32},
                   {"gamma", {1500}, DType::kFp32},
                   {"beta", {1500}, DType::kFp32}});
}

}  // namespace
}  // namespace trn::kernels
