// The binary form of a Program: a versioned, little-endian container that encodes each
// instruction as its opcode, engine, synchronisation, source location and declared fields in
// declaration order, at full width (version 1) or compactly (version 3, compact_streams.h). The
// decoder validates everything it reads (magic, version, counts, enum values, string lengths,
// trailing bytes) and rejects corrupt input with a message giving the byte offset; it never reads
// out of bounds. Both enforce ProgramLimits (program.h), as the text parser does.
#pragma once

#include <atomic>
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/isa/program.h"

namespace trn::isa {

/// Version 1: every field at its full width (an access pattern 55 bytes and more, the file name
/// with every instruction).
inline constexpr std::uint32_t kFixedProgramFormatVersion = 1;
/// Version 3: a table of file names, then varint fields in the packed encoding the in-memory
/// streams use (instruction_stream.h), about 60 bytes an instruction instead of 170. (Version 2
/// is the multi-core form, chip_program.h.)
inline constexpr std::uint32_t kCompactProgramFormatVersion = 3;
/// What encodeProgram writes unless told otherwise; decodeProgram reads versions 1 and 3.
inline constexpr std::uint32_t kProgramFormatVersion = kCompactProgramFormatVersion;

/// Serialises a program in format `version` (1 or 3). Refuses, naming the tensor or instruction
/// at fault, a program that decodeProgram would reject (checkProgramForm: outside ProgramLimits,
/// duplicate names, ...).
Result<std::vector<std::byte>> encodeProgram(const Program& program,
                                             std::uint32_t version = kProgramFormatVersion);

/// A bound on the instructions of several programs decoded together, possibly on several
/// threads (the cores of a chip program). Each decoder takes a stream's count before it reads the
/// stream and stops once the bound is passed; whether it is passed depends only on the inputs.
class InstructionBudget {
 public:
  explicit InstructionBudget(std::size_t limit) : limit_(limit) {}
  /// Takes `count` instructions; false once the programs together hold more than the limit.
  bool take(std::size_t count) {
    return used_.fetch_add(count, std::memory_order_relaxed) + count <= limit_ && count <= limit_;
  }
  [[nodiscard]] bool exceeded() const { return used_.load(std::memory_order_relaxed) > limit_; }
  [[nodiscard]] std::size_t limit() const { return limit_; }

 private:
  std::atomic<std::size_t> used_{0};
  std::size_t limit_;
};

/// Parses a serialised program; `name` is used in error messages. With a budget, the program's
/// instructions count against it too (an error once it is exceeded).
Result<Program> decodeProgram(std::span<const std::byte> bytes, std::string_view name,
                              InstructionBudget* budget = nullptr);

}  // namespace trn::isa
