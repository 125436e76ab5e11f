// A chip program: one Program per physical core, launched together at a logical-core size (LNC),
// with tensors shared by name (docs/chip.md). Its binary form is version 2 of the TRNPROG
// container: magic, version, the LNC, the core count, then for each core its physical index and
// its program as a complete version-1 TRNPROG of a stated length. The decoder reads version 1 as a
// chip program of one core (physical core 0, LNC 1), validates every count and length before it
// uses it, and rejects duplicate cores and trailing bytes with the byte offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/isa/program.h"

namespace trn::isa {

/// Version of the multi-core form (version 1 is a single Program, program_binary.h).
inline constexpr std::uint32_t kChipProgramFormatVersion = 2;

/// Most cores of one chip program, and the largest physical core index plus one.
inline constexpr std::size_t kMaxChipProgramCores = 64;
/// Most physical cores per logical core.
inline constexpr std::uint32_t kMaxLogicalCoreSize = 8;

struct ChipProgram {
  struct Core {
    int physicalCore = 0;
    Program program;
  };
  int lnc = 1;
  std::vector<Core> cores;
};

/// Serialises `chip`: version 2, or version 1 for one core on physical core 0 at LNC 1 (so that
/// a single program stays readable by every reader). Refuses what the decoder would reject.
Result<std::vector<std::byte>> encodeChipProgram(const ChipProgram& chip);

/// Parses version 1 or 2; `name` is used in error messages. The programs together hold at most
/// ProgramLimits::kMaxInstructions instructions (the host-memory bound of one program).
Result<ChipProgram> decodeChipProgram(std::span<const std::byte> bytes, std::string_view name);

}  // namespace trn::isa
