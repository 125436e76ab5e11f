// Test support: run the built trnsim binary with arguments and capture its exit code and output.
#pragma once

#include <string>

namespace trn::testing {

struct CliRun {
  int exitCode = -1;
  std::string output;  ///< stdout and stderr together
};

/// Runs `binary arguments` through the shell, capturing stdout and stderr (only stdout when
/// `withStderr` is false: for output a program parses, such as --json documents).
CliRun runCommand(const std::string& binary, const std::string& arguments, bool withStderr = true);

}  // namespace trn::testing
