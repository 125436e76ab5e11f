// `trnsim graph show MODEL.onnx [--dump-after PASS]... [--dim NAME=N]...`: imports an ONNX
// model into the graph IR, runs the graph passes that exist (import, shapes) and prints the
// graph: nodes, types, shapes, parameter count and bytes.
#pragma once

#include <CLI/CLI.hpp>

namespace trn::tools {

/// Adds the `graph` subcommand group; the chosen action stores its exit code in `exitCode`.
void registerGraphCommands(CLI::App& app, int& exitCode);

}  // namespace trn::tools
