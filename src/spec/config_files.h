// Internal to the spec module: reading description files, shared by the chip and system
// loaders — paths shown relative to the working directory, files read with a size bound.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "trn/base/status.h"

namespace trn::spec::detail {

/// Largest description file read (trn2.yaml is 24 KB).
inline constexpr std::uint64_t kMaxDescriptionBytes = std::uint64_t{16} << 20;

bool hasYamlExtension(std::string_view name);

/// `path` relative to the working directory when it lies below it, else as given.
std::string displayPath(const std::filesystem::path& path);

/// The text of the description file `path`: a regular file of at most kMaxDescriptionBytes,
/// its size checked before anything is allocated. `what` names it in messages.
Result<std::string> readDescription(const std::filesystem::path& path, const std::string& display,
                                    std::string_view what);

/// The names of the .yaml files under `dir` (relative, without the extension), sorted.
std::vector<std::string> listDescriptions(const std::filesystem::path& dir);

}  // namespace trn::spec::detail
