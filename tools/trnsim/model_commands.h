// `trnsim compile` and `trnsim graph run`: an ONNX model through the graph compiler onto a
// simulated chip (docs/compiler.md).
#pragma once

#include <CLI/CLI.hpp>

namespace trn::tools {

void registerModelCommands(CLI::App& app, CLI::App& graphCommand, int& exitCode);

}  // namespace trn::tools
