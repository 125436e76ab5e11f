// The round trips every program a reader accepts must survive, shared by the program_text and
// program_binary fuzz targets: the encoder accepts it (the formats share ProgramLimits), binary
// decodes back to the same program, and text parses back to the same program and the same text.
// Programs are compared by their encoding, which holds every field bit for bit (including NaN
// payloads, which operator== would call unequal).
#pragma once

#include <string>
#include <vector>

#include "trn/base/check.h"
#include "trn/isa/program.h"
#include "trn/isa/program_binary.h"
#include "trn/isa/program_text.h"

namespace trn::fuzz {

/// The encoding of `program` in format `version`, which must be accepted. Returns the bytes.
inline std::vector<std::byte> mustEncode(const isa::Program& program, std::string_view what,
                                         std::uint32_t version = isa::kProgramFormatVersion) {
  Result<std::vector<std::byte>> bytes = isa::encodeProgram(program, version);
  TRN_CHECK(bytes.ok()) << "the encoder refuses " << what << ": " << bytes.status().toString();
  return std::move(bytes).value();
}

/// Checks binary and text round trips of an accepted program, in both binary versions; returns
/// its encoding in `version`.
inline std::vector<std::byte> checkRoundTrips(const isa::Program& program,
                                              std::uint32_t version = isa::kProgramFormatVersion) {
  const std::uint32_t other = version == isa::kFixedProgramFormatVersion
                                  ? isa::kCompactProgramFormatVersion
                                  : isa::kFixedProgramFormatVersion;
  const Result<isa::Program> viaOther =
      isa::decodeProgram(mustEncode(program, "an accepted program", other), "other.tprog");
  TRN_CHECK(viaOther.ok()) << "the decoder rejects what the encoder wrote in version " << other
                           << ": " << viaOther.status().toString();
  const std::vector<std::byte> binary = mustEncode(*viaOther, "a program read back", version);

  const Result<isa::Program> decoded = isa::decodeProgram(binary, "encoded.tprog");
  TRN_CHECK(decoded.ok()) << "the decoder rejects what the encoder wrote: "
                          << decoded.status().toString();
  TRN_CHECK(mustEncode(*decoded, "a decoded program", version) == binary)
      << "encode -> decode changed the program";

  const std::string text = isa::formatProgramText(program);
  const Result<isa::Program> parsed = isa::parseProgramText(text, "formatted.tasm");
  TRN_CHECK(parsed.ok()) << "the parser rejects what the formatter wrote: "
                         << parsed.status().toString() << "\n"
                         << text;
  TRN_CHECK(mustEncode(*parsed, "a parsed program", version) == binary)
      << "format -> parse changed the program:\n"
      << text;
  TRN_CHECK(isa::formatProgramText(*parsed) == text) << "format -> parse -> format changed:\n"
                                                     << text;
  return binary;
}

}  // namespace trn::fuzz
