#include "trn/runtime/npy.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>

#include "trn/base/checked.h"
#include "trn/base/file_reader.h"

namespace trn::runtime {
namespace {

constexpr std::array<std::uint8_t, 6> kMagic = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr std::size_t kPreludeV1 = 10;  // magic, version, uint16 header length
constexpr std::size_t kPreludeV2 = 12;  // magic, version, uint32 header length
constexpr std::size_t kAlignment = 64;
constexpr std::size_t kMaxHeaderBytes = 1 << 20;
constexpr std::size_t kMaxDims = 32;  // NumPy's NPY_MAXDIMS

struct TypeInfo {
  NpyType type;
  std::string_view descr;
  std::size_t size;
};

constexpr std::array<TypeInfo, 12> kTypes = {{
    {NpyType::kBool, "|b1", 1},
    {NpyType::kInt8, "|i1", 1},
    {NpyType::kUInt8, "|u1", 1},
    {NpyType::kInt16, "<i2", 2},
    {NpyType::kUInt16, "<u2", 2},
    {NpyType::kFloat16, "<f2", 2},
    {NpyType::kInt32, "<i4", 4},
    {NpyType::kUInt32, "<u4", 4},
    {NpyType::kFloat32, "<f4", 4},
    {NpyType::kInt64, "<i8", 8},
    {NpyType::kUInt64, "<u8", 8},
    {NpyType::kFloat64, "<f8", 8},
}};

const TypeInfo& infoOf(NpyType type) {
  for (const TypeInfo& info : kTypes) {
    if (info.type == type) {
      return info;
    }
  }
  TRN_UNREACHABLE() << "unknown NpyType " << static_cast<int>(type);
  return kTypes[0];
}

/// Maps a descr to a type. NumPy also writes 1-byte types with '<' or '=' and little-endian
/// types with '=' on little-endian hosts; those spellings are accepted.
std::optional<NpyType> typeFromDescr(std::string_view descr) {
  if (descr.size() == 3 && (descr[0] == '<' || descr[0] == '=' || descr[0] == '|')) {
    for (const TypeInfo& info : kTypes) {
      if (info.descr.substr(1) == descr.substr(1) && (info.size == 1 || descr[0] != '|')) {
        return info.type;
      }
    }
  }
  return std::nullopt;
}

/// A strict parser for the Python dict literal of a .npy header, e.g.
/// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view name) : text_(text), name_(name) {}

  Result<NpyArray> parse() {
    NpyArray array;
    bool sawDescr = false;
    bool sawOrder = false;
    bool sawShape = false;
    TRN_RETURN_IF_ERROR(expect('{'));
    while (true) {
      skipSpace();
      if (peek() == '}') {
        ++pos_;
        break;
      }
      TRN_ASSIGN_OR_RETURN(const std::string key, parseString());
      TRN_RETURN_IF_ERROR(expect(':'));
      if (key == "descr") {
        TRN_ASSIGN_OR_RETURN(const std::string descr, parseString());
        const std::optional<NpyType> type = typeFromDescr(descr);
        if (!type) {
          return unsupported(fmt::format(
              "{}: element type '{}' is not supported; expected a little-endian bool, "
              "int8/16/32/64, uint8/16/32/64 or float16/32/64 array",
              name_, descr));
        }
        array.type = *type;
        sawDescr = markSeen(sawDescr);
      } else if (key == "fortran_order") {
        TRN_ASSIGN_OR_RETURN(const bool fortran, parseBool());
        if (fortran) {
          return unsupported(fmt::format(
              "{}: Fortran-ordered arrays are not supported; save a C-ordered array "
              "(numpy.ascontiguousarray)",
              name_));
        }
        sawOrder = markSeen(sawOrder);
      } else if (key == "shape") {
        TRN_ASSIGN_OR_RETURN(array.shape, parseShape());
        sawShape = markSeen(sawShape);
      } else {
        return error(fmt::format("unexpected key '{}'", key));
      }
      if (duplicate_) {
        return error(fmt::format("key '{}' appears twice", key));
      }
      skipSpace();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != '}') {
        return error("expected ',' or '}'");
      }
    }
    if (!sawDescr || !sawOrder || !sawShape) {
      return error(fmt::format("missing key '{}'",
                               !sawDescr ? "descr" : (!sawOrder ? "fortran_order" : "shape")));
    }
    while (pos_ < text_.size() && text_[pos_] == ' ') {
      ++pos_;
    }
    if (pos_ + 1 != text_.size() || text_[pos_] != '\n') {
      return error("the header must end with spaces and one newline after the dictionary");
    }
    return array;
  }

