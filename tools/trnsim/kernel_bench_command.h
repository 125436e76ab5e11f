// `trnsim kernels bench NAME`: run a reference kernel on one simulated core at its default or
// given shapes and dtypes, check every output against the float64 reference, and print the
// simulated time, per-engine utilisation, achieved TFLOP/s, MFU and HBM bandwidth use (or, with
// --json, one JSON document of the same figures).
#pragma once

#include <CLI/CLI.hpp>

namespace trn::tools {

/// Adds `bench` to the `kernels` group; the exit code (exit_codes.h: 1 for a failed numerics
/// check) goes to `exitCode`.
void registerKernelBenchCommand(CLI::App& kernelsGroup, int& exitCode);

}  // namespace trn::tools
