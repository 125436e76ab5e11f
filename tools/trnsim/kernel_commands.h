// `trnsim kernels list|compile|bench`: the reference kernel library from the command line.
// `compile` traces a kernel at its default or given shapes (--shape, --dtype, as bench takes them)
// through the backend passes, prints what the backend did, optionally prints the kernel IR after
// one pass (--dump-after) and saves the Program; `bench` is in kernel_bench_command.h. Each takes
// --plugin to add user kernels from shared libraries first.
#pragma once

#include <CLI/CLI.hpp>

namespace trn::tools {

/// Adds the `kernels` subcommand group; the chosen action stores its exit code in `exitCode`.
void registerKernelCommands(CLI::App& app, int& exitCode);

}  // namespace trn::tools
