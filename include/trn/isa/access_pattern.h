// Tensor access patterns: how an instruction operand names memory. An on-chip operand covers a
// contiguous range of partitions of SBUF or PSUM and, in every one of them, the same sequence of
// elements given by up to four free dimensions of (stride, count) in elements from a byte offset.
// An HBM operand names a program tensor; its first (stride, count) pair plays the partition role
// (rows), so the same pattern describes both sides of a DMA. Elements are visited partition-major,
// then free dimensions outermost to innermost, the order in which engines stream them.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "trn/base/status.h"
#include "trn/numerics/dtype.h"

namespace trn::isa {

/// A memory of the core.
enum class Memory : std::uint8_t {
  kHbm,   ///< device DRAM, linear; reached by DMA
  kSbuf,  ///< state buffer: 128 partitions
  kPsum,  ///< partial-sum buffer: 128 partitions x 8 banks, TensorE output
};

/// "hbm", "sbuf" or "psum".
std::string_view memoryName(Memory memory);

/// One dimension of an access pattern: step between consecutive indices and number of indices.
struct Dim {
  std::int64_t stride = 1;  ///< in elements; may be zero (broadcast) or negative
  std::int64_t count = 1;   ///< number of indices, >= 1

  friend bool operator==(const Dim&, const Dim&) = default;
};

/// The maximum number of free dimensions of an access pattern (hardware-trn2.md §5.1).
inline constexpr int kMaxFreeDims = 4;

/// A strided view of memory used as an instruction operand.
struct AccessPattern {
  Memory memory = Memory::kSbuf;
  DType dtype = DType::kFp32;
  /// HBM only: index of the program tensor this pattern addresses.
  std::int32_t tensor = -1;
  /// SBUF/PSUM: first partition. HBM: always 0.
  std::int64_t partitionStart = 0;
  /// SBUF/PSUM: number of consecutive partitions. HBM: number of rows.
  std::int64_t partitionCount = 1;
  /// HBM only: elements between consecutive rows.
  std::int64_t partitionStride = 0;
  /// Byte offset of element 0: within each partition (SBUF/PSUM) or from the tensor start (HBM).
  std::int64_t offset = 0;
  /// Free dimensions, outermost first; only the first numDims entries are used.
  std::array<Dim, kMaxFreeDims> dims{};
  std::int32_t numDims = 1;

  // The sizes below use plain 64-bit arithmetic: they are exact only for a pattern whose
  // checkedExtent() exists, which the verifier requires of every operand before a program runs
  // (debug builds check it on every call). Code that meets unverified patterns uses
  // checkedExtent().

  /// Number of elements visited in each partition (the product of the free counts).
  [[nodiscard]] std::int64_t freeSize() const;

  /// Total number of elements (partitions or rows times freeSize()).
  [[nodiscard]] std::int64_t elementCount() const;

  /// Byte offset, relative to the partition (or, for HBM, to the row) start, of the element with
  /// free index `flat` (0 <= flat < freeSize(), row-major over the free dimensions).
  [[nodiscard]] std::int64_t freeByteOffset(std::int64_t flat) const;

  /// Lowest and one-past-highest byte touched within a partition (or within the tensor, for
  /// HBM, including the row stride): the footprint used for bounds checks and race detection.
  struct ByteRange {
    std::int64_t begin;
    std::int64_t end;
  };
  [[nodiscard]] ByteRange byteRange() const;

  /// The pattern's sizes computed with checked arithmetic (base/checked.h).
  struct Extent {
    std::int64_t freeSize;      ///< elements per partition (or row)
    std::int64_t elementCount;  ///< elements in all
    ByteRange bytes;            ///< as byteRange()
  };
  /// The extent, or nullopt when a count is below 1 or any product or sum of counts, strides,
  /// element bytes and the offset does not fit in 64 bits.
  [[nodiscard]] std::optional<Extent> checkedExtent() const;

  friend bool operator==(const AccessPattern&, const AccessPattern&) = default;
};

/// Renders a pattern in program-text syntax:
///   sbuf[0:128]+256:bf16[[1,512]]          partitions 0..127, byte offset 256, 512 elements
///   psum[0:64]:fp32[[512,2],[1,256]]       two free dims
///   hbm:a+4096:bf16[[1024,128],[1,512]]    tensor a; first pair = rows (stride, count)
/// `tensorNames` maps tensor indices to names for HBM operands.
std::string formatAccessPattern(const AccessPattern& ap,
                                const std::function<std::string_view(std::int32_t)>& tensorName);

/// Parses the syntax above. `tensorIndex` maps a name to its index or returns an error.
Result<AccessPattern> parseAccessPattern(
    std::string_view text, const std::function<Result<std::int32_t>(std::string_view)>& tensorIndex);

}  // namespace trn::isa