 private:
  bool markSeen(bool seen) {
    duplicate_ = duplicate_ || seen;
    return true;
  }

  [[nodiscard]] char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) {
      ++pos_;
    }
  }

  Status error(std::string_view what) const {
    return parseError(fmt::format("{}: malformed .npy header at character {}: {}", name_, pos_,
                                  what));
  }

  Status expect(char c) {
    skipSpace();
    if (peek() != c) {
      return error(fmt::format("expected '{}'", c));
    }
    ++pos_;
    return {};
  }

  Result<std::string> parseString() {
    skipSpace();
    const char quote = peek();
    if (quote != '\'' && quote != '"') {
      return error("expected a quoted string");
    }
    const std::size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) {
      return error("unterminated string");
    }
    std::string value(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return value;
  }

  Result<bool> parseBool() {
    skipSpace();
    for (const auto& [word, value] : {std::pair{std::string_view("True"), true},
                                      std::pair{std::string_view("False"), false}}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    return error("expected True or False");
  }

  Result<std::vector<std::int64_t>> parseShape() {
    TRN_RETURN_IF_ERROR(expect('('));
    std::vector<std::int64_t> shape;
    bool trailingComma = false;
    while (true) {
      skipSpace();
      if (peek() == ')') {
        ++pos_;
        break;
      }
      if (!std::isdigit(static_cast<unsigned char>(peek()))) {
        return error("expected a non-negative dimension size or ')'");
      }
      std::int64_t dim = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (dim > (std::numeric_limits<std::int64_t>::max() - 9) / 10) {
          return error("dimension size too large");
        }
        dim = dim * 10 + (peek() - '0');
        ++pos_;
      }
      shape.push_back(dim);
      if (shape.size() > kMaxDims) {
        return error(fmt::format("more than {} dimensions", kMaxDims));
      }
      skipSpace();
      trailingComma = peek() == ',';
      if (trailingComma) {
        ++pos_;
      } else if (peek() != ')') {
        return error("expected ',' or ')' in shape");
      }
    }
    if (shape.size() == 1 && !trailingComma) {
      return error("a one-dimensional shape is written '(n,)'");
    }
    return shape;
  }

  std::string_view text_;
  std::string_view name_;
  std::size_t pos_ = 0;
  bool duplicate_ = false;
};

std::uint32_t readLittleEndian(std::span<const std::byte> bytes) {
  std::uint32_t value = 0;
  for (std::size_t i = bytes.size(); i-- > 0;) {
    value = (value << 8) | static_cast<std::uint8_t>(bytes[i]);
  }
  return value;
}

}  // namespace

std::size_t npyItemSize(NpyType type) { return infoOf(type).size; }

std::string_view npyDescr(NpyType type) { return infoOf(type).descr; }

std::optional<std::int64_t> NpyArray::elementCount() const {
  Checked<std::int64_t> count = 1;
  for (const std::int64_t dim : shape) {
    if (dim < 0) {
      return std::nullopt;
    }
    count *= dim;
  }
  return count.get();
}

Result<NpyArray> parseNpy(std::span<const std::byte> bytes, std::string_view name) {
  if (bytes.size() < kPreludeV1 ||
      std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) != 0) {
    return parseError(fmt::format("{}: not a .npy file (missing the \\x93NUMPY magic)", name));
  }
  const auto major = static_cast<std::uint8_t>(bytes[6]);
  const auto minor = static_cast<std::uint8_t>(bytes[7]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    return unsupported(fmt::format("{}: .npy format version {}.{} is not supported (1.0, 2.0, 3.0)",
                                   name, major, minor));
  }
  const std::size_t prelude = major == 1 ? kPreludeV1 : kPreludeV2;
  if (bytes.size() < prelude) {
    return parseError(fmt::format("{}: file ends inside the .npy prelude", name));
  }
  const std::size_t headerLength = readLittleEndian(bytes.subspan(8, prelude - 8));
  if (headerLength > kMaxHeaderBytes || headerLength > bytes.size() - prelude) {
    return parseError(fmt::format("{}: header length {} runs past the end of the {}-byte file",
                                  name, headerLength, bytes.size()));
  }
  const std::string_view header(reinterpret_cast<const char*>(bytes.data()) + prelude,
                                headerLength);
  TRN_ASSIGN_OR_RETURN(NpyArray array, HeaderParser(header, name).parse());

  Checked<std::int64_t> size = static_cast<std::int64_t>(npyItemSize(array.type));
  for (const std::int64_t dim : array.shape) {
    size *= dim;
  }
  if (!size.valid()) {
    return outOfRange(fmt::format("{}: shape ({}) of {} is too large: its size in bytes does not "
                                  "fit in 64 bits",
                                  name, fmt::join(array.shape, ", "), npyDescr(array.type)));
  }
  const auto expected = static_cast<std::uint64_t>(size.value());
  const std::size_t available = bytes.size() - prelude - headerLength;
  if (expected != available) {
    return parseError(fmt::format("{}: shape ({}) of {} needs {} data bytes but the file has {}",
                                  name, fmt::join(array.shape, ", "), npyDescr(array.type),
                                  expected, available));
  }
  array.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(prelude + headerLength),
                    bytes.end());
  return array;
}

