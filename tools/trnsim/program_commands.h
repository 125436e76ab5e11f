// `trnsim asm|disasm|run|isa`: convert programs between text and binary, run them on the
// functional core with .npy inputs and outputs, and print the instruction-set reference.
#pragma once

#include <CLI/CLI.hpp>

namespace trn::tools {

/// Adds `asm`, `disasm`, `run` and the `isa` group; the chosen action stores its exit code in
/// `exitCode`.
void registerProgramCommands(CLI::App& app, int& exitCode);

}  // namespace trn::tools
