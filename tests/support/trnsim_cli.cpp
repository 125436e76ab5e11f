#include "trnsim_cli.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>

namespace trn::testing {

CliRun runCommand(const std::string& binary, const std::string& arguments, bool withStderr) {
  CliRun run;
  const std::string command = binary + " " + arguments + (withStderr ? " 2>&1" : " 2>/dev/null");
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return run;
  }
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    run.output.append(buffer.data(), n);
  }
  const int status = ::pclose(pipe);
  run.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

}  // namespace trn::testing
