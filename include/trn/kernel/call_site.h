// CallSite: the kernel author's source line when the kernel is written in another language. The
// tile language records std::source_location at every call (the C++ author's line); a front end
// that calls it from Python (or any other host language) installs a CallSite for the duration of
// one call, and every location recorded or reported meanwhile on this thread (IR sites, error
// messages, profile lines) is that one instead.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "trn/isa/instruction.h"

namespace trn::kernel {

class CallSite {
 public:
  CallSite(std::string_view file, std::int32_t line);
  /// The same for a location whose file is storable already (kernel::locationFile's result).
  explicit CallSite(isa::SourceLocation storable);
  ~CallSite();
  CallSite(const CallSite&) = delete;
  CallSite& operator=(const CallSite&) = delete;

  /// The innermost CallSite alive on this thread, or nullptr.
  [[nodiscard]] static const isa::SourceLocation* active();

 private:
  isa::SourceLocation location_;
  const CallSite* outer_;
};

}  // namespace trn::kernel
