// TRN_CHECK: internal invariants. A failed check is a trnsim bug, never a user error: it prints
// the condition, file:line and an optional streamed message, then aborts, in every build type.
// User errors are reported with Status/Result (status.h) instead.
#pragma once

#include <sstream>

namespace trn::detail {

/// Collects a streamed message and aborts in its destructor. Used only by the macros below.
class CheckFailure {
 public:
  CheckFailure(const char* condition, const char* file, int line);
  CheckFailure(const CheckFailure&) = delete;
  CheckFailure& operator=(const CheckFailure&) = delete;
  [[noreturn]] ~CheckFailure();

  template <typename T>
  CheckFailure& operator<<(const T& value) {
    message_ << value;
    return *this;
  }

 private:
  const char* condition_;
  const char* file_;
  int line_;
  std::ostringstream message_;
};

/// Lets `cond ? (void)0 : Voidify() & CheckFailure(...) << msg` type-check as void.
struct Voidify {
  void operator&(const CheckFailure&) {}
};

}  // namespace trn::detail

/// Aborts with file:line and the streamed message when `cond` is false. Always enabled.
#define TRN_CHECK(cond)                   \
  (cond) ? static_cast<void>(0)           \
         : ::trn::detail::Voidify() &     \
               ::trn::detail::CheckFailure(#cond, __FILE__, __LINE__)

/// Marks code that must never run; aborts with file:line and the streamed message.
#define TRN_UNREACHABLE() ::trn::detail::Voidify() & ::trn::detail::CheckFailure("unreachable", __FILE__, __LINE__)

/// Like TRN_CHECK but compiled out of release builds; only for proven hot paths.
#ifdef NDEBUG
#define TRN_DCHECK(cond) \
  true ? static_cast<void>(0) : ::trn::detail::Voidify() & ::trn::detail::CheckFailure(#cond, __FILE__, __LINE__)
#else
#define TRN_DCHECK(cond) TRN_CHECK(cond)
#endif
