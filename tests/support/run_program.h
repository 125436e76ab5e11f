// Test support: run a program given as text on a fresh core and collect its outputs,
// plus small helpers to move typed host arrays in and out of raw tensor bytes.
#pragma once

#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/core/neuron_core.h"

namespace trn::testing {

using TensorBytes = std::map<std::string, std::vector<std::byte>, std::less<>>;

/// Parses `text`, loads `inputs` (raw little-endian bytes by tensor name), runs, and returns the
/// bytes of every tensor declared `output`. Without a chip in `options` the run is timed on trn2.
Result<TensorBytes> runProgram(std::string_view text, const TensorBytes& inputs,
                               const core::CoreOptions& options = {});

template <typename T>
std::vector<std::byte> toBytes(const std::vector<T>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <typename T>
std::vector<T> fromBytes(const std::vector<std::byte>& bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

}  // namespace trn::testing
