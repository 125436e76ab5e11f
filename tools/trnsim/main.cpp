// trnsim: the command-line front end. Each subcommand group lives in its own file and registers
// itself on the CLI11 application here. Exit statuses are those of exit_codes.h (docs/cli.md):
// command-line errors exit 2, as CLI11's parse errors do; allocation failures and unexpected
// exceptions are reported as internal errors rather than left to abort the process.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "collectives_command.h"
#include "demo_command.h"
#include "exit_codes.h"
#include "fidelity_command.h"
#include "graph_command.h"
#include "json_output.h"
#include "kernel_commands.h"
#include "messages.h"
#include "program_commands.h"
#include "spec_command.h"
#include "system_command.h"

int main(int argc, char** argv) {
  CLI::App app{"trnsim: a software model of a Trainium2-class accelerator"};
  app.require_subcommand(1);
  app.set_version_flag("--version",
                       std::string("trnsim ") + std::string(trn::tools::versionString()));
  int exitCode = 0;
  trn::tools::registerSpecCommands(app, exitCode);
  trn::tools::registerDemoCommand(app, exitCode);
  trn::tools::registerFidelityCommand(app, exitCode);
  trn::tools::registerProgramCommands(app, exitCode);
  trn::tools::registerKernelCommands(app, exitCode);
  trn::tools::registerSystemCommands(app, exitCode);
  trn::tools::registerCollectivesCommands(app, exitCode);
  trn::tools::registerGraphCommands(app, exitCode);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {
      return app.exit(e);  // --help, --version
    }
    trn::tools::printError(e.what());
    std::fprintf(stderr, "run 'trnsim --help' for usage\n");
    return trn::tools::kExitUsage;
  } catch (const std::bad_alloc&) {
    // The large allocations (device memory, files, IR) report their sizes themselves; this is
    // the last line for the rest.
    trn::tools::printError(
        "out of host memory (an allocation failed); the input needs more "
        "memory than this host has");
    return trn::tools::kExitInternal;
  } catch (const std::length_error& e) {
    trn::tools::printError(fmt::format("a size is too large to allocate ({})", e.what()));
    return trn::tools::kExitInternal;
  } catch (const std::exception& e) {
    trn::tools::printError(fmt::format("internal error (please report it): {}", e.what()));
    return trn::tools::kExitInternal;
  }
  return exitCode;
}
