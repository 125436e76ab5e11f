// `trnsim collectives bench`: time a collective over a system's chips for a range of message
// sizes and print the table nccom-test prints (or JSON).
#pragma once

#include <CLI/CLI.hpp>

namespace trn::tools {

/// Adds the `collectives` subcommand group; the chosen action stores its exit code in `exitCode`.
void registerCollectivesCommands(CLI::App& app, int& exitCode);

}  // namespace trn::tools
