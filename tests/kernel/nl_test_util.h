// Shared helpers of the nl-level API tests (nl_test.cpp, nl_tensor_test.cpp): compile a kernel
// for trn2, run it with race detection and poison on, and compare its outputs with float64
// references within stated tolerances.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "trn/kernel/compiler.h"
#include "trn/kernel/nl.h"
#include "trn/runtime/host_io.h"
#include "trn/runtime/session.h"
#include "trn/spec/loader.h"

namespace trn::kernel::nltest {

using testutil::limits;
using testutil::randomValues;
using testutil::trn2;

inline constexpr double kFp32Eps = 1.0 / (1 << 24);  // unit roundoff of fp32 (half an ulp at 1)

/// x rounded to bfloat16 (nearest even), as the runner stores a float input of a bf16 tensor.
inline float bf16(float x) {
  auto u = std::bit_cast<std::uint32_t>(x);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return std::bit_cast<float>(u & 0xFFFF0000u);
}

struct Input {
  std::vector<std::int64_t> shape;
  std::vector<float> values;
  DType dtype = DType::kFp32;
};

inline std::int64_t count(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (const std::int64_t d : shape) {
    n *= d;
  }
  return n;
}

/// Compiles `def` for trn2, runs it with race detection and poison on, and returns its outputs as
/// floats (empty after a reported failure).
inline std::vector<std::vector<float>> run(const KernelDef& def, const std::vector<Input>& inputs) {
  std::vector<TensorSpec> specs;
  std::vector<runtime::NpyArray> arrays;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    specs.push_back({"in" + std::to_string(i), inputs[i].shape, inputs[i].dtype});
    arrays.push_back(runtime::floatArray(inputs[i].shape, inputs[i].values));
  }
  auto compiled = compile(def, specs, limits());
  if (!compiled.ok()) {
    ADD_FAILURE() << def.name << ": " << compiled.status().toString();
    return {};
  }
  runtime::RunOptions options;
  options.mode = core::RunMode::kFunctionalTiming;
  EXPECT_TRUE(options.poison && options.detectRaces);
  auto result = kernel::testutil::trn2Session().runKernel(*compiled, arrays, options);
  if (!result.ok()) {
    ADD_FAILURE() << def.name << ": " << result.status().toString();
    return {};
  }
  std::vector<std::vector<float>> outputs;
  for (const runtime::NpyArray& out : result->outputs) {
    outputs.push_back(runtime::floatValues(out));
  }
  return outputs;
}

/// The single output of `def`.
inline std::vector<float> runOne(const KernelDef& def, const std::vector<Input>& inputs) {
  auto outputs = run(def, inputs);
  return outputs.size() == 1 ? outputs[0] : std::vector<float>{};
}

/// Every out[i] within `ulps` fp32 ulps of float(ref[i]) (0: equal); NaN matches NaN.
inline void expectUlps(const std::vector<float>& out, const std::vector<double>& ref, int ulps,
                       const std::string& what) {
  ASSERT_EQ(out.size(), ref.size()) << what;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto r = static_cast<float>(ref[i]);
    if (std::isnan(r) && std::isnan(out[i])) {
      continue;
    }
    const float ulp = std::nextafter(std::fabs(r), INFINITY) - std::fabs(r);
    ASSERT_LE(std::fabs(out[i] - r), ulps * ulp)
        << what << " element " << i << ": got " << out[i] << ", expected " << ref[i];
  }
}

/// |out[i] - ref[i]| <= atol + rtol * |ref[i]|.
inline void expectClose(const std::vector<float>& out, const std::vector<double>& ref, double rtol,
                        double atol, const std::string& what) {
  ASSERT_EQ(out.size(), ref.size()) << what;
  for (std::size_t i = 0; i < out.size(); ++i) {
    ASSERT_LE(std::fabs(out[i] - ref[i]), atol + rtol * std::fabs(ref[i]))
        << what << " element " << i << ": got " << out[i] << ", expected " << ref[i];
  }
}

/// The error message of compiling `def` (which must fail) with fp32 inputs of `shapes`.
inline std::string compileError(const KernelDef& def,
                                const std::vector<std::vector<std::int64_t>>& shapes) {
  std::vector<TensorSpec> specs;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    specs.push_back({"in" + std::to_string(i), shapes[i], DType::kFp32});
  }
  auto compiled = compile(def, specs, limits());
  EXPECT_FALSE(compiled.ok());
  return compiled.ok() ? std::string() : compiled.status().message();
}

/// `line` is read after the message was produced (the kernel sets it while tracing).
inline void expectErrorAt(const std::string& message, const int* line,
                          std::initializer_list<std::string_view> fragments) {
  const std::string prefix = "nl_test.cpp:" + std::to_string(*line) + ":";
  EXPECT_EQ(message.rfind(prefix, 0), 0u) << "expected prefix '" << prefix << "' in: " << message;
  for (const std::string_view f : fragments) {
    EXPECT_NE(message.find(f), std::string::npos) << "missing '" << f << "' in: " << message;
  }
}

}  // namespace trn::kernel::nltest
