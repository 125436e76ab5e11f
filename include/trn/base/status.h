// Status and Result<T>: how trnsim reports errors that a user can cause (bad configs, programs,
// files, shapes). A Status carries a category, a human-readable message that names what is wrong
// and where (file, line, key, instruction), and the trnsim source location that raised it, so a
// bug report can be traced. Internal invariants use TRN_CHECK (check.h) instead.
#pragma once

#include <source_location>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "trn/base/check.h"

namespace trn {

/// Broad category of a user-facing error; the message carries the detail.
enum class ErrorCode {
  kOk,
  kInvalidArgument,   ///< a value is malformed or out of range
  kNotFound,          ///< a file, key, chip or name does not exist
  kParseError,        ///< text could not be parsed (YAML, assembly, .npy header)
  kOutOfRange,        ///< a size, index or address exceeds its limit
  kUnsupported,       ///< valid but not supported by this hardware or build
  kFailedPrecondition,///< a rule of the hardware or program was violated
  kIoError,           ///< reading or writing a file failed
  kRace,              ///< two accesses to the same memory were not ordered (a data race)
  kDeadlock,          ///< no engine or core of a run could proceed
};

/// Name of an error code, e.g. "invalid argument".
std::string_view errorCodeName(ErrorCode code);

/// The outcome of an operation that can fail because of user input.
class [[nodiscard]] Status {
 public:
  /// Success.
  Status() = default;

  /// An error with a category and message; `origin` is where in trnsim it was raised.
  Status(ErrorCode code, std::string message,
         std::source_location origin = std::source_location::current());

  [[nodiscard]] bool ok() const { return code_ == ErrorCode::kOk; }
  [[nodiscard]] ErrorCode code() const { return code_; }
  [[nodiscard]] const std::string& message() const { return message_; }
  [[nodiscard]] const std::source_location& origin() const { return origin_; }

  /// Returns a copy whose message is prefixed with `context` ("context: message"), keeping the
  /// code and origin. Used to add the outer "where" while an error travels up.
  [[nodiscard]] Status withContext(std::string_view context) const;

  /// "invalid argument: <message>" (or "ok").
  [[nodiscard]] std::string toString() const;

  /// Like toString(), followed by " [raised at file:line]".
  [[nodiscard]] std::string toDebugString() const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
  std::source_location origin_;
};

/// Shorthand constructors; each records the caller's source location.
Status invalidArgument(std::string message,
                       std::source_location origin = std::source_location::current());
Status notFound(std::string message, std::source_location origin = std::source_location::current());
Status parseError(std::string message,
                  std::source_location origin = std::source_location::current());
Status outOfRange(std::string message,
                  std::source_location origin = std::source_location::current());
Status unsupported(std::string message,
                   std::source_location origin = std::source_location::current());
Status failedPrecondition(std::string message,
                          std::source_location origin = std::source_location::current());
Status ioError(std::string message, std::source_location origin = std::source_location::current());
Status raceDetected(std::string message,
                    std::source_location origin = std::source_location::current());
Status deadlockDetected(std::string message,
                        std::source_location origin = std::source_location::current());

/// Either a value of type T or an error Status. Accessing the value of an error is a bug and
/// aborts (TRN_CHECK), so callers test ok() first or use TRN_ASSIGN_OR_RETURN.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : state_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    TRN_CHECK(!std::get<Status>(state_).ok()) << "a Result cannot hold an ok Status";
  }

  [[nodiscard]] bool ok() const { return std::holds_alternative<T>(state_); }

  /// The error; Status() (ok) when this holds a value.
  [[nodiscard]] Status status() const { return ok() ? Status() : std::get<Status>(state_); }

  [[nodiscard]] T& value() & {
    checkHasValue();
    return std::get<T>(state_);
  }
  [[nodiscard]] const T& value() const& {
    checkHasValue();
    return std::get<T>(state_);
  }
  [[nodiscard]] T&& value() && {
    checkHasValue();
    return std::get<T>(std::move(state_));
  }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  void checkHasValue() const {
    TRN_CHECK(ok()) << "value() of an error Result: " << std::get<Status>(state_).toDebugString();
  }

  std::variant<T, Status> state_;
};

}  // namespace trn

/// Evaluates an expression yielding Status or Result<T>; returns its Status from the enclosing
/// function if it is an error.
#define TRN_RETURN_IF_ERROR(expr)                                     \
  do {                                                                \
    if (auto trnStatusOrResult_ = (expr); !trnStatusOrResult_.ok()) { \
      return ::trn::detail::statusOf(trnStatusOrResult_);             \
    }                                                                 \
  } while (false)

#define TRN_CONCAT_IMPL_(a, b) a##b
#define TRN_CONCAT_(a, b) TRN_CONCAT_IMPL_(a, b)

/// `TRN_ASSIGN_OR_RETURN(auto x, parseThing(s));` declares/assigns x from a Result<T>, or returns
/// the error from the enclosing function.
#define TRN_ASSIGN_OR_RETURN(lhs, expr) \
  TRN_ASSIGN_OR_RETURN_IMPL_(TRN_CONCAT_(trnResult_, __LINE__), lhs, expr)
#define TRN_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) {                                 \
    return tmp.status();                           \
  }                                                \
  lhs = std::move(tmp).value()

namespace trn::detail {
inline Status statusOf(const Status& s) { return s; }
template <typename T>
Status statusOf(const Result<T>& r) {
  return r.status();
}
}  // namespace trn::detail
