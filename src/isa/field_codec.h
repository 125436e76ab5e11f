// Per-type handling of instruction fields: text formatting and parsing, binary encoding and
// decoding, and the type's name in reference pages. One overload set per field type; the
// program printer, parser, encoder and decoder apply them to every declared field.
#pragma once

#include <fmt/format.h>

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "trn/isa/field.h"
#include "trn/isa/index_pattern.h"
#include "trn/isa/instruction.h"
#include "trn/isa/replica_groups.h"

namespace trn::isa::codec {

using TensorNameFn = std::function<std::string_view(std::int32_t)>;
using TensorIndexFn = std::function<Result<std::int32_t>(std::string_view)>;

/// Appends little-endian values to a byte vector.
class Writer {
 public:
  explicit Writer(std::vector<std::byte>& out) : out_(out) {}
  template <typename T>
  void put(T value) {
    static_assert(std::is_integral_v<T>);
    std::array<std::byte, sizeof(T)> bytes;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      bytes[i] = static_cast<std::byte>((static_cast<std::uint64_t>(value) >> (8 * i)) & 0xff);
    }
    out_.insert(out_.end(), bytes.begin(), bytes.end());
  }
  void putString(std::string_view s) {
    put(static_cast<std::uint32_t>(s.size()));
    const auto* first = reinterpret_cast<const std::byte*>(s.data());
    out_.insert(out_.end(), first, first + s.size());
  }

 private:
  std::vector<std::byte>& out_;
};

/// Reads little-endian values with bounds checks; errors carry the byte offset.
class Reader {
 public:
  /// Reads `bytes`, which start at byte `base` of the file called `name` (errors give the byte of
  /// the file).
  Reader(std::span<const std::byte> bytes, std::string_view name, std::uint64_t base = 0)
      : bytes_(bytes), name_(name), base_(base) {}

  template <typename T>
  Status get(T& value) {
    static_assert(std::is_integral_v<T>);
    if (bytes_.size() - pos_ < sizeof(T)) {
      return error(fmt::format("unexpected end of data reading {} bytes", sizeof(T)));
    }
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(&value, bytes_.data() + pos_, sizeof(T));
    } else {
      std::uint64_t raw = 0;
      for (std::size_t i = 0; i < sizeof(T); ++i) {
        raw |= static_cast<std::uint64_t>(bytes_[pos_ + i]) << (8 * i);
      }
      value = static_cast<T>(raw);
    }
    pos_ += sizeof(T);
    return {};
  }
  /// A length-prefixed string of at most `maxLength` bytes; `what` names it in errors.
  Status getString(std::string& s, std::size_t maxLength, std::string_view what) {
    std::uint32_t length = 0;
    TRN_RETURN_IF_ERROR(get(length));
    if (length > maxLength) {
      return error(fmt::format("a {} of {} bytes; the limit is {}", what, length, maxLength));
    }
    if (length > bytes_.size() - pos_) {
      return error(fmt::format("a {} of {} bytes runs past the end of the data", what, length));
    }
    s.assign(reinterpret_cast<const char*>(bytes_.data()) + pos_, length);
    pos_ += length;
    return {};
  }
  /// The next `length` bytes, which the reader passes over.
  Result<std::span<const std::byte>> take(std::size_t length) {
    if (length > bytes_.size() - pos_) {
      return error(fmt::format("{} bytes run past the end of the data", length));
    }
    const std::span<const std::byte> taken = bytes_.subspan(pos_, length);
    pos_ += length;
    return taken;
  }
  [[nodiscard]] Status error(std::string_view what) const { return errorAt(pos_, what); }
  /// The error of a problem at byte `position` of the data.
  [[nodiscard]] Status errorAt(std::size_t position, std::string_view what) const {
    return parseError(
        fmt::format("{}: corrupt program at byte {}: {}", name_, base_ + position, what));
  }
  [[nodiscard]] bool done() const { return pos_ == bytes_.size(); }
  [[nodiscard]] std::size_t remaining() const { return bytes_.size() - pos_; }
  [[nodiscard]] std::size_t position() const { return pos_; }

 private:
  std::span<const std::byte> bytes_;
  std::string_view name_;
  std::uint64_t base_;
  std::size_t pos_ = 0;
};

/// The magic of every binary program, single or multi-core; a version follows it.
inline constexpr std::array<char, 8> kProgramMagic = {'T', 'R', 'N', 'P', 'R', 'O', 'G', '\0'};

/// Writes the magic and `version`.
inline void writeHeader(Writer& w, std::uint32_t version) {
  for (const char c : kProgramMagic) {
    w.put(static_cast<std::uint8_t>(c));
  }
  w.put(version);
}

