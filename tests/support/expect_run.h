// Test support: run a program on a fresh functional core inside a GoogleTest test, reporting a
// failure (with the program text) instead of returning an error.
#pragma once

#include <gtest/gtest.h>

#include <string_view>

#include "run_program.h"

namespace trn::testing {

/// runProgram, expecting success; on failure records it and returns no outputs.
inline TensorBytes run(std::string_view text, const TensorBytes& inputs,
                       const core::CoreOptions& options = {}) {
  Result<TensorBytes> out = runProgram(text, inputs, options);
  EXPECT_TRUE(out.ok()) << out.status().toString() << "\n" << text;
  return out.ok() ? *out : TensorBytes{};
}

}  // namespace trn::testing
