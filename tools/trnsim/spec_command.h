// `trnsim spec show|diff|list|schema`: print, compare and list chip descriptions. Errors go to
// stderr as "trnsim: error: ...".
#pragma once

#include <CLI/CLI.hpp>

namespace trn::tools {

/// Adds the `spec` subcommand group; the chosen action stores its exit code in `exitCode`.
void registerSpecCommands(CLI::App& app, int& exitCode);

/// Prints `message` to stderr, one "trnsim: error: " line per line of the message.
void printError(std::string_view message);

}  // namespace trn::tools
