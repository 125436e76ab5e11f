// `trnsim demo`: the main job. It summarises the chip description and runs one Llama-style
// decoder layer (kernels::runDecoderLayer) on one simulated NeuronCore: every kernel checked
// against its float64 reference, a per-kernel table (simulated time, MFU, what bounds it), the
// layer total, and a Perfetto trace of the whole layer (out/trace.json by default); with --json
// the same figures as one JSON document.
#pragma once

#include <CLI/CLI.hpp>

namespace trn::tools {

/// Adds `demo`; its exit code (exit_codes.h: 1 when a kernel misses its tolerance) goes to
/// `exitCode`.
void registerDemoCommand(CLI::App& app, int& exitCode);

}  // namespace trn::tools
