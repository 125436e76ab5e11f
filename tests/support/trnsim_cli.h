// Test support: run the built trnsim binary with arguments and capture its exit code and output.
#pragma once

#include <string>

namespace trn::testing {

struct CliRun {
  int exitCode = -1;
  std::string output;  ///< stdout and stderr together
};

/// Runs `binary arguments` through the shell, capturing stdout and stderr.
CliRun runCommand(const std::string& binary, const std::string& arguments);

}  // namespace trn::testing
