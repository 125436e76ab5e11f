// Helpers for the chip-run tests (chip_run_test.cpp, sendrecv_test.cpp): a program parsed from
// text, a trn2 session, timing-only options, and the two tensors their programs share.
#pragma once

#include <memory>
#include <string>

#include "trn/isa/program_text.h"
#include "trn/runtime/session.h"

namespace trn::runtime::testing {

inline std::shared_ptr<const isa::Program> program(const std::string& text) {
  Result<isa::Program> p = isa::parseProgramText(text, "chip.tasm");
  TRN_CHECK(p.ok()) << p.status().toString();
  return std::make_shared<const isa::Program>(std::move(*p));
}

inline Session trn2() {
  Result<Session> s = Session::open("trn2");
  TRN_CHECK(s.ok()) << s.status().toString();
  return std::move(*s);
}

/// Timing-only options without poison (which needs data) on logical cores of `lnc` cores.
inline RunOptions timingOnly(int lnc) {
  RunOptions options;
  options.lnc = lnc;
  options.mode = core::RunMode::kTimingOnly;
  options.poison = false;
  return options;
}

inline const std::string kTensors =
    ".tensor x input fp32 [128, 64]\n"
    ".tensor y output fp32 [128, 64]\n";

}  // namespace trn::runtime::testing
