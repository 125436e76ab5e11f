#include "exit_codes.h"

#include "messages.h"

namespace trn::tools {

int exitCodeFor(const Status& status) {
  switch (status.code()) {
    case ErrorCode::kOk:
      return kExitOk;
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kNotFound:
    case ErrorCode::kParseError:
    case ErrorCode::kOutOfRange:
    case ErrorCode::kUnsupported:
    case ErrorCode::kIoError:
      return kExitInputError;
    case ErrorCode::kFailedPrecondition:
      return kExitRuleViolation;
    case ErrorCode::kRace:
    case ErrorCode::kDeadlock:
      return kExitRaceOrDeadlock;
  }
  return kExitInternal;
}

const char* exitCodeName(int code) {
  switch (code) {
    case kExitOk:
      return "ok";
    case kExitCheckFailed:
      return "check-failed";
    case kExitUsage:
      return "usage";
    case kExitInputError:
      return "input-error";
    case kExitRuleViolation:
      return "rule-violation";
    case kExitRaceOrDeadlock:
      return "race-or-deadlock";
    default:
      return "internal";
  }
}

int reportError(const Status& status) {
  printError(status.message());
  return exitCodeFor(status);
}

}  // namespace trn::tools
