// The instruction-set reference, generated from the instruction declarations: the one-line
// catalogue printed by `trnsim isa list` and the per-instruction page of `trnsim isa show NAME`
// (opcode, engines, cost class, every field with its type, role and meaning, and the text form).
#pragma once

#include <string>
#include <string_view>

#include "trn/base/status.h"

namespace trn::isa {

/// One line per instruction: mnemonic, engines, cost class, summary.
std::string instructionCatalogue();

/// The reference page of instruction `mnemonic`; the error lists close matches.
Result<std::string> instructionPage(std::string_view mnemonic);

}  // namespace trn::isa
