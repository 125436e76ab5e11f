#include "trn/kernel/call_site.h"

#include "trn/kernel/kernel.h"

namespace trn::kernel {
namespace {
thread_local const CallSite* innermost = nullptr;
}  // namespace

CallSite::CallSite(std::string file, std::int32_t line)
    : location_{locationFile(file), line}, outer_(innermost) {
  innermost = this;
}

CallSite::~CallSite() { innermost = outer_; }

const isa::SourceLocation* CallSite::active() {
  return innermost != nullptr ? &innermost->location_ : nullptr;
}

}  // namespace trn::kernel
