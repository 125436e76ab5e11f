// Bulk conversions: the SIMD kernels where they exist, otherwise a scalar loop over the
// definitions in convert_scalar.cpp (stochastic rounding, integer types).
#include <bit>
#include <cstring>

#include "src/numerics/convert_simd.h"
#include "trn/base/check.h"
#include "trn/base/rng.h"
#include "trn/numerics/convert.h"

namespace trn {
namespace {

static_assert(std::endian::native == std::endian::little,
              "element storage is little-endian; a big-endian host needs byte swaps here");

void storeCode(std::uint32_t code, std::byte* dst, int size) { std::memcpy(dst, &code, size); }

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
  if (numerics::hasSimdNarrow(dstType, options.rounding)) {
    numerics::simdNarrow(src.data(), src.size(), dst.data(), dstType, options.rounding,
                         options.saturate);
    return;
  }
  if (options.rounding != RoundingMode::kStochastic) {
    for (std::size_t j = 0; j < src.size(); ++j) {
      storeCode(encodeFloat(src[j], dstType, options), dst.data() + j * size, size);
    }
    return;
  }
  // One Philox block gives the words of four consecutive element indices.
  const CounterRng rng(options.seed, options.stream);
  std::size_t j = 0;
  while (j < src.size()) {
    const std::uint64_t index = firstIndex + j;
    const std::array<std::uint32_t, 4> words = rng.block(index / 4);
    for (std::uint64_t lane = index % 4; lane < 4 && j < src.size(); ++lane, ++j) {
      storeCode(encodeFloat(src[j], dstType, options, words[lane]), dst.data() + j * size, size);
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
