// `trnsim spec show|diff|list|schema`: print, compare and list chip descriptions.
#pragma once

#include <CLI/CLI.hpp>

namespace trn::tools {

/// Adds the `spec` subcommand group; the chosen action stores its exit code in `exitCode`.
void registerSpecCommands(CLI::App& app, int& exitCode);

}  // namespace trn::tools
