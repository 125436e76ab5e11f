// Reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0), the exchange format
// for kernel inputs and outputs. Headers are validated strictly: a file that is truncated, has
// trailing bytes, an unknown element type, big-endian or Fortran-ordered data, or a malformed
// header dictionary is rejected with a message naming the file and what is wrong. Formats NumPy
// lacks (bf16, fp8) travel as raw uint16/uint8 arrays; the caller gives their meaning.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trn/base/status.h"

namespace trn::runtime {

/// The element types trnsim reads and writes, named by their NumPy `descr`.
enum class NpyType {
  kBool,     ///< |b1
  kInt8,     ///< |i1
  kUInt8,    ///< |u1
  kInt16,    ///< <i2
  kUInt16,   ///< <u2
  kFloat16,  ///< <f2
  kInt32,    ///< <i4
  kUInt32,   ///< <u4
  kFloat32,  ///< <f4
  kInt64,    ///< <i8
  kUInt64,   ///< <u8
  kFloat64,  ///< <f8
};

/// Bytes per element of `type`.
std::size_t npyItemSize(NpyType type);

/// The little-endian NumPy descr of `type`, e.g. "<f4" or "|u1".
std::string_view npyDescr(NpyType type);

/// A dense, C-ordered array: element type, shape (empty for a scalar) and raw little-endian data.
struct NpyArray {
  NpyType type = NpyType::kFloat32;
  std::vector<std::int64_t> shape;
  std::vector<std::byte> data;

  /// Product of the shape (1 for a scalar); nullopt if a dimension is negative or the product
  /// does not fit in int64 (never for an array parseNpy returned).
  [[nodiscard]] std::optional<std::int64_t> elementCount() const;
};

/// Parses the bytes of a .npy file; `name` is used in error messages.
Result<NpyArray> parseNpy(std::span<const std::byte> bytes, std::string_view name);

/// The most data bytes readNpy accepts unless its caller knows better: 4 GiB, 2^30 fp32
/// elements, 180x the largest tensor of the demo's decoder layer (its [2048, 5632] bf16 MLP
/// weights, 23 MB).
inline constexpr std::uint64_t kDefaultMaxNpyDataBytes = std::uint64_t{4} << 30;

/// Reads and parses a .npy file of at most `maxDataBytes` data bytes (plus its header): the
/// caller passes the most it can use, e.g. the size of the tensor it binds the file to. The file
/// must be a regular file; its size is checked before anything is allocated.
Result<NpyArray> readNpy(const std::string& path,
                         std::uint64_t maxDataBytes = kDefaultMaxNpyDataBytes);

/// Serialises `array` as a version 1.0 .npy file (2.0 if the header does not fit), with the
/// header padded so the data starts at a multiple of 64 bytes, as NumPy does.
Result<std::vector<std::byte>> serializeNpy(const NpyArray& array);

/// Serialises and writes `array` to `path`.
Status writeNpy(const std::string& path, const NpyArray& array);

}  // namespace trn::runtime
