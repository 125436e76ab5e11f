#include "fidelity_command.h"

#include <fmt/format.h>

#include "exit_codes.h"
#include "messages.h"
#include "trn/harness/fidelity.h"

namespace trn::tools {

void registerFidelityCommand(CLI::App& app, int& exitCode) {
  CLI::App* cmd =
      app.add_subcommand("fidelity",
                         "Simulate every published kernel measurement again and print the table of "
                         "docs/fidelity.md (timing-only; a few seconds)");
  cmd->callback([&exitCode] {
    const Result<std::vector<harness::FidelityRow>> rows = harness::fidelityRows();
    if (!rows.ok()) {
      exitCode = reportError(rows.status());
      return;
    }
    fmt::print("{}", harness::fidelityTable(*rows));
    exitCode = 0;
  });
}

}  // namespace trn::tools
