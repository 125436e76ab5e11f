// Test helpers for the timing model: the trn2 description (optionally edited), and running a
// program text on one core or on several cores together with every instruction recorded.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "trn/core/neuron_core.h"
#include "trn/isa/program_text.h"
#include "trn/runtime/host_io.h"
#include "trn/runtime/session.h"
#include "trn/spec/loader.h"

namespace trn::core::testing {

/// trn2 with `edit` applied (e.g. throttling switched off).
inline std::shared_ptr<const spec::ChipSpec> trn2(
    const std::function<void(spec::ChipSpec&)>& edit = {}) {
  Result<spec::ChipSpec> chip = spec::loadChip("trn2");
  TRN_CHECK(chip.ok()) << chip.status().toString();
  if (edit) {
    edit(*chip);
  }
  return std::make_shared<const spec::ChipSpec>(std::move(*chip));
}

/// trn2 without TensorE power throttling.
inline std::shared_ptr<const spec::ChipSpec> trn2Unthrottled() {
  return trn2([](spec::ChipSpec& c) { c.core.pe.powerThrottle.enabled = false; });
}

inline std::unique_ptr<NeuronCore> makeCore(std::string_view text,
                                            std::shared_ptr<const spec::ChipSpec> chip,
                                            RunMode mode = RunMode::kTimingOnly,
                                            int physicalCore = 0) {
  Result<isa::Program> program = isa::parseProgramText(text, "timing.tasm");
  TRN_CHECK(program.ok()) << program.status().toString();
  CoreOptions options;
  options.limits = runtime::coreLimits(*chip);
  options.chip = std::move(chip);
  options.mode = mode;
  options.record = true;
  options.physicalCore = physicalCore;
  Result<std::unique_ptr<NeuronCore>> core = NeuronCore::create(std::move(*program), options);
  TRN_CHECK(core.ok()) << core.status().toString();
  return std::move(*core);
}

/// Runs `text` and expects success.
inline RunStats runTimed(std::string_view text, std::shared_ptr<const spec::ChipSpec> chip,
                         RunMode mode = RunMode::kTimingOnly) {
  auto core = makeCore(text, std::move(chip), mode);
  Result<RunStats> stats = core->run();
  TRN_CHECK(stats.ok()) << stats.status().toString();
  return std::move(*stats);
}

/// Time of `cycles` cycles at `clock`, rounded up to a whole picosecond (the model's rule),
/// computed here independently of the model.
__extension__ using Int128 = __int128;
inline std::int64_t ps(std::int64_t cycles, Hertz clock) {
  const Int128 numerator = static_cast<Int128>(cycles) * 1'000'000'000'000;
  return static_cast<std::int64_t>((numerator + clock.count() - 1) / clock.count());
}

}  // namespace trn::core::testing
