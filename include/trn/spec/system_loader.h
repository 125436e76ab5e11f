// Loading system descriptions (spec/system_spec.h): by name from <config dir>/systems/<name>.yaml,
// by path, or from text, with the chip loader's conventions (loader.h): every value sourced,
// unknown keys rejected with a suggestion, every error located at file:line:column and key
// path. Rules across keys: at least one dimension, names unique, every dimension's link
// declared, at most kMaxSystemChips chips, and a chip that loadChip loads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/spec/report.h"
#include "trn/spec/system_spec.h"

namespace trn::spec {

/// The most chips a system may have.
inline constexpr std::int64_t kMaxSystemChips = std::int64_t{1} << 20;

/// Systems under <config dir>/systems, by name ("trn2.48xlarge"), sorted.
std::vector<std::string> listSystems();

/// Loads a system by name, or by path when `nameOrPath` ends in .yaml/.yml or names a file.
Result<SystemSpec> loadSystem(std::string_view nameOrPath);

/// Loads a system from YAML text; `pretendPath` is used in messages.
Result<SystemSpec> loadSystemFromString(std::string_view text, std::string_view pretendPath);

/// Every value of `system` with its provenance, in file order (`trnsim system show`).
std::vector<SpecEntry> describeSystem(const SystemSpec& system);

/// `trnsim system show`: the derived totals, then every value with its source.
std::string formatSystem(const SystemSpec& system);

/// `trnsim system diff`: the values that differ between two systems.
std::string formatSystemDiff(const SystemSpec& left, const SystemSpec& right);

}  // namespace trn::spec