Result<NpyArray> readNpy(const std::string& path, std::uint64_t maxDataBytes) {
  constexpr std::uint64_t kMaxHeaderFileBytes = kPreludeV2 + kMaxHeaderBytes;
  const std::uint64_t maxFileBytes =
      std::min(maxDataBytes, std::numeric_limits<std::uint64_t>::max() - kMaxHeaderFileBytes) +
      kMaxHeaderFileBytes;
  TRN_ASSIGN_OR_RETURN(const FileBytes raw, readFileBounded(path, maxFileBytes, ".npy file"));
  TRN_ASSIGN_OR_RETURN(NpyArray array, parseNpy(raw, path));
  if (array.data.size() > maxDataBytes) {
    return outOfRange(fmt::format("{}: shape ({}) of {} holds {} data bytes, more than the {} "
                                  "that can be used here",
                                  path, fmt::join(array.shape, ", "), npyDescr(array.type),
                                  array.data.size(), maxDataBytes));
  }
  return array;
}

Result<std::vector<std::byte>> serializeNpy(const NpyArray& array) {
  Checked<std::int64_t> expected = static_cast<std::int64_t>(npyItemSize(array.type));
  for (const std::int64_t dim : array.shape) {
    if (dim < 0) {
      return invalidArgument(fmt::format("negative dimension {} in shape", dim));
    }
    expected *= dim;
  }
  if (!expected.valid()) {
    return outOfRange(fmt::format("shape ({}) of {} is too large: its size in bytes does not fit "
                                  "in 64 bits",
                                  fmt::join(array.shape, ", "), npyDescr(array.type)));
  }
  if (static_cast<std::uint64_t>(expected.value()) != array.data.size()) {
    return invalidArgument(fmt::format("shape ({}) of {} needs {} bytes but the array holds {}",
                                       fmt::join(array.shape, ", "), npyDescr(array.type),
                                       expected.value(), array.data.size()));
  }
  if (array.shape.size() > kMaxDims) {
    return invalidArgument(fmt::format("{} dimensions; a .npy array has at most {}",
                                       array.shape.size(), kMaxDims));
  }
  std::string shape = fmt::format("{}", fmt::join(array.shape, ", "));
  if (array.shape.size() == 1) {
    shape += ',';
  }
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}",
                                    npyDescr(array.type), shape);
  const bool version2 = header.size() + 1 + kPreludeV1 > std::numeric_limits<std::uint16_t>::max();
  const std::size_t prelude = version2 ? kPreludeV2 : kPreludeV1;
  const std::size_t unpadded = prelude + header.size() + 1;
  header.append((kAlignment - unpadded % kAlignment) % kAlignment, ' ');
  header += '\n';

  std::vector<std::byte> out;
  out.reserve(prelude + header.size() + array.data.size());
  for (const std::uint8_t b : kMagic) {
    out.push_back(static_cast<std::byte>(b));
  }
  out.push_back(static_cast<std::byte>(version2 ? 2 : 1));
  out.push_back(std::byte{0});
  for (std::size_t i = 0; i < prelude - 8; ++i) {
    out.push_back(static_cast<std::byte>((header.size() >> (8 * i)) & 0xff));
  }
  for (const char c : header) {
    out.push_back(static_cast<std::byte>(c));
  }
  out.insert(out.end(), array.data.begin(), array.data.end());
  return out;
}

Status writeNpy(const std::string& path, const NpyArray& array) {
  TRN_ASSIGN_OR_RETURN(const std::vector<std::byte> bytes, serializeNpy(array));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    return ioError(fmt::format("{}: cannot open for writing: {}", path, std::strerror(errno)));
  }
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    return ioError(fmt::format("{}: write failed", path));
  }
  return {};
}

}  // namespace trn::runtime
