// Reading whole input files with a bound: every reader of user files (programs, .npy arrays, chip
// YAML) goes through readFileBounded, which accepts regular files only (not /dev/zero, pipes or
// directories), checks the size against the caller's limit before allocating, and reports an
// allocation failure with the size it asked for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trn/base/status.h"

namespace trn {

/// The bytes of the regular file `path`, which must hold at most `maxBytes`. `what` names the
/// kind of file in messages ("program", ".npy file", "chip description").
Result<std::vector<std::byte>> readFileBounded(const std::string& path, std::uint64_t maxBytes,
                                               std::string_view what);

}  // namespace trn
