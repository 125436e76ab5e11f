// The entry point every fuzz target defines (libFuzzer's), and the checks they share. A target
// feeds its bytes to one reader of user input and asserts the reader's contract: it either
// returns a located error or a value that survives a round trip; a crash, an abort, a sanitizer
// report or a hang is a finding. The same sources build two ways: with clang's
// -fsanitize=fuzzer for `make fuzz`, and with replay_main.cpp as an ordinary program that runs
// the seed and regression corpora as tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "trn/base/check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace trn::fuzz {

/// The input as text.
inline std::string_view asText(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace trn::fuzz
