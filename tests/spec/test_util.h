// Helpers shared by the spec tests: paths into the source tree and loading a chip that must load.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "trn/spec/loader.h"

namespace trn::spec::testing {

/// Absolute path of a file in the source tree.
inline std::string sourcePath(const std::string& relative) {
  return std::string(TRN_SOURCE_DIR) + "/" + relative;
}

/// Absolute path of tests/spec/bad/<name>.
inline std::string badFile(const std::string& name) {
  return sourcePath("tests/spec/bad/" + name);
}

/// Loads a chip that is expected to load; fails the test otherwise.
inline ChipSpec mustLoad(const std::string& nameOrPath) {
  Result<ChipSpec> spec = loadChip(nameOrPath);
  EXPECT_TRUE(spec.ok()) << spec.status().toString();
  return spec.ok() ? std::move(spec).value() : ChipSpec{};
}

}  // namespace trn::spec::testing
