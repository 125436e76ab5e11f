// trnsim: the command-line front end. Each subcommand group lives in its own file and registers
// itself on the CLI11 application here. User errors exit with status 1, as do allocation
// failures, which are reported rather than left to abort the process.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <new>
#include <stdexcept>

#include "collectives_command.h"
#include "demo_command.h"
#include "fidelity_command.h"
#include "kernel_commands.h"
#include "messages.h"
#include "program_commands.h"
#include "spec_command.h"
#include "system_command.h"

int main(int argc, char** argv) {
  CLI::App app{"trnsim: a software model of a Trainium2-class accelerator"};
  app.require_subcommand(1);
  int exitCode = 0;
  trn::tools::registerSpecCommands(app, exitCode);
  trn::tools::registerDemoCommand(app, exitCode);
  trn::tools::registerFidelityCommand(app, exitCode);
  trn::tools::registerProgramCommands(app, exitCode);
  trn::tools::registerKernelCommands(app, exitCode);
  trn::tools::registerSystemCommands(app, exitCode);
  trn::tools::registerCollectivesCommands(app, exitCode);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {
      return app.exit(e);  // --help
    }
    trn::tools::printError(e.what());
    std::fprintf(stderr, "run 'trnsim --help' for usage\n");
    return 1;
  } catch (const std::bad_alloc&) {
    // The large allocations (device memory, files, IR) report their sizes themselves; this is
    // the last line for the rest.
    trn::tools::printError("out of host memory (an allocation failed); the input needs more "
                           "memory than this host has");
    return 1;
  } catch (const std::length_error& e) {
    trn::tools::printError(fmt::format("a size is too large to allocate ({})", e.what()));
    return 1;
  }
  return exitCode;
}
