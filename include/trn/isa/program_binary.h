// The binary form of a Program: a versioned, little-endian container that encodes each
// instruction as its opcode, engine, synchronisation, source location and declared fields in
// declaration order. The decoder validates everything it reads (magic, version, counts, enum
// values, string lengths, trailing bytes) and rejects corrupt input with a message giving the
// byte offset; it never reads out of bounds. Both enforce ProgramLimits (program.h), as the text
// parser does.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/isa/program.h"

namespace trn::isa {

/// Version written by encodeProgram and the only one decodeProgram accepts.
inline constexpr std::uint32_t kProgramFormatVersion = 1;

/// Serialises a program. Refuses, naming the tensor or instruction at fault, a program that
/// decodeProgram would reject (checkProgramForm: outside ProgramLimits, duplicate names, ...).
Result<std::vector<std::byte>> encodeProgram(const Program& program);

/// Parses a serialised program; `name` is used in error messages.
Result<Program> decodeProgram(std::span<const std::byte> bytes, std::string_view name);

}  // namespace trn::isa
