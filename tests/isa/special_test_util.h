// Test support for the tensor-engine, special vector and GpSimd instruction tests: program-text
// snippets that move tiles between HBM and SBUF, a runner that reports errors as test failures,
// a verifier probe, and an independent float64 model of the narrow float formats (decoding and
// round-to-nearest-even encoding written from the IEEE-754 rules, not from src/numerics).
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "float_model.h"
#include "expect_run.h"
#include "run_program.h"
#include "trn/isa/program_text.h"
#include "trn/isa/verifier.h"

namespace trn::isa::special_test {

using testing::TensorBytes;

// ---- program snippets ----

/// ".tensor NAME KIND DTYPE [P, F]".
inline std::string tensorDecl(std::string_view name, std::string_view kind, std::string_view dtype,
                              std::int64_t p, std::int64_t f) {
  return fmt::format(".tensor {} {} {} [{}, {}]\n", name, kind, dtype, p, f);
}

/// SBUF (or PSUM) pattern text of a contiguous [p, f] tile at partition `p0`, byte `offset`.
inline std::string tile(std::string_view memory, std::int64_t p0, std::int64_t p,
                        std::int64_t offset, std::string_view dtype, std::int64_t f) {
  return fmt::format("{}[{}:{}]+{}:{}[[1,{}]]", memory, p0, p0 + p, offset, dtype, f);
}

/// Declares input `name` [p, f] and DMAs it to SBUF partitions [p0, p0+p) at `offset`, signalling
/// s0 when done.
inline std::string load(std::string_view name, std::string_view dtype, std::int64_t p0,
                        std::int64_t p, std::int64_t f, std::int64_t offset) {
  return tensorDecl(name, "input", dtype, p, f) +
         fmt::format("sp: dma_copy dst={} src=hbm:{}:{}[[{},{}],[1,{}]] signal(s0+=1)\n",
                     tile("sbuf", p0, p, offset, dtype, f), name, dtype, f, p, f);
}

/// Declares output `name` [p, f] and DMAs it from SBUF once s9 >= `ready`.
inline std::string store(std::string_view name, std::string_view dtype, std::int64_t p0,
                         std::int64_t p, std::int64_t f, std::int64_t offset, int ready = 1) {
  return tensorDecl(name, "output", dtype, p, f) +
         fmt::format("sp: dma_copy dst=hbm:{}:{}[[{},{}],[1,{}]] src={} wait(s9>={})\n", name,
                     dtype, f, p, f, tile("sbuf", p0, p, offset, dtype, f), ready);
}

using testing::run;

/// The error of running `text` (an empty string when it ran).
inline std::string runError(std::string_view text, const TensorBytes& inputs) {
  Result<TensorBytes> out = testing::runProgram(text, inputs, {});
  return out.ok() ? std::string() : out.status().toString();
}

/// The verifier's message for a one-instruction program (empty when it passes).
inline std::string verifyError(std::string_view line, const CoreLimits& limits = {}) {
  Result<Program> program = parseProgramText(line, "v.tasm");
  if (!program.ok()) {
    return "parse: " + program.status().toString();
  }
  const Status status = verifyProgram(*program, limits);
  return status.ok() ? std::string() : status.toString();
}

/// Expects verification of `line` to fail with a message containing every fragment.
inline void expectRejected(std::string_view line, std::initializer_list<std::string_view> fragments,
                           const CoreLimits& limits = {}) {
  const std::string message = verifyError(line, limits);
  ASSERT_FALSE(message.empty()) << "accepted: " << line;
  for (const std::string_view fragment : fragments) {
    EXPECT_NE(message.find(fragment), std::string::npos)
        << "missing '" << fragment << "' in: " << message;
  }
}

// ---- raw element bytes ----

template <typename T>
std::vector<std::byte> bytesOf(const std::vector<T>& values) {
  return testing::toBytes(values);
}

template <typename T>
std::vector<T> valuesOf(const std::vector<std::byte>& bytes) {
  return testing::fromBytes<T>(bytes);
}

// ---- the independent float model (tests/support/float_model.h) ----

using testing::decode;
using testing::encodeRne;
using testing::Format;
using testing::kBf16;
using testing::kFp16;
using testing::kFp32;
using testing::kFp8E4m3;
using testing::kFp8E5m2;
using testing::kTf32;

/// Random finite codes of `f` with magnitudes in [2^lowExp, 2^highExp) (or zero), as storage
/// words (tf32 shifted up), plus their values.
struct Samples {
  std::vector<std::uint32_t> storage;
  std::vector<double> values;
};
inline Samples randomValues(Format f, std::size_t n, int lowExp, int highExp, std::mt19937& rng) {
  Samples s;
  std::uniform_real_distribution<double> exponent(lowExp, highExp);
  std::uniform_int_distribution<int> coin(0, 1);
  for (std::size_t i = 0; i < n; ++i) {
    const double magnitude = std::exp2(exponent(rng));
    const std::uint32_t code = encodeRne(coin(rng) != 0 ? -magnitude : magnitude, f);
    s.storage.push_back(code << f.storageShift);
    s.values.push_back(decode(code, f));
  }
  return s;
}

/// Little-endian storage of `words`, `width` bytes each.
inline std::vector<std::byte> packWords(const std::vector<std::uint32_t>& words, int width) {
  std::vector<std::byte> bytes(words.size() * static_cast<std::size_t>(width));
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::memcpy(&bytes[i * static_cast<std::size_t>(width)], &words[i],
                static_cast<std::size_t>(width));
  }
  return bytes;
}

/// The `width`-byte little-endian words of `bytes`.
inline std::vector<std::uint32_t> unpackWords(const std::vector<std::byte>& bytes, int width) {
  std::vector<std::uint32_t> words(bytes.size() / static_cast<std::size_t>(width));
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::memcpy(&words[i], &bytes[i * static_cast<std::size_t>(width)],
                static_cast<std::size_t>(width));
  }
  return words;
}

/// fp32 bit pattern of `x`.
inline std::uint32_t bitsOf(float x) {
  std::uint32_t b = 0;
  std::memcpy(&b, &x, 4);
  return b;
}

}  // namespace trn::isa::special_test
