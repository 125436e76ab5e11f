#include "config_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <system_error>
#include <vector>

#include "trn/base/file_reader.h"

namespace trn::spec::detail {
namespace fs = std::filesystem;

bool hasYamlExtension(std::string_view name) {
  return name.ends_with(".yaml") || name.ends_with(".yml");
}

std::string displayPath(const fs::path& path) {
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  if (!ec && path.is_absolute()) {
    const fs::path relative = path.lexically_proximate(cwd);
    if (!relative.empty() && *relative.begin() != "..") {
      return relative.generic_string();
    }
  }
  return path.lexically_normal().generic_string();
}

Result<std::string> readDescription(const fs::path& path, const std::string& display,
                                    std::string_view what) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return notFound(fmt::format("{}: no such file", display));
  }
  TRN_ASSIGN_OR_RETURN(const FileBytes bytes,
                       readFileBounded(path.string(), kMaxDescriptionBytes, std::string(what)));
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

std::vector<std::string> listDescriptions(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".yaml") {
      fs::path relative = it->path().lexically_relative(dir);
      relative.replace_extension();
      names.push_back(relative.generic_string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace trn::spec::detail