/// Reads the magic and returns the version that follows it; `name` is the file, for messages.
inline Result<std::uint32_t> readHeader(Reader& r, std::string_view name) {
  for (const char c : kProgramMagic) {
    std::uint8_t b = 0;
    if (!r.get(b).ok() || b != static_cast<std::uint8_t>(c)) {
      return parseError(fmt::format("{}: not a trnsim binary program (bad magic)", name));
    }
  }
  std::uint32_t version = 0;
  TRN_RETURN_IF_ERROR(r.get(version));
  return version;
}

// ---- bool ----
inline std::string_view typeName(const bool*) { return "bool"; }
inline std::string format(bool v, const TensorNameFn&) { return v ? "true" : "false"; }
inline Status parse(std::string_view text, bool& v, const TensorIndexFn&) {
  if (text == "true" || text == "1") {
    v = true;
  } else if (text == "false" || text == "0") {
    v = false;
  } else {
    return parseError(fmt::format("'{}' is not a bool (true or false)", text));
  }
  return {};
}
inline void encode(bool v, Writer& w) { w.put(static_cast<std::uint8_t>(v)); }
inline Status decode(Reader& r, bool& v) {
  std::uint8_t raw = 0;
  TRN_RETURN_IF_ERROR(r.get(raw));
  if (raw > 1) {
    return r.error(fmt::format("bool value {}", raw));
  }
  v = raw == 1;
  return {};
}

// ---- std::int64_t ----
inline std::string_view typeName(const std::int64_t*) { return "int"; }
inline std::string format(std::int64_t v, const TensorNameFn&) { return std::to_string(v); }
inline Status parse(std::string_view text, std::int64_t& v, const TensorIndexFn&) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return parseError(fmt::format("'{}' is not an integer", text));
  }
  return {};
}
inline void encode(std::int64_t v, Writer& w) { w.put(v); }
inline Status decode(Reader& r, std::int64_t& v) { return r.get(v); }

// ---- float ----
inline std::string_view typeName(const float*) { return "float"; }
/// Shortest text that reads back to the same float. NaNs print as "nan" / "-nan" when they are
/// the default quiet NaN of that sign (what parsing "nan" gives), and otherwise as their bit
/// pattern, "nan(0x7f800001)", so that every float survives text -> binary -> text.
inline std::string format(float v, const TensorNameFn&) {
  const auto bits = std::bit_cast<std::uint32_t>(v);
  if (std::isnan(v) && (bits & 0x7fffffffU) != 0x7fc00000U) {
    return fmt::format("nan(0x{:08x})", bits);
  }
  return fmt::format("{}", v);
}
inline Status parse(std::string_view text, float& v, const TensorIndexFn&) {
  constexpr std::string_view kNanBits = "nan(0x";
  if (text.starts_with(kNanBits) && text.size() == kNanBits.size() + 9 && text.back() == ')') {
    std::uint32_t bits = 0;
    const char* first = text.data() + kNanBits.size();
    const auto [end, ec] = std::from_chars(first, first + 8, bits, 16);
    const float value = std::bit_cast<float>(bits);
    if (ec != std::errc() || end != first + 8 || !std::isnan(value)) {
      return parseError(fmt::format("'{}' is not a NaN bit pattern nan(0xHHHHHHHH)", text));
    }
    v = value;
    return {};
  }
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return parseError(fmt::format("'{}' is not a number", text));
  }
  return {};
}
inline void encode(float v, Writer& w) { w.put(std::bit_cast<std::uint32_t>(v)); }
inline Status decode(Reader& r, float& v) {
  std::uint32_t raw = 0;
  TRN_RETURN_IF_ERROR(r.get(raw));
  v = std::bit_cast<float>(raw);
  return {};
}

// ---- enums with an EnumTable ----
template <TabledEnum E>
std::string_view typeName(const E*) {
  return EnumTable<E>::kTypeName;
}
template <TabledEnum E>
std::string format(E v, const TensorNameFn&) {
  return std::string(enumName(v));
}
template <TabledEnum E>
Status parse(std::string_view text, E& v, const TensorIndexFn&) {
  if (enumFromName(text, v)) {
    return {};
  }
  std::string names;
  for (const auto& [value, name] : EnumTable<E>::kEntries) {
    names += names.empty() ? "" : ", ";
    names += name;
  }
  return parseError(fmt::format("'{}' is not a {}; expected one of {}", text,
                                EnumTable<E>::kTypeName, names));
}
template <TabledEnum E>
void encode(E v, Writer& w) {
  w.put(static_cast<std::uint8_t>(v));
}
template <TabledEnum E>
Status decode(Reader& r, E& v) {
  std::uint8_t raw = 0;
  TRN_RETURN_IF_ERROR(r.get(raw));
  for (const auto& [value, name] : EnumTable<E>::kEntries) {
    if (static_cast<std::uint8_t>(value) == raw) {
      v = value;
      return {};
    }
  }
  return r.error(fmt::format("{} value {} is not defined", EnumTable<E>::kTypeName, raw));
}

