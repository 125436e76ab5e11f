// Counter-based deterministic random numbers (Philox4x32-10, Salmon et al., SC'11). The value
// for a given (key, counter) is a pure function of both, so results are identical on every host
// and independent of evaluation order: a simulated engine can draw the random bits for element i
// of instruction n without any shared generator state. Used for stochastic rounding, dropout and
// the simulated RNG instructions.
#pragma once

#include <array>
#include <cstdint>

namespace trn {

/// The Philox4x32-10 block function: four 32-bit outputs for a 128-bit counter and 64-bit key.
std::array<std::uint32_t, 4> philox4x32(std::array<std::uint32_t, 4> counter,
                                        std::array<std::uint32_t, 2> key);

/// A stream of 32-bit random words identified by (seed, stream). Word i is
/// philox4x32({i/4 low, i/4 high, stream low, stream high}, seed)[i%4], so random access and
/// sequential use agree.
class CounterRng {
 public:
  CounterRng(std::uint64_t seed, std::uint64_t stream) : seed_(seed), stream_(stream) {}

  /// Word number `index` of the stream.
  [[nodiscard]] std::uint32_t at(std::uint64_t index) const;

  /// Four consecutive words starting at 4*block.
  [[nodiscard]] std::array<std::uint32_t, 4> block(std::uint64_t block) const;

  /// The next word of a sequential walk over the stream (starting at word 0).
  std::uint32_t next() { return at(position_++); }

  /// A double uniform in [0, 1) with 53 random bits, consuming two words.
  double nextUniform();

  [[nodiscard]] std::uint64_t seed() const { return seed_; }
  [[nodiscard]] std::uint64_t stream() const { return stream_; }

 private:
  std::uint64_t seed_;
  std::uint64_t stream_;
  std::uint64_t position_ = 0;
};

}  // namespace trn
