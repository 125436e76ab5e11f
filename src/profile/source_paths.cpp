#include "trn/profile/source_paths.h"

#include <filesystem>
#include <system_error>

namespace trn::profile {

SourcePaths::SourcePaths(std::span<const std::string> files) {
  std::string common;
  bool first = true;
  for (const std::string& file : files) {
    if (file.empty() || file.front() != '/') {
      continue;
    }
    const std::string dir = file.substr(0, file.rfind('/') + 1);
    if (first) {
      common = dir;
      first = false;
      continue;
    }
    std::size_t same = 0;
    while (same < common.size() && same < dir.size() && common[same] == dir[same]) {
      ++same;
    }
    common = common.substr(0, common.rfind('/', same == 0 ? 0 : same - 1) + 1);
  }
  if (common.size() <= 1) {
    return;
  }
  std::error_code error;
  for (std::filesystem::path dir(common); !dir.empty() && dir != dir.root_path();
       dir = dir.parent_path()) {
    if (std::filesystem::exists(dir / ".git", error)) {
      root_ = dir.string() + "/";
      return;
    }
  }
  root_ = common;
}

std::string SourcePaths::relative(std::string_view file) const {
  if (!root_.empty() && file.starts_with(root_)) {
    return std::string(file.substr(root_.size()));
  }
  // A compiler run in a build directory records "../../src/x.cpp": the path from there.
  while (file.starts_with("../") || file.starts_with("./")) {
    file.remove_prefix(file.starts_with("./") ? 2 : 3);
  }
  return std::string(file);
}

}  // namespace trn::profile
