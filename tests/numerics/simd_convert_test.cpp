// The bulk conversions give exactly the bits of the scalar definitions, in every rounding mode,
// on every SIMD target that this host supports (Highway's dispatch is redirected target by
// target).
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "reference.h"
#include "trn/base/rng.h"
#include "trn/numerics/convert.h"

namespace trn {
namespace {

constexpr DType kFloatTypes[] = {DType::kFp32,    DType::kTf32,    DType::kBf16,
                                 DType::kFp16,    DType::kFp8E4m3, DType::kFp8E5m2,
                                 DType::kFp8E3m4, DType::kFp8E4m3Fn};

/// Specials, every bf16 and fp16 value widened to fp32, the fp32 values next to each of them,
/// and random fp32 bit patterns.
std::vector<float> narrowingInputs() {
  std::vector<float> inputs;
  for (std::uint32_t bits : {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
                             0xFFC00000u, 0x7F800001u, 0x7F7FFFFFu, 0x00000001u, 0x807FFFFFu,
                             0x00800000u, 0x43700000u, 0x43780000u, 0x477FF000u}) {
    inputs.push_back(std::bit_cast<float>(bits));
  }
  for (std::uint32_t code = 0; code < 65536; code += reference::kSweepStride) {
    for (DType type : {DType::kBf16, DType::kFp16}) {
      const float v = decodeFloat(code, type);
      inputs.push_back(v);
      inputs.push_back(std::nextafter(v, std::numeric_limits<float>::infinity()));
      inputs.push_back(std::nextafter(v, -std::numeric_limits<float>::infinity()));
    }
  }
  const CounterRng rng(99, 1);
  // A quarter of the rounding test's count: this set is checked 48 times on each target.
  for (std::uint64_t i = 0; i < reference::kRandomInputs / 4; ++i) {
    inputs.push_back(std::bit_cast<float>(rng.at(i)));
  }
  return inputs;
}

struct Expected {
  DType type;
  ConvertOptions options;
  std::vector<std::byte> bytes;
};

std::vector<Expected> scalarNarrowings(const std::vector<float>& inputs) {
  const ConvertOptions stochastic{RoundingMode::kStochastic, false, 77, 5};
  std::vector<std::uint32_t> words(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    words[i] = stochasticWord(stochastic, i);
  }
  std::vector<Expected> all;
  for (DType type : kFloatTypes) {
    for (RoundingMode mode :
         {RoundingMode::kNearestEven, RoundingMode::kTowardZero, RoundingMode::kStochastic}) {
      for (bool saturate : {false, true}) {
        Expected e{type, ConvertOptions{mode, saturate, stochastic.seed, stochastic.stream}, {}};
        const int size = byteSize(type);
        e.bytes.resize(inputs.size() * static_cast<std::size_t>(size));
        for (std::size_t i = 0; i < inputs.size(); ++i) {
          const std::uint32_t code = encodeFloat(inputs[i], type, e.options, words[i]);
          std::memcpy(e.bytes.data() + i * size, &code, size);
        }
        all.push_back(std::move(e));
      }
    }
  }
  return all;
}

class SimdConvert : public ::testing::Test {
 protected:
  static void TearDownTestSuite() { hwy::SetSupportedTargetsForTest(0); }
};

TEST_F(SimdConvert, NarrowingMatchesScalarOnEveryTarget) {
  const std::vector<float> inputs = narrowingInputs();
  const std::vector<Expected> expected = scalarNarrowings(inputs);
  for (std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    ASSERT_EQ(simdTargetName(), hwy::TargetName(target));
    for (const Expected& e : expected) {
      std::vector<std::byte> actual(e.bytes.size());
      convertFromFloat(inputs, e.type, actual, e.options);
      ASSERT_TRUE(actual == e.bytes)
          << hwy::TargetName(target) << " " << dtypeName(e.type) << " "
          << roundingModeName(e.options.rounding) << (e.options.saturate ? " saturating" : "");
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// Odd lengths exercise the tail; an output offset by one byte exercises unaligned stores.
TEST_F(SimdConvert, TailsAndUnalignedBuffers) {
  std::vector<float> inputs(100);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    inputs[i] = static_cast<float>(i) * 1.37f - 50.0f;
  }
  for (std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    for (DType type : kFloatTypes) {
      const auto size = static_cast<std::size_t>(byteSize(type));
      for (std::size_t count : {0, 1, 3, 7, 15, 17, 33, 63, 65, 99}) {
        std::vector<std::byte> storage(count * size + 1);
        const std::span<std::byte> out = std::span<std::byte>(storage).subspan(1, count * size);
        convertFromFloat(std::span<const float>(inputs).first(count), type, out);
        std::vector<float> back(count);
        convertToFloat(out, type, back);
        for (std::size_t i = 0; i < count; ++i) {
          std::uint32_t code = 0;
          std::memcpy(&code, out.data() + i * size, size);
          ASSERT_EQ(code, encodeFloat(inputs[i], type)) << dtypeName(type) << " " << count;
          ASSERT_EQ(std::bit_cast<std::uint32_t>(back[i]),
                    std::bit_cast<std::uint32_t>(decodeFloat(code, type)));
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// Every 8- and 16-bit pattern, and random 32-bit patterns for fp32 and tf32.
TEST_F(SimdConvert, WideningMatchesScalarOnEveryTarget) {
  for (std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    for (DType type : kFloatTypes) {
      const auto size = static_cast<std::size_t>(byteSize(type));
      std::vector<std::uint32_t> codes;
      if (size < 4) {
        for (std::uint32_t code = 0; code < (1u << (8 * size)); ++code) {
          codes.push_back(code);
        }
      } else {
        const CounterRng rng(5, 5);
        for (std::uint64_t i = 0; i < reference::kRandomInputs / 4; ++i) {
          codes.push_back(rng.at(i));
        }
        for (std::uint32_t bits : {0x7F800000u, 0xFF800001u, 0x00000001u, 0x00001FFFu}) {
          codes.push_back(bits);
        }
      }
      std::vector<std::byte> bytes(codes.size() * size);
      for (std::size_t i = 0; i < codes.size(); ++i) {
        std::memcpy(bytes.data() + i * size, &codes[i], size);
      }
      std::vector<float> actual(codes.size());
      convertToFloat(bytes, type, actual);
      for (std::size_t i = 0; i < codes.size(); ++i) {
        ASSERT_EQ(std::bit_cast<std::uint32_t>(actual[i]),
                  std::bit_cast<std::uint32_t>(decodeFloat(codes[i], type)))
            << hwy::TargetName(target) << " " << dtypeName(type) << " code 0x" << std::hex
            << codes[i];
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

TEST_F(SimdConvert, DispatchesToTheBestTargetByDefault) {
  hwy::SetSupportedTargetsForTest(0);
  const std::vector<std::int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_FALSE(targets.empty());
  EXPECT_EQ(simdTargetName(), hwy::TargetName(targets.front()));
}

}  // namespace
}  // namespace trn