// ---- AccessPattern ----
inline std::string_view typeName(const AccessPattern*) { return "tensor"; }
inline std::string format(const AccessPattern& ap, const TensorNameFn& names) {
  return formatAccessPattern(ap, names);
}
inline Status parse(std::string_view text, AccessPattern& ap, const TensorIndexFn& tensors) {
  TRN_ASSIGN_OR_RETURN(ap, parseAccessPattern(text, tensors));
  return {};
}
void encode(const AccessPattern& ap, Writer& w);
Status decode(Reader& r, AccessPattern& ap);

// ---- std::optional<AccessPattern> ----
inline std::string_view typeName(const std::optional<AccessPattern>*) { return "tensor?"; }
inline std::string format(const std::optional<AccessPattern>& ap, const TensorNameFn& names) {
  return ap ? formatAccessPattern(*ap, names) : "none";
}
inline Status parse(std::string_view text, std::optional<AccessPattern>& ap,
                    const TensorIndexFn& tensors) {
  if (text == "none") {
    ap.reset();
    return {};
  }
  TRN_ASSIGN_OR_RETURN(ap, parseAccessPattern(text, tensors));
  return {};
}
inline void encode(const std::optional<AccessPattern>& ap, Writer& w) {
  w.put(static_cast<std::uint8_t>(ap.has_value()));
  if (ap) {
    encode(*ap, w);
  }
}
inline Status decode(Reader& r, std::optional<AccessPattern>& ap) {
  bool present = false;
  TRN_RETURN_IF_ERROR(decode(r, present));
  if (!present) {
    ap.reset();
    return {};
  }
  ap.emplace();
  return decode(r, *ap);
}

// ---- ScalarOperand: immediate or [P, 1] tensor ----
inline std::string_view typeName(const ScalarOperand*) { return "float|tensor"; }
inline std::string format(const ScalarOperand& s, const TensorNameFn& names) {
  if (const float* f = std::get_if<float>(&s)) {
    return format(*f, names);
  }
  return formatAccessPattern(std::get<AccessPattern>(s), names);
}
inline Status parse(std::string_view text, ScalarOperand& s, const TensorIndexFn& tensors) {
  float f = 0;
  if (parse(text, f, tensors).ok()) {
    s = f;
    return {};
  }
  TRN_ASSIGN_OR_RETURN(s, parseAccessPattern(text, tensors));
  return {};
}
inline void encode(const ScalarOperand& s, Writer& w) {
  w.put(static_cast<std::uint8_t>(s.index()));
  if (const float* f = std::get_if<float>(&s)) {
    encode(*f, w);
  } else {
    encode(std::get<AccessPattern>(s), w);
  }
}
inline Status decode(Reader& r, ScalarOperand& s) {
  std::uint8_t kind = 0;
  TRN_RETURN_IF_ERROR(r.get(kind));
  if (kind == 0) {
    float f = 0;
    TRN_RETURN_IF_ERROR(decode(r, f));
    s = f;
    return {};
  }
  if (kind != 1) {
    return r.error(fmt::format("scalar operand kind {}", kind));
  }
  AccessPattern ap;
  TRN_RETURN_IF_ERROR(decode(r, ap));
  s = ap;
  return {};
}

// ---- fixed lists of integers (std::array<std::int64_t, N>): "[a,b,...]" ----
namespace detail {
/// Splits "[item,item,...]" at its top-level commas (items may be bracketed lists themselves).
inline bool splitBracketList(std::string_view text, std::vector<std::string_view>& items) {
  items.clear();
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') {
    return false;
  }
  text = text.substr(1, text.size() - 2);
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '[') {
      ++depth;
    } else if (text[i] == ']' && --depth < 0) {
      return false;
    } else if (text[i] == ',' && depth == 0) {
      items.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  items.push_back(text.substr(start));
  return depth == 0;
}
inline bool parseWholeInt(std::string_view text, std::int64_t& v) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}
}  // namespace detail

template <std::size_t N>
std::string_view typeName(const std::array<std::int64_t, N>*) {
  static const std::string name = fmt::format("int[{}]", N);
  return name;
}
template <std::size_t N>
std::string format(const std::array<std::int64_t, N>& v, const TensorNameFn&) {
  return fmt::format("[{}]", fmt::join(v, ","));
}
template <std::size_t N>
Status parse(std::string_view text, std::array<std::int64_t, N>& v, const TensorIndexFn&) {
  std::vector<std::string_view> items;
  if (!detail::splitBracketList(text, items) || items.size() != N) {
    return parseError(fmt::format("'{}' is not a list of {} integers [a,b,...]", text, N));
  }
  for (std::size_t i = 0; i < N; ++i) {
    if (!detail::parseWholeInt(items[i], v[i])) {
      return parseError(fmt::format("list entry {} '{}' is not an integer", i, items[i]));
    }
  }
  return {};
}
template <std::size_t N>
void encode(const std::array<std::int64_t, N>& v, Writer& w) {
  for (const std::int64_t x : v) {
    w.put(x);
  }
}
template <std::size_t N>
Status decode(Reader& r, std::array<std::int64_t, N>& v) {
  for (std::int64_t& x : v) {
    TRN_RETURN_IF_ERROR(r.get(x));
  }
  return {};
}

