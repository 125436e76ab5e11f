#include "trn/base/units.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <string>

#include <fmt/format.h>

namespace trn {
namespace {

__extension__ using Int128 = __int128;  // exact intermediate arithmetic

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

/// A decimal number split into an integer mantissa and a power of ten.
struct Decimal {
  Int128 mantissa = 0;
  int exponent10 = 0;
  bool negative = false;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
    s.remove_prefix(1);
  }
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
    s.remove_suffix(1);
  }
  return s;
}

/// Parses the leading number of `text`; `rest` receives what follows it.
std::optional<Decimal> parseDecimal(std::string_view text, std::string_view& rest) {
  constexpr int kMaxDigits = 30;
  Decimal d;
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) {
    d.negative = text[i] == '-';
    ++i;
  }
  int significantDigits = 0;
  bool sawDigit = false;
  bool sawPoint = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.' && !sawPoint) {
      sawPoint = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) {
      break;
    }
    sawDigit = true;
    if (d.mantissa != 0 || c != '0') {
      if (++significantDigits > kMaxDigits) {
        return std::nullopt;
      }
    }
    d.mantissa = d.mantissa * 10 + (c - '0');
    if (sawPoint) {
      --d.exponent10;
    }
  }
  if (!sawDigit) {
    return std::nullopt;
  }
  // Optional exponent: e/E, sign, digits. Not confused with a unit starting with 'e' (none do).
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    std::size_t j = i + 1;
    bool negativeExponent = false;
    if (j < text.size() && (text[j] == '-' || text[j] == '+')) {
      negativeExponent = text[j] == '-';
      ++j;
    }
    int exponent = 0;
    const std::size_t exponentStart = j;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])) && exponent < 1000) {
      exponent = exponent * 10 + (text[j] - '0');
      ++j;
    }
    if (j == exponentStart || exponent >= 1000) {
      return std::nullopt;
    }
    d.exponent10 += negativeExponent ? -exponent : exponent;
    i = j;
  }
  rest = text.substr(i);
  return d;
}

bool multiplyChecked(Int128& value, Int128 factor) {
  return !__builtin_mul_overflow(value, factor, &value);
}

bool scaleByPowerOfTen(Int128& value, int exponent) {
  for (int k = 0; k < exponent; ++k) {
    if (!multiplyChecked(value, 10)) {
      return false;
    }
  }
  return true;
}

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
  if (d.exponent10 >= 0) {
    fits = fits && scaleByPowerOfTen(numerator, d.exponent10);
  } else {
    fits = fits && scaleByPowerOfTen(denominator, -d.exponent10);
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
  const std::string_view trimmed = trim(text);
  std::string_view rest;
  const std::optional<Decimal> d = parseDecimal(trimmed, rest);
  if (!d) {
    return invalidArgument(fmt::format("'{}' is not a {}: expected a number followed by a unit ({})",
                                       text, dimension, unitList(units)));
  }
  const Unit* unit = findUnit(units, trim(rest));
  if (unit == nullptr) {
    return invalidArgument(fmt::format("'{}' has {}; a {} takes one of {}", text,
                                       describeUnit(trim(rest)), dimension, unitList(units)));
  }
  return convert<Q>(trimmed, *d, unit->numerator, unit->denominator, baseName);
}

/// Exact decimal rendering of value/factor, where factor is a power of ten or of two.
std::string formatRatio(std::int64_t value, std::int64_t factor) {
  const bool negative = value < 0;
  const Int128 magnitude = negative ? -Int128{value} : Int128{value};
  std::string out = std::to_string(static_cast<std::int64_t>(magnitude / factor));
  Int128 remainder = magnitude % factor;
  if (remainder != 0) {
    out += '.';
    while (remainder != 0) {
      remainder *= 10;
      out += static_cast<char>('0' + static_cast<int>(remainder / factor));
      remainder %= factor;
    }
  }
  return negative ? "-" + out : out;
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
  std::string best = formatRatio(value, static_cast<std::int64_t>(decimal->numerator)) +
                     std::string(decimal->name);
  if (binary != nullptr) {
    std::string alternative = formatRatio(value, static_cast<std::int64_t>(binary->numerator)) +
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
  const std::string_view trimmed = trim(text);
  std::string_view rest;
  const std::optional<Decimal> d = parseDecimal(trimmed, rest);
  const std::string expected = fmt::format(
      "a bandwidth takes a size unit over a time unit (e.g. GB/s, GiB/s, B/ns) or a bit rate ({})",
      unitList(kBitRateUnits));
  if (!d) {
    return invalidArgument(fmt::format(
        "'{}' is not a bandwidth: expected a number followed by a unit; {}", text, expected));
  }
  rest = trim(rest);
  if (const Unit* bitRate = findUnit(kBitRateUnits, rest)) {
    return convert<BytesPerSecond>(trimmed, *d, bitRate->numerator, bitRate->denominator,
                                   "bytes per second");
  }
  const std::size_t slash = rest.find('/');
  const Unit* size = slash == std::string_view::npos ? nullptr
                                                     : findUnit(kByteUnits, trim(rest.substr(0, slash)));
  const Unit* time = slash == std::string_view::npos ? nullptr
                                                     : findUnit(kTimeUnits, trim(rest.substr(slash + 1)));
  if (size == nullptr || time == nullptr) {
    return invalidArgument(fmt::format("'{}' has {}; {}", text, describeUnit(rest), expected));
  }
  // bytes/time: (size factor in B) per (time factor in ps) = size * 1e12 / time B/s.
  return convert<BytesPerSecond>(trimmed, *d, size->numerator * kTera, time->numerator,
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
