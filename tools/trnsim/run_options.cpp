#include "run_options.h"

#include <fmt/format.h>

#include <charconv>
#include <limits>

#include "trn/kernels/plugin.h"

namespace trn::tools {
namespace {

/// `text` as an integer in [minimum, 2^64-1], or a CLI11 validation error naming `option`.
std::uint64_t parseUnsigned(const std::string& option, const std::string& text,
                            std::uint64_t minimum) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < minimum) {
    throw CLI::ValidationError(
        option, fmt::format("'{}' is not a decimal integer in {}..{}", text, minimum,
                            std::numeric_limits<std::uint64_t>::max()));
  }
  return value;
}

}  // namespace

void addSeedOption(CLI::App* command, std::uint64_t& seed, const std::string& help) {
  command
      ->add_option_function<std::string>(
          "--seed", [&seed](const std::string& text) { seed = parseUnsigned("--seed", text, 0); },
          help)
      ->default_str(std::to_string(seed));
}

void addMaxInstructionsOption(CLI::App* command, std::uint64_t& limit) {
  command
      ->add_option_function<std::string>(
          "--max-instructions",
          [&limit](const std::string& text) {
            limit = parseUnsigned("--max-instructions", text, 1);
          },
          "stop with an error after this many executed instructions (an endless dynamic loop)")
      ->default_str(std::to_string(limit));
}

void addAutoCastOption(CLI::App* command, kernel::AutoCast& autoCast) {
  command
      ->add_option_function<std::string>(
          "--auto-cast",
          [&autoCast](const std::string& name) {
            autoCast = name == "matmult" ? kernel::AutoCast::kMatmult : kernel::AutoCast::kNone;
          },
          "matmult: matrix products of fp32 tensors in bf16 with fp32 accumulation, as "
          "neuronx-cc does by default; none: as the kernel is written")
      ->check(CLI::IsMember({"none", "matmult"}))
      ->default_str("none");
}

void addPluginOption(CLI::App* command, std::vector<std::string>& plugins) {
  command->add_option("--plugin", plugins,
                      "shared library of user kernels to add to the library (repeatable; "
                      "docs/install.md)");
}

Status loadPlugins(const std::vector<std::string>& plugins) {
  for (const std::string& path : plugins) {
    TRN_RETURN_IF_ERROR(kernels::loadKernelPlugin(path).status());
  }
  return {};
}

}  // namespace trn::tools
