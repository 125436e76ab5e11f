// `trnsim graph show MODEL.onnx [--dump-after PASS]... [--dim NAME=N]...`: imports an ONNX
// model into the graph IR, runs the graph passes (import, shapes, fold, fold-batchnorm, layout) and prints the
// graph: nodes, types, shapes, parameter count and bytes. The group also holds `graph run`
// (model_commands.h).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trn/base/status.h"

namespace trn::tools {

/// The sizes of --dim NAME=N options; an error names a malformed one.
Result<std::map<std::string, std::int64_t>> parseDims(const std::vector<std::string>& dims);

/// Adds the `graph` subcommand group; the chosen action stores its exit code in `exitCode`.
void registerGraphCommands(CLI::App& app, int& exitCode);

}  // namespace trn::tools
