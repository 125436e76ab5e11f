// Helpers for the chip-run tests (chip_run_test.cpp, sendrecv_test.cpp): a program parsed from
// text, a trn2 session, timing-only options, and the two tensors their programs share.
#pragma once

#include <memory>
#include <string>

#include "trn/isa/program_text.h"
#include "trn/fabric/topology.h"
#include "trn/runtime/session.h"
#include "trn/spec/loader.h"
#include "trn/spec/system_loader.h"

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

/// trn2.48xlarge (16 chips on a 4 x 4 torus) as a fabric topology, for system runs.
inline fabric::Topology trn2Instance() {
  const Result<spec::SystemSpec> system = spec::loadSystem("trn2.48xlarge");
  TRN_CHECK(system.ok()) << system.status().toString();
  const Result<spec::ChipSpec> chip = spec::loadChip(system->chip);
  TRN_CHECK(chip.ok()) << chip.status().toString();
  Result<fabric::Topology> t = fabric::Topology::create(*system, *chip);
  TRN_CHECK(t.ok()) << t.status().toString();
  return std::move(*t);
}

}  // namespace trn::runtime::testing
