#include "trn/base/check.h"

#include <cstdio>
#include <cstdlib>

namespace trn::detail {

CheckFailure::CheckFailure(const char* condition, const char* file, int line)
    : condition_(condition), file_(file), line_(line) {}

CheckFailure::~CheckFailure() {
  const std::string message = message_.str();
  std::fprintf(stderr, "trnsim internal error at %s:%d: check failed: %s%s%s\n", file_, line_,
               condition_, message.empty() ? "" : ": ", message.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace trn::detail
