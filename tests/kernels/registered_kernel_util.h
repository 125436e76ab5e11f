// Helpers the tests of registered reference kernels share: run a kernel by name through
// checkKernel (functional+timing, race detection on) or timing-only, and compile one expecting
// an error.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "../kernel/kernel_test_util.h"
#include "trn/harness/check.h"
#include "trn/kernels/registry.h"

namespace trn::kernels::testutil {

/// The registered kernel `name` (fails the test when it is missing).
inline const KernelEntry& entryNamed(const std::string& name) {
  const KernelEntry* entry = findKernel(name);
  EXPECT_NE(entry, nullptr) << name;
  static const KernelEntry kMissing{};
  return entry != nullptr ? *entry : kMissing;
}

/// "x [130, 64] bf16, w [64] bf16" for failure messages.
inline std::string describeSpecs(const std::vector<kernel::TensorSpec>& specs) {
  std::string text;
  for (const kernel::TensorSpec& s : specs) {
    text += (text.empty() ? "" : ", ") + s.name + " " + formatShape(s.shape) + " " +
            std::string(dtypeName(s.dtype));
  }
  return text;
}

/// Runs `name` at `specs` on seeded inputs in functional+timing mode with race detection and
/// expects every output within `tolerance` (the entry's when not given).
inline void expectMatchesReference(const std::string& name,
                                   const std::vector<kernel::TensorSpec>& specs,
                                   std::optional<Tolerance> tolerance = std::nullopt,
                                   std::uint64_t seed = 1) {
  SCOPED_TRACE(name + " at " + describeSpecs(specs));
  harness::CheckOptions options;
  options.tolerance = tolerance;
  options.run.seed = seed;
  auto result = harness::checkKernel(kernel::testutil::trn2Session(), entryNamed(name), specs, options);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  for (const Comparison& c : result->comparisons) {
    EXPECT_TRUE(c.pass) << c.failures << " elements outside the tolerance; max abs error "
                        << c.maxAbsError << ", max rel error " << c.maxRelError
                        << ", worst element " << c.worstElement;
  }
  EXPECT_TRUE(result->pass);
}

/// Runs `name` at `specs` in timing-only mode (race detection on).
inline harness::CheckResult timingOnly(const std::string& name,
                              const std::vector<kernel::TensorSpec>& specs) {
  harness::CheckOptions options;
  options.run.mode = core::RunMode::kTimingOnly;
  auto result = harness::checkKernel(kernel::testutil::trn2Session(), entryNamed(name), specs, options);
  EXPECT_TRUE(result.ok()) << result.status().toString();
  return result.ok() ? *std::move(result) : harness::CheckResult{};
}

/// The error text of compiling `name` at `specs` ("" when it compiles).
inline std::string compileError(const std::string& name,
                                const std::vector<kernel::TensorSpec>& specs) {
  auto compiled = kernel::compile(entryNamed(name).def, specs, kernel::testutil::limits());
  return compiled.ok() ? std::string() : compiled.status().toString();
}

}  // namespace trn::kernels::testutil