// ---- IndexPattern: "[[step,count],...]", 1 to 4 pairs ----
inline std::string_view typeName(const IndexPattern*) { return "pattern"; }
inline std::string format(const IndexPattern& p, const TensorNameFn&) {
  std::vector<std::string> pairs;
  for (int d = 0; d < p.numDims; ++d) {
    const Dim& dim = p.dims[static_cast<std::size_t>(d)];
    pairs.push_back(fmt::format("[{},{}]", dim.stride, dim.count));
  }
  return fmt::format("[{}]", fmt::join(pairs, ","));
}
inline Status parse(std::string_view text, IndexPattern& p, const TensorIndexFn&) {
  std::vector<std::string_view> items;
  if (!detail::splitBracketList(text, items) || items.empty() ||
      items.size() > static_cast<std::size_t>(kMaxFreeDims)) {
    return parseError(fmt::format("'{}' is not a pattern of 1 to {} [step,count] pairs", text,
                                  kMaxFreeDims));
  }
  p = IndexPattern{};
  p.numDims = static_cast<std::int32_t>(items.size());
  for (std::size_t d = 0; d < items.size(); ++d) {
    std::vector<std::string_view> pair;
    Dim& dim = p.dims[d];
    if (!detail::splitBracketList(items[d], pair) || pair.size() != 2 ||
        !detail::parseWholeInt(pair[0], dim.stride) || !detail::parseWholeInt(pair[1], dim.count)) {
      return parseError(fmt::format("pattern entry '{}' is not a [step,count] pair", items[d]));
    }
    if (dim.count < 1) {
      return parseError(fmt::format("pattern count {} is not positive", dim.count));
    }
  }
  return {};
}
inline void encode(const IndexPattern& p, Writer& w) {
  w.put(static_cast<std::uint8_t>(p.numDims));
  for (int d = 0; d < p.numDims; ++d) {
    w.put(p.dims[static_cast<std::size_t>(d)].stride);
    w.put(p.dims[static_cast<std::size_t>(d)].count);
  }
}
inline Status decode(Reader& r, IndexPattern& p) {
  std::uint8_t numDims = 0;
  TRN_RETURN_IF_ERROR(r.get(numDims));
  if (numDims < 1 || numDims > kMaxFreeDims) {
    return r.error(fmt::format("pattern with {} dimensions", numDims));
  }
  p = IndexPattern{};
  p.numDims = numDims;
  for (int d = 0; d < p.numDims; ++d) {
    TRN_RETURN_IF_ERROR(r.get(p.dims[static_cast<std::size_t>(d)].stride));
    TRN_RETURN_IF_ERROR(r.get(p.dims[static_cast<std::size_t>(d)].count));
  }
  return {};
}

// ---- ReplicaGroups: "all" or "[[0,1],[2,3]]" ----
inline std::string_view typeName(const ReplicaGroups*) { return "groups"; }
inline std::string format(const ReplicaGroups& g, const TensorNameFn&) {
  return formatReplicaGroups(g);
}
inline Status parse(std::string_view text, ReplicaGroups& g, const TensorIndexFn&) {
  TRN_ASSIGN_OR_RETURN(g, parseReplicaGroups(text));
  return {};
}
/// Version 1: group size and rank count as int32, then the listed ranks as int32.
inline void encode(const ReplicaGroups& g, Writer& w) {
  w.put(g.groupSize);
  const std::span<const std::int32_t> listed = g.listed();
  w.put(static_cast<std::int32_t>(listed.size()));
  for (const std::int32_t rank : listed) {
    w.put(rank);
  }
}
inline Status decode(Reader& r, ReplicaGroups& g) {
  g = ReplicaGroups{};
  TRN_RETURN_IF_ERROR(r.get(g.groupSize));
  TRN_RETURN_IF_ERROR(r.get(g.count));
  if (g.count < 0 || g.count > ReplicaGroups::kMaxRanks) {
    return r.error(
        fmt::format("replica groups of {} ranks (0..{})", g.count, ReplicaGroups::kMaxRanks));
  }
  for (std::int32_t i = 0; i < g.count; ++i) {
    TRN_RETURN_IF_ERROR(r.get(g.ranks[static_cast<std::size_t>(i)]));
  }
  return {};
}

}  // namespace trn::isa::codec
