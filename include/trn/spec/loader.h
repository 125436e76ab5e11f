// Loading chip descriptions: by name from <config dir>/chips/<name>.yaml, by path, or from text.
// The config dir is $TRNSIM_CONFIG_DIR when set, else an installed or the build's configs/
// directory (configDir). A file may
// start from another chip with `base: <name or relative .yaml path>` and override some values.
// Every error names the file, line, column and full key path; malformed input never crashes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/spec/chip_spec.h"

namespace trn::spec {

/// Longest chain of `base:` files.
inline constexpr int kMaxBaseDepth = 8;

/// Where chip and system descriptions are looked up by name, the first of: $TRNSIM_CONFIG_DIR if
/// set and non-empty; <dir of the running program>/../share/trnsim/configs when it has chips/
/// (an installed trnsim); the source tree's configs/ when it has chips/ (a build tree); the
/// configs/ under the install prefix the build was configured with.
std::string configDir();

/// Chips under <config dir>/chips, by name ("trn2", "examples/trn2-wide-sbuf"), sorted.
std::vector<std::string> listChips();

/// Loads a chip by name, or by path when `nameOrPath` ends in .yaml/.yml or names a file.
Result<ChipSpec> loadChip(std::string_view nameOrPath);

/// Loads a chip from YAML text; `pretendPath` is used in messages and to resolve a relative
/// `base:` path.
Result<ChipSpec> loadChipFromString(std::string_view text, std::string_view pretendPath);

}  // namespace trn::spec
