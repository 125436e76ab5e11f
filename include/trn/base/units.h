// Typed physical quantities used throughout the hardware description and the timing model:
// time in integer picoseconds, sizes in bytes, frequencies in hertz and bandwidths in bytes per
// second, all stored as exact 64-bit integers. Each is parsed from a unit string such as "1.3us",
// "224KiB", "2.4GHz" or "2.9TB/s"; decimal fractions are converted exactly, and a value that is
// not a whole number of the base unit (e.g. "0.5ps") is an error rather than a silent rounding.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "trn/base/status.h"

namespace trn {

/// A dimensioned integer count of one base unit. `Tag` makes each dimension a distinct type so
/// bytes cannot be added to picoseconds.
template <typename Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(std::int64_t count) : count_(count) {}

  /// The value in the base unit (ps, B, Hz or B/s).
  [[nodiscard]] constexpr std::int64_t count() const { return count_; }

  constexpr auto operator<=>(const Quantity&) const = default;
  constexpr Quantity operator+(Quantity other) const { return Quantity(count_ + other.count_); }
  constexpr Quantity operator-(Quantity other) const { return Quantity(count_ - other.count_); }
  constexpr Quantity& operator+=(Quantity other) {
    count_ += other.count_;
    return *this;
  }
  constexpr Quantity& operator-=(Quantity other) {
    count_ -= other.count_;
    return *this;
  }
  constexpr Quantity operator*(std::int64_t factor) const { return Quantity(count_ * factor); }

 private:
  std::int64_t count_ = 0;
};

struct TimeTag {};
struct BytesTag {};
struct FrequencyTag {};
struct BandwidthTag {};

using Picoseconds = Quantity<TimeTag>;      ///< time; 1 = one picosecond
using Bytes = Quantity<BytesTag>;           ///< size; 1 = one byte
using Hertz = Quantity<FrequencyTag>;       ///< frequency; 1 = one cycle per second
using BytesPerSecond = Quantity<BandwidthTag>;  ///< bandwidth; 1 = one byte per second

/// The latest simulated time trnsim represents: 2^62 ps, about 53.4 days. The timing model reports
/// an error rather than pass it, so the sum of two representable times always fits in 64 bits.
inline constexpr Picoseconds kMaxSimulatedTime{std::int64_t{1} << 62};

/// Parses a time: a decimal number followed by ps, ns, us (or µs), ms or s. "1.3us" = 1300000 ps.
Result<Picoseconds> parseTime(std::string_view text);

/// Parses a size: B, KB/MB/GB/TB (powers of 1000) or KiB/MiB/GiB/TiB (powers of 1024).
Result<Bytes> parseBytes(std::string_view text);

/// Parses a frequency: Hz, kHz, MHz or GHz.
Result<Hertz> parseFrequency(std::string_view text);

/// Parses a bandwidth: a size unit over a time unit, e.g. "2.9TB/s", "27GiB/s", "23B/ns".
Result<BytesPerSecond> parseBandwidth(std::string_view text);

/// Shortest exact rendering in the largest fitting unit, e.g. "1.3us", "224KiB", "2.4GHz",
/// "2.9TB/s". Parsing the output gives back the same value.
std::string toString(Picoseconds t);
std::string toString(Bytes b);
std::string toString(Hertz f);
std::string toString(BytesPerSecond bw);

/// Time taken by `cycles` cycles of a clock at `frequency`, rounded up to a whole picosecond.
Picoseconds cyclesToTime(std::int64_t cycles, Hertz frequency);

}  // namespace trn
