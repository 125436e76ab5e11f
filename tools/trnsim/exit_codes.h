// The exit statuses of trnsim, in one place: every command maps a failing Status through
// exitCodeFor, so one kind of failure always exits the same way. docs/cli.md documents them.
#pragma once

#include "trn/base/status.h"

namespace trn::tools {

/// What trnsim's exit status means.
enum ExitCode : int {
  kExitOk = 0,
  kExitCheckFailed = 1,     ///< the run finished but an output is outside its float64 tolerance
  kExitUsage = 2,           ///< bad command line (CLI11's parse errors, contradicting options)
  kExitInputError = 3,      ///< a file, .npy, YAML, program text, name, shape or value is bad
  kExitRuleViolation = 4,   ///< a program or kernel breaks a hardware or tile-language rule
  kExitRaceOrDeadlock = 5,  ///< the run found a race or a deadlock
  kExitInternal = 6,        ///< a bug in trnsim or the host ran out of memory
};

/// The exit status for a failing `status` (kExitOk for ok).
int exitCodeFor(const Status& status);

/// "ok", "check-failed", "usage", "input-error", "rule-violation", "race-or-deadlock",
/// "internal": the name --json output gives an exit status.
const char* exitCodeName(int code);

/// Prints the error of `status` (trnsim: error: ...) and returns its exit status.
int reportError(const Status& status);

}  // namespace trn::tools
