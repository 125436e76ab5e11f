#include "trn/spec/loader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <list>
#include <system_error>

#include "chip_schema.h"
#include "config_files.h"
#include "config_tree.h"
#include "validate.h"

#if !defined(TRN_CONFIG_DIR) || !defined(TRN_INSTALL_CONFIG_SUBDIR) || \
    !defined(TRN_INSTALLED_CONFIG_DIR)
#error "TRN_CONFIG_DIR, TRN_INSTALL_CONFIG_SUBDIR and TRN_INSTALLED_CONFIG_DIR come from the build"
#endif

namespace trn::spec {
namespace fs = std::filesystem;
namespace {

using detail::displayPath;
using detail::hasYamlExtension;

std::string canonicalKey(const fs::path& path) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(path, ec);
  return ec ? path.lexically_normal().generic_string() : canonical.generic_string();
}

std::string availableChips() {
  const std::vector<std::string> chips = listChips();
  return chips.empty() ? fmt::format("none found in {}/chips", configDir())
                       : fmt::format("{}", fmt::join(chips, ", "));
}

Result<std::string> readFile(const fs::path& path, const std::string& display) {
  return detail::readDescription(path, display, "chip description");
}

/// Resolves a chip name to its file; fails listing the chips that exist.
Result<fs::path> chipFile(std::string_view name) {
  const fs::path path = fs::path(configDir()) / "chips" / fmt::format("{}.yaml", name);
  std::error_code ec;
  if (name.empty() || !fs::is_regular_file(path, ec)) {
    return notFound(fmt::format("chip '{}' not found (no file {}); available chips: {}", name,
                                displayPath(path), availableChips()));
  }
  return path;
}

class Loader {
 public:
  Result<ChipSpec> loadFile(const fs::path& path) {
    const std::string display = displayPath(path);
    TRN_ASSIGN_OR_RETURN(std::string text, readFile(path, display));
    return loadText(text, display, path);
  }

  Result<ChipSpec> loadText(std::string_view text, const std::string& display,
                            const fs::path& path) {
    stack_.push_back(canonicalKey(path));
    Result<ChipSpec> spec = loadTextUnguarded(text, display, path);
    stack_.pop_back();
    return spec;
  }

 private:
  Status errorAt(const std::string& display, detail::Mark mark, std::string_view path,
                 std::string_view message, ErrorCode code = ErrorCode::kInvalidArgument) {
    return Status(code, fmt::format("{}:{}:{}: {}{}{}", display, std::max(mark.line, 1),
                                    std::max(mark.column, 1), path, path.empty() ? "" : ": ",
                                    message));
  }

  Result<ChipSpec> loadTextUnguarded(std::string_view text, const std::string& display,
                                     const fs::path& path) {
    TRN_ASSIGN_OR_RETURN(detail::ConfigNode root, detail::parseYaml(text, display));
    if (root.kind == detail::ConfigNode::Kind::kNull) {
      return errorAt(display, {1, 1}, "",
                     fmt::format("the file is empty; a chip description is a mapping with keys {}",
                                 detail::chipSchema().keyList()));
    }
    if (root.kind != detail::ConfigNode::Kind::kMap) {
      return errorAt(display, root.mark, "",
                     fmt::format("expected a mapping with keys {}; got {}",
                                 detail::chipSchema().keyList(), root.describe()));
    }
    TRN_RETURN_IF_ERROR(includeCosts(root, display, path));
    ChipSpec spec;
    bool overlay = false;
    if (const detail::ConfigEntry* base = root.findEntry("base")) {
      TRN_ASSIGN_OR_RETURN(spec, loadBase(base->value, display, path));
      overlay = true;
    }
    detail::LoadContext ctx(display, spec.provenance);
    detail::chipSchema().loadMap(root, spec, ctx, "", detail::LoadScope{overlay, nullptr}, false);
    if (overlay && root.find("name") == nullptr) {
      ctx.error(root.mark, "name", "missing required key 'name' (a what-if chip needs its own)");
    }
    if (ctx.failed()) {
      return invalidArgument(fmt::format("{}", fmt::join(ctx.errors(), "\n")));
    }
    spec.file = display;
    return spec;
  }

  Result<ChipSpec> loadBase(const detail::ConfigNode& node, const std::string& display,
                            const fs::path& path) {
    if (node.kind != detail::ConfigNode::Kind::kScalar || node.scalar.empty()) {
      return errorAt(display, node.mark, "base",
                     "expected a chip name or a relative .yaml path");
    }
    fs::path basePath;
    if (hasYamlExtension(node.scalar)) {
      basePath = path.parent_path() / node.scalar;
      std::error_code ec;
      if (!fs::exists(basePath, ec)) {
        return errorAt(display, node.mark, "base",
                       fmt::format("no such file {}", displayPath(basePath)),
                       ErrorCode::kNotFound);
      }
    } else {
      Result<fs::path> resolved = chipFile(node.scalar);
      if (!resolved.ok()) {
        return errorAt(display, node.mark, "base", resolved.status().message(),
                       ErrorCode::kNotFound);
      }
      basePath = *resolved;
    }
    const std::string key = canonicalKey(basePath);
    if (const auto it = std::find(stack_.begin(), stack_.end(), key); it != stack_.end()) {
      std::vector<std::string> chain;
      std::transform(it, stack_.end(), std::back_inserter(chain),
                     [](const std::string& p) { return displayPath(p); });
      chain.push_back(displayPath(key));
      return errorAt(display, node.mark, "base",
                     fmt::format("inheritance cycle: {}", fmt::join(chain, " -> ")));
    }
    if (static_cast<int>(stack_.size()) >= kMaxBaseDepth) {
      return errorAt(display, node.mark, "base",
                     fmt::format("more than {} levels of base: files", kMaxBaseDepth));
    }
    return loadFile(basePath);
  }

