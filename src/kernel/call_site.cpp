#include "trn/kernel/call_site.h"

#include <utility>

#include "trn/kernel/kernel.h"

namespace trn::kernel {
namespace {
thread_local const CallSite* innermost = nullptr;
}  // namespace

CallSite::CallSite(std::string_view file, std::int32_t line)
    : CallSite(isa::SourceLocation{locationFile(file), line}) {}

CallSite::CallSite(isa::SourceLocation storable)
    : location_(std::move(storable)), outer_(innermost) {
  innermost = this;
}

CallSite::~CallSite() { innermost = outer_; }

const isa::SourceLocation* CallSite::active() {
  return innermost != nullptr ? &innermost->location_ : nullptr;
}

}  // namespace trn::kernel
