// `trnsim demo`: the main job on a built-in workload. Until the kernel language and the reference
// kernels exist, it summarises the Trn2 description and runs a matmul + GELU program on the
// functional core with seeded inputs, checking the result against a float64 reference.
#pragma once

#include <CLI/CLI.hpp>

namespace trn::tools {

/// Adds `demo`; its exit code (0, or 1 when loading or the numerics check fails) goes to
/// `exitCode`.
void registerDemoCommand(CLI::App& app, int& exitCode);

}  // namespace trn::tools
