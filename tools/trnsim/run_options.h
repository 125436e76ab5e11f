// Command-line options that every running subcommand (run, kernels bench, demo) spells the same
// way, parsed strictly: an integer out of range is an error naming the option, never a silently
// saturated value (CLI11's own integer parsing saturates). Also the kernels commands' --plugin.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "trn/base/status.h"
#include "trn/kernel/kernel.h"

namespace trn::tools {

/// Adds --seed, a decimal integer 0..2^64-1, stored in `seed`.
void addSeedOption(CLI::App* command, std::uint64_t& seed, const std::string& help);

/// Adds --max-instructions, a decimal integer 1..2^64-1, stored in `limit`.
void addMaxInstructionsOption(CLI::App* command, std::uint64_t& limit);

/// Adds --auto-cast none|matmult (neuronx-cc's spelling), stored in `autoCast`.
void addAutoCastOption(CLI::App* command, kernel::AutoCast& autoCast);

/// Adds --plugin PATH (repeatable): shared libraries of user kernels (kernels/plugin.h).
void addPluginOption(CLI::App* command, std::vector<std::string>& plugins);

/// Loads every plugin of --plugin in order; the first error names its file.
Status loadPlugins(const std::vector<std::string>& plugins);

}  // namespace trn::tools
