#include "trn/base/rng.h"

namespace trn {
namespace {

// Constants of Philox4x32 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3").
constexpr std::uint32_t kMultiplier0 = 0xD2511F53u;
constexpr std::uint32_t kMultiplier1 = 0xCD9E8D57u;
constexpr std::uint32_t kWeyl0 = 0x9E3779B9u;  // golden ratio
constexpr std::uint32_t kWeyl1 = 0xBB67AE85u;  // sqrt(3) - 1
constexpr int kRounds = 10;

std::array<std::uint32_t, 4> round(std::array<std::uint32_t, 4> c, std::array<std::uint32_t, 2> k) {
  const std::uint64_t p0 = std::uint64_t{kMultiplier0} * c[0];
  const std::uint64_t p1 = std::uint64_t{kMultiplier1} * c[2];
  const auto hi0 = static_cast<std::uint32_t>(p0 >> 32);
  const auto lo0 = static_cast<std::uint32_t>(p0);
  const auto hi1 = static_cast<std::uint32_t>(p1 >> 32);
  const auto lo1 = static_cast<std::uint32_t>(p1);
  return {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
}

}  // namespace

std::array<std::uint32_t, 4> philox4x32(std::array<std::uint32_t, 4> counter,
                                        std::array<std::uint32_t, 2> key) {
  for (int r = 0; r < kRounds; ++r) {
    if (r > 0) {
      key[0] += kWeyl0;
      key[1] += kWeyl1;
    }
    counter = round(counter, key);
  }
  return counter;
}

std::array<std::uint32_t, 4> CounterRng::block(std::uint64_t block) const {
  return philox4x32({static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32),
                     static_cast<std::uint32_t>(stream_), static_cast<std::uint32_t>(stream_ >> 32)},
                    {static_cast<std::uint32_t>(seed_), static_cast<std::uint32_t>(seed_ >> 32)});
}

std::uint32_t CounterRng::at(std::uint64_t index) const { return block(index / 4)[index % 4]; }

double CounterRng::nextUniform() {
  const std::uint64_t high = next() >> 5;  // 27 bits
  const std::uint64_t low = next() >> 6;   // 26 bits
  return static_cast<double>((high << 26) | low) * 0x1.0p-53;
}

}  // namespace trn
