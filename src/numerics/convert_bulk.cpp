// Bulk conversions: the SIMD kernels for float types (all rounding modes; stochastic rounding
// draws its Philox words per chunk here), a scalar loop over the definitions for integer types.
#include "trn/numerics/convert.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "src/numerics/convert_simd.h"
#include "trn/base/check.h"
#include "trn/base/rng.h"

namespace trn {
namespace {

static_assert(std::endian::native == std::endian::little,
              "element storage is little-endian; a big-endian host needs byte swaps here");

void storeCode(std::uint32_t code, std::byte* dst, int size) { std::memcpy(dst, &code, size); }

/// Elements rounded per batch of random words (16 KiB of words, which stays in L1).
constexpr std::size_t kWordChunk = 4096;

/// words[j] = rng.at(first + j), computing each Philox block once.
void fillWords(const CounterRng& rng, std::uint64_t first, std::span<std::uint32_t> words) {
  std::size_t j = 0;
  while (j < words.size()) {
    const std::uint64_t index = first + j;
    const std::array<std::uint32_t, 4> block = rng.block(index / 4);
    for (std::uint64_t lane = index % 4; lane < 4 && j < words.size(); ++lane, ++j) {
      words[j] = block[lane];
    }
  }
}

std::uint32_t loadCode(const std::byte* src, int size) {
  std::uint32_t code = 0;
  std::memcpy(&code, src, size);
  return code;
}

}  // namespace

void convertFromFloat(std::span<const float> src, DType dstType, std::span<std::byte> dst,
                      const ConvertOptions& options, std::uint64_t firstIndex) {
  const int size = byteSize(dstType);
  TRN_CHECK(dst.size() == src.size() * static_cast<std::size_t>(size))
      << "convertFromFloat: " << src.size() << " elements need " << src.size() * size
      << " bytes of " << dtypeName(dstType) << ", got " << dst.size();
  if (src.empty()) {
    return;
  }
  if (options.rounding != RoundingMode::kStochastic) {
    if (numerics::hasSimdNarrow(dstType)) {
      numerics::simdNarrow(src.data(), src.size(), nullptr, dst.data(), dstType,
                           options.rounding, options.saturate);
      return;
    }
    for (std::size_t j = 0; j < src.size(); ++j) {
      storeCode(encodeFloat(src[j], dstType, options), dst.data() + j * size, size);
    }
    return;
  }
  // Stochastic rounding: the words of a chunk of elements come from the counter-based RNG (one
  // Philox block per four consecutive indices), then the chunk is rounded.
  const CounterRng rng(options.seed, options.stream);
  std::array<std::uint32_t, kWordChunk> words{};
  for (std::size_t begin = 0; begin < src.size(); begin += kWordChunk) {
    const std::size_t count = std::min(kWordChunk, src.size() - begin);
    fillWords(rng, firstIndex + begin, std::span(words).first(count));
    if (numerics::hasSimdNarrow(dstType)) {
      numerics::simdNarrow(src.data() + begin, count, words.data(), dst.data() + begin * size,
                           dstType, options.rounding, options.saturate);
    } else {
      for (std::size_t j = 0; j < count; ++j) {
        storeCode(encodeFloat(src[begin + j], dstType, options, words[j]),
                  dst.data() + (begin + j) * size, size);
      }
    }
  }
}

void convertToFloat(std::span<const std::byte> src, DType srcType, std::span<float> dst) {
  const int size = byteSize(srcType);
  TRN_CHECK(src.size() == dst.size() * static_cast<std::size_t>(size))
      << "convertToFloat: " << dst.size() << " elements need " << dst.size() * size
      << " bytes of " << dtypeName(srcType) << ", got " << src.size();
  if (dst.empty()) {
    return;
  }
  if (numerics::hasSimdWiden(srcType)) {
    numerics::simdWiden(src.data(), dst.size(), dst.data(), srcType);
    return;
  }
  for (std::size_t j = 0; j < dst.size(); ++j) {
    dst[j] = decodeFloat(loadCode(src.data() + j * size, size), srcType);
  }
}

std::string_view simdTargetName() { return numerics::simdTarget(); }

}  // namespace trn
