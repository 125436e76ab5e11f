// Command-line options that every running subcommand (run, kernels bench, demo) spells the same
// way, parsed strictly: an integer out of range is an error naming the option, never a silently
// saturated value (CLI11's own integer parsing saturates). Also the kernels commands' --plugin,
// and the one helper that writes the offline HTML report (--report) for all of them.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "trn/base/status.h"
#include "trn/kernel/kernel.h"
#include "trn/profile/page_data.h"
#include "trn/spec/chip_spec.h"

namespace trn::tools {

/// Adds --seed, a decimal integer 0..2^64-1, stored in `seed`.
void addSeedOption(CLI::App* command, std::uint64_t& seed, const std::string& help);

/// Adds --max-instructions, a decimal integer 1..2^64-1, stored in `limit`.
void addMaxInstructionsOption(CLI::App* command, std::uint64_t& limit);

/// Adds --auto-cast none|matmult and --auto-cast-type bf16|fp16|tf32|fp8_e4m3 (neuronx-cc's
/// spellings), stored in `autoCast`.
void addAutoCastOption(CLI::App* command, kernel::AutoCast& autoCast);

/// Adds --auto-cast-type (as above), stored in `type`.
void addAutoCastTypeOption(CLI::App* command, DType& type);

/// Adds --plugin PATH (repeatable): shared libraries of user kernels (kernels/plugin.h).
void addPluginOption(CLI::App* command, std::vector<std::string>& plugins);

/// Loads every plugin of --plugin in order; the first error names its file.
Status loadPlugins(const std::vector<std::string>& plugins);

/// Adds --report FILE: the offline HTML report of the run (docs/profiling.md), stored in `path`.
void addReportOption(CLI::App* command, std::string& path);

/// Writes the report of `runs` on `chip` to `path` with `title`, warns when records were cut by
/// the record limit, and (when `announce`) prints the verdicts and where it went with its size.
Status writeReport(const std::string& path, const std::vector<profile::PageRun>& runs,
                   const spec::ChipSpec& chip, const std::string& title, bool announce = true);

}  // namespace trn::tools
