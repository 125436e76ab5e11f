#include "trn/base/units.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "trn/base/decimal.h"

namespace trn {
namespace {

constexpr std::int64_t kKilo = 1000;
constexpr std::int64_t kMega = kKilo * kKilo;
constexpr std::int64_t kGiga = kMega * kKilo;
constexpr std::int64_t kTera = kGiga * kKilo;
constexpr std::int64_t kKibi = 1024;
constexpr std::int64_t kMebi = kKibi * kKibi;
constexpr std::int64_t kGibi = kMebi * kKibi;
constexpr std::int64_t kTebi = kGibi * kKibi;

/// A unit as an exact ratio to the base unit of its dimension.
struct Unit {
  std::string_view name;
  Int128 numerator;
  Int128 denominator;
};

constexpr std::array<Unit, 6> kTimeUnits = {{
    {"ps", 1, 1},
    {"ns", kKilo, 1},
    {"us", kMega, 1},
    {"\u00b5s", kMega, 1},
    {"ms", kGiga, 1},
    {"s", kTera, 1},
}};

constexpr std::array<Unit, 9> kByteUnits = {{
    {"B", 1, 1},
    {"KB", kKilo, 1},
    {"MB", kMega, 1},
    {"GB", kGiga, 1},
    {"TB", kTera, 1},
    {"KiB", kKibi, 1},
    {"MiB", kMebi, 1},
    {"GiB", kGibi, 1},
    {"TiB", kTebi, 1},
}};

constexpr std::array<Unit, 4> kFrequencyUnits = {{
    {"Hz", 1, 1},
    {"kHz", kKilo, 1},
    {"MHz", kMega, 1},
    {"GHz", kGiga, 1},
}};

constexpr std::array<Unit, 5> kBitRateUnits = {{
    {"bps", 1, 8},
    {"Kbps", kKilo, 8},
    {"Mbps", kMega, 8},
    {"Gbps", kGiga, 8},
    {"Tbps", kTera, 8},
}};

std::string describeUnit(std::string_view unit) {
  return unit.empty() ? std::string("no unit") : fmt::format("unknown unit '{}'", unit);
}

template <typename Q>
Result<Q> convert(std::string_view original, const Decimal& d, Int128 unitNumerator,
                  Int128 unitDenominator, std::string_view baseName) {
  if (d.negative && d.mantissa != 0) {
    return invalidArgument(fmt::format("'{}' is negative; expected a value >= 0", original));
  }
  Int128 numerator = d.mantissa;
  Int128 denominator = unitDenominator;
  bool fits = multiplyChecked(numerator, unitNumerator);
  if (d.exponent >= 0) {
    fits = fits && scaleByPowerOfTen(numerator, d.exponent);
  } else {
    fits = fits && scaleByPowerOfTen(denominator, -d.exponent);
  }
  if (!fits) {
    return outOfRange(fmt::format("'{}' is too large", original));
  }
  if (numerator % denominator != 0) {
    return invalidArgument(fmt::format("'{}' is not a whole number of {}", original, baseName));
  }
  const Int128 value = numerator / denominator;
  if (value > Int128{INT64_MAX}) {
    return outOfRange(fmt::format("'{}' is too large", original));
  }
  return Q(static_cast<std::int64_t>(value));
}

template <std::size_t N>
const Unit* findUnit(const std::array<Unit, N>& units, std::string_view name) {
  for (const Unit& u : units) {
    if (u.name == name) {
      return &u;
    }
  }
  return nullptr;
}

template <std::size_t N>
std::string unitList(const std::array<Unit, N>& units) {
  std::string list;
  for (const Unit& u : units) {
    list += list.empty() ? "" : ", ";
    list += u.name;
  }
  return list;
}

template <typename Q, std::size_t N>
Result<Q> parseWithUnits(std::string_view text, const std::array<Unit, N>& units,
                         std::string_view dimension, std::string_view baseName) {
  const std::string_view trimmed = trimWhitespace(text);
  const std::optional<DecimalPrefix> number = parseDecimalPrefix(trimmed);
  if (!number) {
    return invalidArgument(fmt::format("'{}' is not a {}: expected a number followed by a unit ({})",
                                       text, dimension, unitList(units)));
  }
  const std::string_view rest = trimWhitespace(number->rest);
  const Unit* unit = findUnit(units, rest);
  if (unit == nullptr) {
    return invalidArgument(fmt::format("'{}' has {}; a {} takes one of {}", text,
                                       describeUnit(rest), dimension, unitList(units)));
  }
  return convert<Q>(trimmed, number->value, unit->numerator, unit->denominator, baseName);
}

/// Renders with the largest decimal unit not exceeding the value, or, for sizes, with the
/// largest binary unit (KiB, ...) that divides the value when that is shorter ("224KiB").
template <std::size_t N>
std::string formatWithUnits(std::int64_t value, const std::array<Unit, N>& units,
                            std::string_view suffix) {
  const Int128 magnitude = value < 0 ? -Int128{value} : Int128{value};
  const Unit* decimal = &units[0];
  const Unit* binary = nullptr;
  for (const Unit& u : units) {
    const bool isBinary = u.name.ends_with("iB");
    if (u.name == "\u00b5s" || u.numerator > magnitude) {
      continue;  // "us" is the canonical spelling of microseconds
    }
    if (isBinary && magnitude % u.numerator == 0 &&
        (binary == nullptr || u.numerator > binary->numerator)) {
      binary = &u;
    } else if (!isBinary && u.numerator > decimal->numerator) {
      decimal = &u;
    }
  }
  std::string best =
      formatTerminatingDecimal(value, static_cast<std::int64_t>(decimal->numerator)) +
      std::string(decimal->name);
  if (binary != nullptr) {
    std::string alternative =
        formatTerminatingDecimal(value, static_cast<std::int64_t>(binary->numerator)) +
        std::string(binary->name);
    if (alternative.size() < best.size()) {
      best = std::move(alternative);
    }
  }
  return best + std::string(suffix);
}

}  // namespace

Result<Picoseconds> parseTime(std::string_view text) {
  return parseWithUnits<Picoseconds>(text, kTimeUnits, "time", "picoseconds");
}

Result<Bytes> parseBytes(std::string_view text) {
  return parseWithUnits<Bytes>(text, kByteUnits, "size", "bytes");
}

Result<Hertz> parseFrequency(std::string_view text) {
  return parseWithUnits<Hertz>(text, kFrequencyUnits, "frequency", "hertz");
}

Result<BytesPerSecond> parseBandwidth(std::string_view text) {
  const std::string_view trimmed = trimWhitespace(text);
  const std::optional<DecimalPrefix> number = parseDecimalPrefix(trimmed);
  const std::string expected = fmt::format(
      "a bandwidth takes a size unit over a time unit (e.g. GB/s, GiB/s, B/ns) or a bit rate ({})",
      unitList(kBitRateUnits));
  if (!number) {
    return invalidArgument(fmt::format(
        "'{}' is not a bandwidth: expected a number followed by a unit; {}", text, expected));
  }
  const Decimal& d = number->value;
  const std::string_view rest = trimWhitespace(number->rest);
  if (const Unit* bitRate = findUnit(kBitRateUnits, rest)) {
    return convert<BytesPerSecond>(trimmed, d, bitRate->numerator, bitRate->denominator,
                                   "bytes per second");
  }
  const std::size_t slash = rest.find('/');
  const bool hasSlash = slash != std::string_view::npos;
  const Unit* size =
      hasSlash ? findUnit(kByteUnits, trimWhitespace(rest.substr(0, slash))) : nullptr;
  const Unit* time =
      hasSlash ? findUnit(kTimeUnits, trimWhitespace(rest.substr(slash + 1))) : nullptr;
  if (size == nullptr || time == nullptr) {
    return invalidArgument(fmt::format("'{}' has {}; {}", text, describeUnit(rest), expected));
  }
  // bytes/time: (size factor in B) per (time factor in ps) = size * 1e12 / time B/s.
  return convert<BytesPerSecond>(trimmed, d, size->numerator * kTera, time->numerator,
                                 "bytes per second");
}

std::string toString(Picoseconds t) { return formatWithUnits(t.count(), kTimeUnits, ""); }
std::string toString(Bytes b) { return formatWithUnits(b.count(), kByteUnits, ""); }
std::string toString(Hertz f) { return formatWithUnits(f.count(), kFrequencyUnits, ""); }
std::string toString(BytesPerSecond bw) {
  return formatWithUnits(bw.count(), kByteUnits, "/s");
}

Picoseconds cyclesToTime(std::int64_t cycles, Hertz frequency) {
  TRN_CHECK(frequency.count() > 0) << "clock frequency must be positive";
  TRN_CHECK(cycles >= 0) << "negative cycle count " << cycles;
  const Int128 numerator = Int128{cycles} * kTera;
  const Int128 ps = (numerator + frequency.count() - 1) / frequency.count();
  TRN_CHECK(ps <= Int128{INT64_MAX}) << cycles << " cycles overflow the picosecond clock";
  return Picoseconds(static_cast<std::int64_t>(ps));
}

}  // namespace trn
