// A chip program: one Program per physical core, launched together at a logical-core size (LNC),
// with tensors shared by name (docs/chip.md). Its binary form is version 2 of the TRNPROG
// container: magic, version, the LNC, the core count, then for each core its physical index and
// its program as a complete single-program TRNPROG (version 1 or 3) of a stated length. The decoder
// reads version 1 as a chip program of one core (physical core 0, LNC 1), validates every count and
// length before it uses it, and rejects duplicate cores and trailing bytes with the byte offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "trn/base/file_reader.h"
#include "trn/base/status.h"
#include "trn/isa/program.h"
#include "trn/isa/program_binary.h"

namespace trn::isa {

/// Version of the multi-core form (version 1 is a single Program, program_binary.h).
inline constexpr std::uint32_t kChipProgramFormatVersion = 2;

/// Most cores of one chip program, and the largest physical core index plus one.
inline constexpr std::size_t kMaxChipProgramCores = 64;
/// Most physical cores per logical core.
inline constexpr std::uint32_t kMaxLogicalCoreSize = 8;
/// Most instructions of all cores together: four programs at ProgramLimits::kMaxInstructions,
/// about 2 GiB packed (instruction_stream.h). A chip of eight cores at 2M each fits.
inline constexpr std::size_t kMaxChipProgramInstructions = std::size_t{1} << 24;

struct ChipProgram {
  struct Core {
    int physicalCore = 0;
    Program program;
  };
  int lnc = 1;
  std::vector<Core> cores;
  /// The format of the cores' programs (program_binary.h): what the encoder writes, and what the
  /// decoder found (all cores share one).
  std::uint32_t programVersion = kProgramFormatVersion;
};

/// Serialises `chip`: version 2, or a single program for one core on physical core 0 at LNC 1 (so
/// that it stays readable by every reader), its programs in `chip.programVersion`. Refuses what the
/// decoder would reject.
Result<std::vector<std::byte>> encodeChipProgram(const ChipProgram& chip);

/// Parses version 1, 2 or 3; `name` is used in error messages. The programs together hold at most
/// kMaxChipProgramInstructions instructions; they are decoded in parallel, on up to one thread per
/// host core, and the result (or the first error in core order) does not depend on the threads.
Result<ChipProgram> decodeChipProgram(std::span<const std::byte> bytes, std::string_view name);
/// The same, from bytes read by range (a file, BoundedFile): the cores' programs are read by the
/// threads that decode them, and the whole file is never in memory at once.
Result<ChipProgram> decodeChipProgram(const ByteSource& source, std::string_view name);

}  // namespace trn::isa
