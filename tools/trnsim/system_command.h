// `trnsim system list|show`: list and print system descriptions (configs/systems).
#pragma once

#include <CLI/CLI.hpp>

namespace trn::tools {

/// Adds the `system` subcommand group; the chosen action stores its exit code in `exitCode`.
void registerSystemCommands(CLI::App& app, int& exitCode);

}  // namespace trn::tools