  /// Sets `mark.file` on `node` and everything in it.
  static void markIncluded(detail::ConfigNode& node, const std::string* file) {
    node.mark.file = file;
    for (detail::ConfigNode& item : node.items) {
      markIncluded(item, file);
    }
    for (detail::ConfigEntry& entry : node.entries) {
      entry.keyMark.file = file;
      markIncluded(entry.value, file);
    }
  }

  /// `costs: FILE.yaml` (a path relative to the chip file) loads the costs table from that file,
  /// which the chips of one core generation share; its errors and provenance name that file.
  Status includeCosts(detail::ConfigNode& root, const std::string& display, const fs::path& path) {
    detail::ConfigEntry* costs = nullptr;
    for (detail::ConfigEntry& entry : root.entries) {
      if (entry.key == "costs") {
        costs = &entry;
      }
    }
    if (costs == nullptr || costs->value.kind != detail::ConfigNode::Kind::kScalar) {
      return {};
    }
    if (!hasYamlExtension(costs->value.scalar)) {
      return errorAt(display, costs->value.mark, "costs",
                     "expected a mapping, or the relative path of a .yaml file that holds one");
    }
    const fs::path included = path.parent_path() / costs->value.scalar;
    const std::string& name = *included_.emplace(included_.end(), displayPath(included));
    Result<std::string> text = readFile(included, name);
    if (!text.ok()) {
      return errorAt(display, costs->value.mark, "costs", text.status().message(),
                     text.status().code());
    }
    TRN_ASSIGN_OR_RETURN(detail::ConfigNode table, detail::parseYaml(*text, name));
    if (table.kind != detail::ConfigNode::Kind::kMap) {
      return errorAt(name, table.mark, "", "a costs file holds one mapping (the costs table)");
    }
    markIncluded(table, &name);
    costs->value = std::move(table);
    return {};
  }

  std::vector<std::string> stack_;
  std::list<std::string> included_;  ///< names of included files (stable for the marks)
};

Result<ChipSpec> finish(Result<ChipSpec> spec) {
  if (!spec.ok()) {
    return spec;
  }
  TRN_RETURN_IF_ERROR(detail::finalizeChip(*spec));
  return spec;
}

}  // namespace

std::string configDir() {
  const char* env = std::getenv("TRNSIM_CONFIG_DIR");
  if (env != nullptr && *env != '\0') {
    return env;
  }
  // An installed program: <prefix>/bin/<program> with the configs in <prefix>/share/trnsim.
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / TRN_INSTALL_CONFIG_SUBDIR;
    if (fs::is_directory(installed / "chips", ec)) {
      return installed.string();
    }
  }
  if (fs::is_directory(fs::path(TRN_CONFIG_DIR) / "chips", ec)) {
    return TRN_CONFIG_DIR;
  }
  // A program linked with the installed libraries, the source tree gone.
  return TRN_INSTALLED_CONFIG_DIR;
}

std::vector<std::string> listChips() {
  return detail::listDescriptions(fs::path(configDir()) / "chips");
}

Result<ChipSpec> loadChip(std::string_view nameOrPath) {
  Loader loader;
  std::error_code ec;
  const fs::path asPath(nameOrPath);
  if (hasYamlExtension(nameOrPath) || fs::is_regular_file(asPath, ec)) {
    return finish(loader.loadFile(asPath));
  }
  TRN_ASSIGN_OR_RETURN(fs::path file, chipFile(nameOrPath));
  return finish(loader.loadFile(file));
}

Result<ChipSpec> loadChipFromString(std::string_view text, std::string_view pretendPath) {
  Loader loader;
  return finish(loader.loadText(text, std::string(pretendPath), fs::path(pretendPath)));
}

const Provenance* provenanceAt(const ProvenanceMap& map, std::string_view path) {
  while (true) {
    if (const auto it = map.find(path); it != map.end()) {
      return &it->second;
    }
    const std::size_t cut = path.find_last_of(".[");
    if (cut == std::string_view::npos) {
      return nullptr;
    }
    path = path.substr(0, cut);
  }
}

const Provenance* ChipSpec::provenanceOf(std::string_view path) const {
  return provenanceAt(provenance, path);
}

}  // namespace trn::spec
