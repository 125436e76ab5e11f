// Test support for the DMA and Scalar-engine golden tests: a runner that reports errors as test
// failures, and decoding of whole output tensors with the independent float model
// (tests/support/float_model.h).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "float_model.h"
#include "expect_run.h"
#include "run_program.h"

namespace trn::isa::testref {

using testing::decode;
using testing::Format;
using testing::kBf16;
using testing::kFp16;
using testing::kFp32;
using testing::kFp8E4m3;
using testing::kFp8E5m2;
using testing::neighbours;
using testing::roundNearestEven;
using testing::run;
using testing::spacing;

/// Element i of little-endian storage of `bytesPerElement`-byte elements as an integer.
inline std::uint32_t rawElement(const std::vector<std::byte>& bytes, std::size_t i,
                                int bytesPerElement) {
  std::uint32_t v = 0;
  std::memcpy(&v, bytes.data() + i * static_cast<std::size_t>(bytesPerElement),
              static_cast<std::size_t>(bytesPerElement));
  return v;
}

/// Decodes every element of `bytes` in format `f` (element width from the format).
inline std::vector<double> decodeAll(const std::vector<std::byte>& bytes, Format f) {
  const int width = (1 + f.exponentBits + f.mantissaBits) / 8;
  std::vector<double> out(bytes.size() / static_cast<std::size_t>(width));
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = decode(rawElement(bytes, i, width), f);
  }
  return out;
}

/// Expects `got` to equal `want` exactly, treating any NaN as equal to any NaN and telling
/// +0 from -0.
inline void expectSameValue(double got, double want, const std::string& where) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << where << ": got " << got << ", want NaN";
    return;
  }
  EXPECT_EQ(got, want) << where;
  EXPECT_EQ(std::signbit(got), std::signbit(want)) << where << ": sign of " << got;
}

}  // namespace trn::isa::testref
