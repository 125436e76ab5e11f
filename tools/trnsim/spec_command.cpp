#include "spec_command.h"

#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>

#include "exit_codes.h"
#include "messages.h"
#include "trn/spec/loader.h"
#include "trn/spec/report.h"

namespace trn::tools {
namespace {

int show(const std::string& chip) {
  Result<spec::ChipSpec> loaded = spec::loadChip(chip);
  if (!loaded.ok()) {
    return reportError(loaded.status());
  }
  fmt::print("{}", spec::formatChip(*loaded));
  return 0;
}

int diff(const std::string& left, const std::string& right) {
  Result<spec::ChipSpec> a = spec::loadChip(left);
  Result<spec::ChipSpec> b = spec::loadChip(right);
  for (const Result<spec::ChipSpec>* r : {&a, &b}) {
    if (!r->ok()) {
      return reportError(r->status());
    }
  }
  fmt::print("{}", spec::formatDiff(*a, *b));
  return 0;
}

int list() {
  fmt::print("chips in {}/chips:\n", spec::configDir());
  for (const std::string& name : spec::listChips()) {
    fmt::print("  {}\n", name);
  }
  return 0;
}

}  // namespace

void registerSpecCommands(CLI::App& app, int& exitCode) {
  CLI::App* spec = app.add_subcommand("spec", "Hardware descriptions (configs/chips/*.yaml)");
  spec->require_subcommand(1);

  auto chip = std::make_shared<std::string>();
  CLI::App* showCommand =
      spec->add_subcommand("show", "Print a chip description with units and sources");
  showCommand->add_option("chip", *chip, "chip name (e.g. trn2) or path to a YAML file")
      ->required();
  showCommand->callback([chip, &exitCode] { exitCode = show(*chip); });

  auto left = std::make_shared<std::string>();
  auto right = std::make_shared<std::string>();
  CLI::App* diffCommand = spec->add_subcommand("diff", "Print the values that differ");
  diffCommand->add_option("left", *left, "first chip (name or path)")->required();
  diffCommand->add_option("right", *right, "second chip (name or path)")->required();
  diffCommand->callback([left, right, &exitCode] { exitCode = diff(*left, *right); });

  spec->add_subcommand("list", "List the chips in the config directory")
      ->callback([&exitCode] { exitCode = list(); });
  spec->add_subcommand("schema", "Print every key of the description format (Markdown)")
      ->callback([&exitCode] {
        fmt::print("{}", spec::formatSchemaMarkdown());
        exitCode = 0;
      });
}

}  // namespace trn::tools
