// Command-line options that every running subcommand (run, kernels bench, demo) spells the same
// way, parsed strictly: an integer out of range is an error naming the option, never a silently
// saturated value (CLI11's own integer parsing saturates).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "trn/kernel/kernel.h"

namespace trn::tools {

/// Adds --seed, a decimal integer 0..2^64-1, stored in `seed`.
void addSeedOption(CLI::App* command, std::uint64_t& seed, const std::string& help);

/// Adds --max-instructions, a decimal integer 1..2^64-1, stored in `limit`.
void addMaxInstructionsOption(CLI::App* command, std::uint64_t& limit);

/// Adds --auto-cast none|matmult (neuronx-cc's spelling), stored in `autoCast`.
void addAutoCastOption(CLI::App* command, kernel::AutoCast& autoCast);

}  // namespace trn::tools
