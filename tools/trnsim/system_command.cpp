#include "system_command.h"

#include <fmt/format.h>

#include <memory>
#include <string>

#include "exit_codes.h"
#include "messages.h"
#include "trn/spec/system_loader.h"

namespace trn::tools {

void registerSystemCommands(CLI::App& app, int& exitCode) {
  CLI::App* group =
      app.add_subcommand("system", "System descriptions: chips, links, topology (configs/systems)");
  group->require_subcommand(1);
  CLI::App* list = group->add_subcommand("list", "list the system descriptions");
  list->callback([&exitCode] {
    for (const std::string& name : spec::listSystems()) {
      fmt::print("{}\n", name);
    }
    exitCode = 0;
  });
  auto name = std::make_shared<std::string>();
  CLI::App* show = group->add_subcommand("show", "print a system with the source of every value");
  show->add_option("system", *name, "system name or YAML path")->required();
  show->callback([name, &exitCode] {
    const Result<spec::SystemSpec> system = spec::loadSystem(*name);
    if (!system.ok()) {
      exitCode = reportError(system.status());
      return;
    }
    fmt::print("{}", spec::formatSystem(*system));
    exitCode = 0;
  });
  auto left = std::make_shared<std::string>();
  auto right = std::make_shared<std::string>();
  CLI::App* diff =
      group->add_subcommand("diff", "print the values that differ between two systems");
  diff->add_option("left", *left, "first system (name or path)")->required();
  diff->add_option("right", *right, "second system (name or path)")->required();
  diff->callback([left, right, &exitCode] {
    const Result<spec::SystemSpec> a = spec::loadSystem(*left);
    const Result<spec::SystemSpec> b = a.ok() ? spec::loadSystem(*right) : a;
    if (!a.ok() || !b.ok()) {
      exitCode = reportError((a.ok() ? b : a).status());
      return;
    }
    fmt::print("{}", spec::formatSystemDiff(*a, *b));
    exitCode = 0;
  });
}

}  // namespace trn::tools
