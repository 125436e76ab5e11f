// The fused_mamba tutorial ports: each version against the float64 reference at the tutorial's
// default shapes and at two batches of another shape; the three versions bit-identical to each
// other, as the tutorial's accuracy mode asserts of the hardware; the tutorial's shape
// requirements as errors at the kernel's check line.
#include "trn/kernels/mamba_tutorial.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../kernel/kernel_test_util.h"
#include "trn/harness/check.h"
#include "trn/kernels/registry.h"
#include "trn/runtime/session.h"
#include "trn/spec/loader.h"

namespace trn::kernels {
namespace {

std::vector<kernel::TensorSpec> specsFor(std::int64_t batch, std::int64_t channels,
                                         std::int64_t seqLen, std::int64_t states) {
  return {{"delta", {batch, channels, seqLen}, DType::kFp32},
          {"u", {batch, channels, seqLen}, DType::kFp32},
          {"A", {channels, states}, DType::kFp32},
          {"B", {batch, states, seqLen}, DType::kFp32},
          {"C", {batch, states, seqLen}, DType::kFp32}};
}

Result<harness::CheckResult> run(const std::string& name,
                                 const std::vector<kernel::TensorSpec>& specs) {
  return harness::checkKernel(kernel::testutil::trn2Session(), *findKernel(name), specs);
}

TEST(MambaTutorial, EveryVersionMatchesTheReferenceAndTheOthersBitForBit) {
  for (const auto& specs : {findKernel("mamba_v1")->defaultInputs, specsFor(2, 128, 1024, 5)}) {
    std::vector<std::vector<double>> outputs;
    for (const std::string name : {"mamba_v1", "mamba_v2", "mamba_v3"}) {
      SCOPED_TRACE(name + " at " + formatShape(specs[0].shape));
      auto result = run(name, specs);
      ASSERT_TRUE(result.ok()) << result.status().toString();
      EXPECT_TRUE(result->pass) << result->comparisons[0].failures << " elements outside; max abs "
                                << result->comparisons[0].maxAbsError;
      outputs.push_back(result->outputs[0].values);
    }
    // The same products and sums in the same order: v2 only reorders loads, and v3's scan
    // carries its fp32 state exactly from one sequence tile into the next.
    EXPECT_EQ(outputs[1], outputs[0]);
    EXPECT_EQ(outputs[2], outputs[0]);
  }
}

TEST(MambaTutorial, V2SpillsOnTrn1AtLongSequencesAndStaysBitIdentical) {
  // At 7168 steps seven 28 KiB tiles are live at the B product, more than Trn1's 192 KiB per
  // partition: v2 compiles with spills (C reloaded from its source before the C product), and
  // its output is still the float64 reference's within tolerance and v3's bit for bit (v3 works
  // on 512-step slices and does not spill). At 8192 steps (32 KiB tiles) six are too many in the
  // first state: B's row leaves before delta * u and comes back for the B product, u leaves
  // after delta * u to make room for it and is reloaded for the second state (4 MiB), and C's
  // row is reloaded before each C product; in the second state u dies at delta * u, whose
  // result takes its space, and only C leaves. 4 MiB + 3 x 32 KiB in all (storing and reloading
  // the 4 MiB accumulator instead would move 8 MiB).
  auto trn1 = spec::loadChip("trn1");
  ASSERT_TRUE(trn1.ok()) << trn1.status().toString();
  const runtime::Session session(std::make_shared<const spec::ChipSpec>(std::move(trn1).value()));
  for (const std::int64_t seqLen : {7168, 8192}) {
    const std::vector<kernel::TensorSpec> specs = specsFor(1, 128, seqLen, 2);
    std::vector<std::vector<double>> outputs;
    for (const std::string name : {"mamba_v2", "mamba_v3"}) {
      SCOPED_TRACE(name + " at " + std::to_string(seqLen) + " steps");
      auto result = harness::checkKernel(session, *findKernel(name), specs);
      ASSERT_TRUE(result.ok()) << result.status().toString();
      EXPECT_TRUE(result->pass) << result->comparisons[0].failures << " elements outside";
      EXPECT_EQ(result->compiled->summary.spills > 0, name == "mamba_v2");
      if (name == "mamba_v2" && seqLen == 8192) {
        EXPECT_EQ(result->compiled->summary.spills, 4);
        EXPECT_EQ(result->compiled->summary.spillBytes, 128 * 8192 * 4 + 3 * 8192 * 4);
      }
      outputs.push_back(result->outputs[0].values);
    }
    EXPECT_EQ(outputs[0], outputs[1]);
  }
}

TEST(MambaTutorial, TheTutorialsShapeRequirementsAreErrorsAtTheCheckLine) {
  auto ragged = run("mamba_v2", specsFor(1, 200, 1024, 4));
  ASSERT_FALSE(ragged.ok());
  EXPECT_NE(ragged.status().message().find(
                "mamba_v2: channels (200) must be a multiple of 128, as in the tutorial"),
            std::string::npos)
      << ragged.status().message();
  EXPECT_NE(ragged.status().message().find("mamba_tutorial.cpp:"), std::string::npos)
      << ragged.status().message();
  auto shortTile = run("mamba_v3", specsFor(1, 128, 1000, 4));
  ASSERT_FALSE(shortTile.ok());
  EXPECT_NE(shortTile.status().message().find("seq_len (1000) must be a multiple of 512"),
            std::string::npos)
      << shortTile.status().message();
  std::vector<kernel::TensorSpec> mismatched = specsFor(1, 128, 1024, 4);
  mismatched[3].shape = {1, 5, 1024};
  auto bad = run("mamba_v1", mismatched);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("do not agree"), std::string::npos)
      << bad.status().message();
}

}  // namespace
}  // namespace trn::kernels
