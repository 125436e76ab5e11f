#include "trn/base/status.h"

namespace trn {

std::string_view errorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "ok";
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kNotFound: return "not found";
    case ErrorCode::kParseError: return "parse error";
    case ErrorCode::kOutOfRange: return "out of range";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kFailedPrecondition: return "failed precondition";
    case ErrorCode::kIoError: return "i/o error";
    case ErrorCode::kRace: return "race";
    case ErrorCode::kDeadlock: return "deadlock";
  }
  TRN_UNREACHABLE() << "bad ErrorCode " << static_cast<int>(code);
  return {};
}

Status::Status(ErrorCode code, std::string message, std::source_location origin)
    : code_(code), message_(std::move(message)), origin_(origin) {
  TRN_CHECK(code != ErrorCode::kOk) << "an error Status needs an error code";
}

Status Status::withContext(std::string_view context) const {
  if (ok()) {
    return *this;
  }
  Status copy = *this;
  copy.message_ = std::string(context) + ": " + message_;
  return copy;
}

std::string Status::toString() const {
  if (ok()) {
    return "ok";
  }
  return std::string(errorCodeName(code_)) + ": " + message_;
}

std::string Status::toDebugString() const {
  if (ok()) {
    return "ok";
  }
  return toString() + " [raised at " + origin_.file_name() + ":" + std::to_string(origin_.line()) +
         "]";
}

Status invalidArgument(std::string message, std::source_location origin) {
  return {ErrorCode::kInvalidArgument, std::move(message), origin};
}
Status notFound(std::string message, std::source_location origin) {
  return {ErrorCode::kNotFound, std::move(message), origin};
}
Status parseError(std::string message, std::source_location origin) {
  return {ErrorCode::kParseError, std::move(message), origin};
}
Status outOfRange(std::string message, std::source_location origin) {
  return {ErrorCode::kOutOfRange, std::move(message), origin};
}
Status unsupported(std::string message, std::source_location origin) {
  return {ErrorCode::kUnsupported, std::move(message), origin};
}
Status failedPrecondition(std::string message, std::source_location origin) {
  return {ErrorCode::kFailedPrecondition, std::move(message), origin};
}
Status ioError(std::string message, std::source_location origin) {
  return {ErrorCode::kIoError, std::move(message), origin};
}

Status raceDetected(std::string message, std::source_location origin) {
  return {ErrorCode::kRace, std::move(message), origin};
}

Status deadlockDetected(std::string message, std::source_location origin) {
  return {ErrorCode::kDeadlock, std::move(message), origin};
}

}  // namespace trn
