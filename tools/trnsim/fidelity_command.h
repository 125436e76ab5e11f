// `trnsim fidelity`: the fidelity report's table (harness/fidelity.h): every published device
// measurement trnsim mirrors, simulated again, with the error per measurement and per set.
#pragma once

#include <CLI/CLI.hpp>

namespace trn::tools {

/// Adds `fidelity`; its exit code (0, or 1 when a simulation fails) goes to `exitCode`.
void registerFidelityCommand(CLI::App& app, int& exitCode);

}  // namespace trn::tools
