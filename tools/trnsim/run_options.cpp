#include "run_options.h"

#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <limits>
#include <system_error>

#include "messages.h"
#include "trn/profile/html_report.h"

#include "trn/kernels/plugin.h"
#ifdef TRN_WITH_PYTHON
#include "trn/python/embedded.h"
#endif

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
            autoCast.mode = name == "matmult" ? kernel::AutoCast::kMatmult : kernel::AutoCast::kNone;
          },
          "matmult: matrix products of fp32 tensors in the --auto-cast-type with fp32 "
          "accumulation, as neuronx-cc does by default; none: as the kernel is written")
      ->check(CLI::IsMember({"none", "matmult"}))
      ->default_str("none");
  addAutoCastTypeOption(command, autoCast.type);
}

void addAutoCastTypeOption(CLI::App* command, DType& type) {
  command
      ->add_option_function<std::string>(
          "--auto-cast-type",
          [&type](const std::string& name) {
            Result<DType> parsed = kernel::parseAutoCastType(name);
            if (!parsed.ok()) {
              throw CLI::ValidationError("--auto-cast-type", parsed.status().message());
            }
            type = *parsed;
          },
          "the type auto-cast computes in: bf16 (the default), fp16, tf32 or fp8_e4m3 "
          "(neuronx-cc's choices; fp8 with --auto-cast matmult only)")
      ->default_str("bf16");
}

void addPluginOption(CLI::App* command, std::vector<std::string>& plugins) {
  command->add_option("--plugin", plugins,
                      "user kernels to add to the library (repeatable): a shared library "
                      "(docs/install.md) or a Python file that calls trnsim.kernels.register "
                      "(docs/python.md)");
}

Status loadPlugins(const std::vector<std::string>& plugins) {
  for (const std::string& path : plugins) {
    if (path.ends_with(".py")) {
#ifdef TRN_WITH_PYTHON
      TRN_RETURN_IF_ERROR(python::loadPythonKernels(path));
      continue;
#else
      return Status(ErrorCode::kUnsupported,
                    fmt::format("--plugin {}: this trnsim was built without Python "
                                "(TRN_BUILD_PYTHON=OFF)",
                                path));
#endif
    }
    TRN_RETURN_IF_ERROR(kernels::loadKernelPlugin(path).status());
  }
  return {};
}

void addReportOption(CLI::App* command, std::string& path) {
  command->add_option("--report", path,
                      "write the offline HTML report (timeline, verdict, hot source lines) to "
                      "FILE; open it in a browser");
}

Status writeReport(const std::string& path, const std::vector<profile::PageRun>& runs,
                   const spec::ChipSpec& chip, const std::string& title, bool announce) {
  for (const profile::PageRun& run : runs) {
    if (run.stats != nullptr && run.stats->unrecorded > 0) {
      printWarning(fmt::format(
          "the report holds the first {} instructions of {}; {} later ones were run but not "
          "recorded (the record limit bounds memory)",
          run.stats->records.size(), run.name, run.stats->unrecorded));
    }
  }
  profile::PageOptions options;
  options.title = title;
  profile::PageSummary summary;
  TRN_RETURN_IF_ERROR(profile::writeHtmlReportFile(path, runs, chip, options, &summary));
  if (!announce) {
    return {};
  }
  for (const auto& [name, headline] : summary.verdicts) {
    fmt::print("verdict{}: {}\n", runs.size() > 1 ? fmt::format(" ({})", name) : std::string(),
               headline);
  }
  std::error_code error;
  const std::uintmax_t bytes = std::filesystem::file_size(path, error);
  fmt::print("report: {} ({} KiB, {} timeline slices{}, {} source lines; open it in a browser)\n",
             path, error ? 0 : bytes / 1024, summary.slices,
             summary.aggregated > 0 ? fmt::format(", {} of them merged", summary.aggregated)
                                    : std::string(),
             summary.lines);
  return {};
}

}  // namespace trn::tools
