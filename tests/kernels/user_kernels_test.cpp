// User kernels (registry.h registerKernel, what plugins use): a registered kernel is found by
// name after the reference kernels and checked by the harness like them; entries without a
// name, body, inputs or reference, and names already taken, are refused with a message.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "../kernel/kernel_test_util.h"
#include "trn/harness/check.h"
#include "trn/kernels/elementwise.h"
#include "trn/kernels/registry.h"

namespace trn::kernels {
namespace {

/// a + b with tensor_add's body, under a name of its own.
KernelEntry userAdd(std::string name) {
  KernelEntry entry;
  entry.name = std::move(name);
  entry.summary = "a + b (a user kernel)";
  entry.defaultInputs = {{"a", {130, 64}, DType::kFp32}, {"b", {130, 64}, DType::kFp32}};
  entry.def = kernel::makeKernel("user_add", tensorAdd);
  entry.reference = [](std::span<const HostTensor> in) {
    HostTensor out = in[0];
    for (std::int64_t i = 0; i < out.size(); ++i) {
      out[i] += in[1][i];
    }
    return std::vector<HostTensor>{out};
  };
  entry.tolerance = {0.0, 0x1p-24};
  return entry;
}

TEST(UserKernels, ARegisteredKernelIsFoundAndChecked) {
  ASSERT_TRUE(registerKernel(userAdd("user_add_checked")).ok());
  const KernelEntry* entry = findKernel("user_add_checked");
  ASSERT_NE(entry, nullptr);
  const std::vector<const KernelEntry*> users = userKernels();
  EXPECT_NE(std::find(users.begin(), users.end(), entry), users.end());
  EXPECT_EQ(std::count_if(referenceKernels().begin(), referenceKernels().end(),
                          [](const KernelEntry& k) { return k.name == "user_add_checked"; }),
            0);
  const Result<harness::CheckResult> result = harness::checkKernel(
      kernel::testutil::trn2Session(), *entry, entry->defaultInputs, harness::CheckOptions{});
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_TRUE(result->checked);
  EXPECT_TRUE(result->pass);
  ASSERT_EQ(result->comparisons.size(), 1u);
  EXPECT_EQ(result->comparisons[0].failures, 0);
  EXPECT_GT(result->report.total.count(), 0);
}

TEST(UserKernels, InvalidEntriesAndTakenNamesAreRefused) {
  ASSERT_TRUE(registerKernel(userAdd("user_add_once")).ok());
  const auto refused = [](KernelEntry entry, const std::string& expected) {
    const Status status = registerKernel(std::move(entry));
    ASSERT_FALSE(status.ok()) << expected;
    EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(status.message().find(expected), std::string::npos) << status.message();
  };
  refused(userAdd("user_add_once"), "user kernel 'user_add_once' is registered already");
  refused(userAdd("tensor_add"), "user kernel 'tensor_add': a reference kernel has that name");
  refused(userAdd(""), "a user kernel's name must be non-empty");
  refused(userAdd("has space"), "not 'has space'");
  KernelEntry noBody = userAdd("user_no_body");
  noBody.def.body = nullptr;
  refused(std::move(noBody), "user kernel 'user_no_body' has no kernel body");
  KernelEntry noReference = userAdd("user_no_reference");
  noReference.reference = nullptr;
  refused(std::move(noReference), "has no float64 reference");
  KernelEntry noInputs = userAdd("user_no_inputs");
  noInputs.defaultInputs.clear();
  refused(std::move(noInputs), "has no default inputs");
  EXPECT_EQ(findKernel("user_no_body"), nullptr);
}

}  // namespace
}  // namespace trn::kernels
