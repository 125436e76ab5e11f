#include "trn/core/timeline.h"

#include <fmt/format.h>

#include <array>
#include <utility>

namespace trn::core {

namespace {

constexpr std::array<std::pair<RunMode, std::string_view>, 3> kModeNames = {{
    {RunMode::kFunctionalTiming, "functional+timing"},
    {RunMode::kTimingOnly, "timing-only"},
    {RunMode::kFunctionalOnly, "functional-only"},
}};

}  // namespace

std::string_view runModeName(RunMode mode) {
  for (const auto& [m, name] : kModeNames) {
    if (m == mode) {
      return name;
    }
  }
  return "?";
}

Result<RunMode> parseRunMode(std::string_view text) {
  for (const auto& [mode, name] : kModeNames) {
    if (name == text) {
      return mode;
    }
  }
  return invalidArgument(fmt::format(
      "unknown mode '{}' (expected functional+timing, timing-only or functional-only)", text));
}

}  // namespace trn::core
