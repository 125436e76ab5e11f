#include "trn/spec/system_loader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>

#include "config_files.h"
#include "config_tree.h"
#include "system_schema.h"
#include "trn/spec/loader.h"
#include "trn/spec/report.h"

namespace trn::spec {
namespace fs = std::filesystem;
namespace {

std::string availableSystems() {
  const std::vector<std::string> systems = listSystems();
  return systems.empty() ? fmt::format("none found in {}/systems", configDir())
                         : fmt::format("{}", fmt::join(systems, ", "));
}

/// "file:line:column: path: message" at the value `path` of `s` (or of its nearest ancestor).
std::string locatedError(const SystemSpec& s, std::string_view path, std::string_view message) {
  const Provenance* p = s.provenanceOf(path);
  return fmt::format("{}:{}:{}: {}: {}", s.file, p != nullptr ? std::max(p->line, 1) : 1,
                     p != nullptr ? std::max(p->column, 1) : 1, path, message);
}

/// The closest of `names` to `name`, as a hint.
std::string suggestion(std::string_view name, const std::vector<std::string>& names) {
  const std::optional<std::string> close = detail::closestKey(name, names);
  return close ? fmt::format(" (did you mean '{}'?)", *close) : std::string();
}

/// The rules across keys; every broken one is reported.
Status validate(const SystemSpec& s) {
  std::vector<std::string> errors;
  std::vector<std::string> linkNames;
  for (std::size_t i = 0; i < s.links.size(); ++i) {
    const std::string& name = s.links[i].name;
    if (std::find(linkNames.begin(), linkNames.end(), name) != linkNames.end()) {
      errors.push_back(locatedError(s, fmt::format("links[{}].name", i),
                                    fmt::format("a second link named '{}'", name)));
    }
    linkNames.push_back(name);
  }
  if (s.dimensions.empty()) {
    errors.push_back(locatedError(s, "dimensions", "a system needs at least one dimension"));
  }
  std::set<std::string> dimensionNames;
  std::int64_t chips = 1;
  for (std::size_t i = 0; i < s.dimensions.size(); ++i) {
    const Dimension& d = s.dimensions[i];
    if (!dimensionNames.insert(d.name).second) {
      errors.push_back(locatedError(s, fmt::format("dimensions[{}].name", i),
                                    fmt::format("a second dimension named '{}'", d.name)));
    }
    if (s.link(d.link) == nullptr) {
      errors.push_back(locatedError(
          s, fmt::format("dimensions[{}].link", i),
          fmt::format("no link named '{}' in links{}", d.link, suggestion(d.link, linkNames))));
    }
    if (__builtin_mul_overflow(chips, d.size, &chips) || chips > kMaxSystemChips) {
      errors.push_back(
          locatedError(s, fmt::format("dimensions[{}].size", i),
                       fmt::format("the system would have more than {} chips", kMaxSystemChips)));
      chips = 1;
    }
  }
  if (errors.empty()) {
    if (Result<ChipSpec> chip = loadChip(s.chip); !chip.ok()) {
      errors.push_back(locatedError(s, "chip", chip.status().message()));
    }
  }
  if (!errors.empty()) {
    return invalidArgument(fmt::format("{}", fmt::join(errors, "\n")));
  }
  return {};
}

Result<SystemSpec> loadText(std::string_view text, const std::string& display) {
  TRN_ASSIGN_OR_RETURN(detail::ConfigNode root, detail::parseYaml(text, display));
  if (root.kind != detail::ConfigNode::Kind::kMap) {
    return invalidArgument(fmt::format("{}:{}:{}: expected a mapping with keys {}; got {}", display,
                                       std::max(root.mark.line, 1), std::max(root.mark.column, 1),
                                       detail::systemSchema().keyList(), root.describe()));
  }
  SystemSpec spec;
  detail::LoadContext ctx(display, spec.provenance);
  detail::systemSchema().loadMap(root, spec, ctx, "", detail::LoadScope{false, nullptr}, false);
  if (ctx.failed()) {
    return invalidArgument(fmt::format("{}", fmt::join(ctx.errors(), "\n")));
  }
  spec.file = display;
  TRN_RETURN_IF_ERROR(validate(spec));
  return spec;
}

}  // namespace

std::int64_t SystemSpec::chips() const {
  std::int64_t n = 1;
  for (const Dimension& d : dimensions) {
    n *= d.size;  // the loader keeps the product within kMaxSystemChips
  }
  return n;
}

const LinkSpec* SystemSpec::link(std::string_view linkName) const {
  for (const LinkSpec& l : links) {
    if (l.name == linkName) {
      return &l;
    }
  }
  return nullptr;
}

const Provenance* SystemSpec::provenanceOf(std::string_view path) const {
  return provenanceAt(provenance, path);
}

std::vector<std::string> listSystems() {
  return detail::listDescriptions(fs::path(configDir()) / "systems");
}

Result<SystemSpec> loadSystem(std::string_view nameOrPath) {
  std::error_code ec;
  fs::path path(nameOrPath);
  if (!detail::hasYamlExtension(nameOrPath) && !fs::is_regular_file(path, ec)) {
    path = fs::path(configDir()) / "systems" / fmt::format("{}.yaml", nameOrPath);
    if (nameOrPath.empty() || !fs::is_regular_file(path, ec)) {
      return notFound(fmt::format("system '{}' not found (no file {}); available systems: {}",
                                  nameOrPath, detail::displayPath(path), availableSystems()));
    }
  }
  const std::string display = detail::displayPath(path);
  TRN_ASSIGN_OR_RETURN(const std::string text,
                       detail::readDescription(path, display, "system description"));
  return loadText(text, display);
}

Result<SystemSpec> loadSystemFromString(std::string_view text, std::string_view pretendPath) {
  return loadText(text, std::string(pretendPath));
}

std::vector<SpecEntry> describeSystem(const SystemSpec& system) {
  std::vector<SpecEntry> out;
  detail::FlattenContext ctx{system.provenance, out, ""};
  detail::systemSchema().flatten(system, "", ctx);
  return out;
}

std::string formatSystem(const SystemSpec& system) {
  std::string out = fmt::format("{}: {}\nfile: {}\nchip: {}\nchips: {}\n", system.name,
                                system.description, system.file, system.chip, system.chips());
  // Links per chip and injection bandwidth: two links per ring of three or more (a ring of two
  // also has two, both to the one neighbour), one or two on a line, one uplink on a switch.
  std::int64_t injection = 0;
  for (const Dimension& d : system.dimensions) {
    const LinkSpec* link = system.link(d.link);
    const std::int64_t links = d.size < 2                                      ? 0
                               : d.kind == DimensionKind::kSwitch              ? 1
                               : d.kind == DimensionKind::kLine && d.size == 2 ? 1
                                                                               : 2;
    out +=
        fmt::format("  {} ({}, {} chips): {} {} link(s) per chip, {} per direction each\n", d.name,
                    EnumTraits<DimensionKind>::kNames[static_cast<std::size_t>(d.kind)].second,
                    d.size, links, d.link, toString(link->bandwidth));
    injection += links * link->bandwidth.count();
  }
  out += fmt::format(
      "injection bandwidth per chip: {} per direction (a line's end chips have "
      "less)\n\n",
      toString(BytesPerSecond(injection)));
  for (const SpecEntry& e : describeSystem(system)) {
    if (e.meta) {
      continue;
    }
    out += fmt::format("{:<28} {:<16} {}\n", e.path, e.value, e.provenance.source);
  }
  return out;
}

std::string formatSystemDiff(const SystemSpec& left, const SystemSpec& right) {
  return formatDifferences(left.name, left.file, right.name, right.file,
                           diffEntries(describeSystem(left), describeSystem(right)));
}

}  // namespace trn::spec
