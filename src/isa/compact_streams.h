// The instruction streams of the compact binary program format (version 3, program_binary.h):
// after the tensor table, a table of the distinct source-location file names, the five stream
// counts, then each instruction as varint opcode, engine byte, waits and updates (varint count,
// then zigzag semaphore, one-byte comparison or operation, zigzag value), varint file index,
// zigzag line, and its fields in the packed encoding of packed_fields.h. Internal to the isa
// module.
#pragma once

#include <cstddef>
#include <vector>

#include "field_codec.h"
#include "trn/isa/program.h"
#include "trn/isa/program_binary.h"

namespace trn::isa::compact {

/// Appends the streams of `program` (already checked with checkProgramForm) to `out`.
void encodeStreams(const Program& program, std::vector<std::byte>& out);

/// Reads the streams into `program`, whose tensors are already read. Every count, index and
/// value is bounded before use (the instruction count also by `budget`, if any); errors give the
/// byte offset.
Status decodeStreams(codec::Reader& r, Program& program, InstructionBudget* budget);

}  // namespace trn::isa::compact
