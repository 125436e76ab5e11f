// The bytes an instruction operand touches, for race detection (core) and dependency analysis
// (kernel backend). A footprint is a bounding box (a partition range times a byte range within
// each partition, or a byte range of one HBM tensor) that rejects most pairs cheaply, plus the
// access pattern itself for an exact element-level overlap test when the boxes meet (interleaved
// strided accesses of two engines do not race). Most patterns are "rows": R runs of L contiguous
// bytes, S bytes apart; two such footprints are compared arithmetically, others by their merged
// byte runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trn/isa/access_pattern.h"
#include "trn/isa/instruction_set.h"

namespace trn::isa {

/// A byte range [begin, end).
struct ByteInterval {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

/// R runs of L contiguous bytes starting S bytes apart (S >= L), from byte `first`.
struct RowShape {
  std::int64_t first = 0;
  std::int64_t stride = 0;
  std::int64_t rows = 0;  ///< 0: the pattern is not row-shaped
  std::int64_t length = 0;
};

struct Footprint {
  Memory memory = Memory::kSbuf;
  bool write = false;
  std::int32_t tensor = -1;         ///< HBM tensor index
  std::int64_t firstPartition = 0;  ///< SBUF/PSUM partition range [first, end); HBM: [0, 1)
  std::int64_t endPartition = 1;
  ByteInterval bytes;  ///< within each partition, or within the HBM tensor
  RowShape rows;       ///< the same bytes as rows, when the pattern allows
  /// The operand itself, for the exact test of patterns that are not row-shaped. It points into
  /// the instruction, which must outlive the footprint (the program of a running core does).
  const AccessPattern* pattern = nullptr;

  /// The footprint of `ap`, read or written.
  static Footprint of(const AccessPattern& ap, bool write);
};

/// True when the bounding boxes of `a` and `b` intersect (same memory and tensor, overlapping
/// partitions and bytes).
inline bool boxesOverlap(const Footprint& a, const Footprint& b) {
  return a.memory == b.memory && a.tensor == b.tensor && a.firstPartition < b.endPartition &&
         b.firstPartition < a.endPartition && a.bytes.begin < b.bytes.end &&
         b.bytes.begin < a.bytes.end;
}

/// Whether the exact tests below read the footprints' patterns: unless both are rows of one
/// stride, which compare arithmetically.
bool overlapNeedsPatterns(const Footprint& a, const Footprint& b);

/// The first byte range both patterns touch, or nothing. Exact: element runs are compared.
/// For SBUF/PSUM the result is relative to each partition of the common partition range.
std::optional<ByteInterval> firstOverlap(const Footprint& a, const Footprint& b);

/// The first device byte range two HBM footprints both touch when their tensors lie at device
/// addresses `baseA` and `baseB` (tensors of any programs, on any cores), or nothing. Exact.
std::optional<ByteInterval> firstDeviceOverlap(const Footprint& a, std::int64_t baseA,
                                               const Footprint& b, std::int64_t baseB);

/// Replaces `out` with the data operands an instruction reads and writes (role input / output of
/// its fields).
void operandFootprints(const InstructionBody& body, std::vector<Footprint>& out);

/// "sbuf partitions 0..127 bytes 0..1023" / "hbm tensor 'a' bytes 0..4095"; `tensorName` names
/// HBM tensors.
std::string describeRange(const Footprint& f, ByteInterval bytes, std::int64_t firstPartition,
                          std::int64_t endPartition, const std::string& tensorName);

}  // namespace trn::isa
