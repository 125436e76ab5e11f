#include "kernel_bench_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>
#include <string>
#include <vector>

#include "exit_codes.h"
#include "json_output.h"
#include "messages.h"
#include "run_options.h"
#include "trn/harness/check.h"
#include "trn/kernels/bench_inputs.h"
#include "trn/profile/chip_summary.h"
#include "trn/profile/report_json.h"
#include "trn/profile/trace.h"

namespace trn::tools {
namespace {

struct BenchArgs {
  std::string name;
  std::vector<std::string> shapes;
  std::vector<std::string> dtypes;
  std::string chip = "trn2";
  std::string mode = "functional+timing";
  std::string trace;
  std::string report;  ///< --report: the HTML report's path
  std::uint64_t seed = runtime::RunOptions{}.seed;
  bool allowRaces = false;
  bool noCheck = false;
  kernel::AutoCast autoCast = kernel::AutoCast::kNone;
  int lnc = runtime::RunOptions{}.lnc;
  std::uint64_t maxInstructions = runtime::RunOptions{}.maxInstructions;
  std::vector<std::string> plugins;
  bool json = false;
};

std::string describeInputs(std::span<const kernel::TensorSpec> specs) {
  std::vector<std::string> parts;
  for (const kernel::TensorSpec& t : specs) {
    parts.push_back(fmt::format("{}[{}] {}", t.name, fmt::join(t.shape, "x"), dtypeName(t.dtype)));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

void printNumerics(const harness::CheckResult& result) {
  const harness::Tolerance& tolerance = result.tolerance;
  fmt::print("numerics vs the float64 reference (pass: |out - ref| <= {:g} + {:g} |ref|):\n",
             tolerance.atol, tolerance.rtol);
  for (std::size_t i = 0; i < result.comparisons.size(); ++i) {
    const harness::Comparison& c = result.comparisons[i];
    const kernel::TensorSpec& out = result.compiled->outputs[i];
    fmt::print("  {}[{}]: max abs error {:.3g}, max rel error {:.3g}, {} of {} outside: {}\n",
               out.name, fmt::join(out.shape, "x"), c.maxAbsError, c.maxRelError, c.failures,
               result.outputs[i].size(), c.pass ? "PASS" : "FAIL");
  }
}

void printPerformance(const harness::CheckResult& result) {
  const profile::Report& r = result.report;
  fmt::print("simulated time {}\n", toString(r.total));
  fmt::print(
      "useful work    {:.4g} GFLOP, {:.3f} TFLOP/s, MFU {:.1f} % of the dense BF16 peak "
      "({:.1f} TFLOP/s)\n",
      result.usefulFlops * 1e-9,
      r.total.count() > 0 ? result.usefulFlops / static_cast<double>(r.total.count()) : 0.0,
      100.0 * result.mfu, r.peBf16PeakTflops);
  fmt::print("{}\n", profile::formatVerdict(result.verdict));
  std::fputs(profile::formatReport(r).c_str(), stdout);
}

/// Writes the Perfetto trace of a bench run.
Status writeBenchTrace(const std::string& path, const harness::CheckResult& result) {
  std::vector<profile::TraceSegment> cores;
  for (std::size_t c = 0; c < result.cores.size(); ++c) {
    cores.push_back({fmt::format("core {}", result.physicalCores[c]),
                     &result.launch.cores[c]->program, &result.cores[c]});
  }
  return profile::writeCoresTraceFile(path, cores);
}

void printText(const BenchArgs& args, const harness::CheckResult& result, core::RunMode mode,
               const spec::ChipSpec& chip) {
  const kernel::CompileSummary& s = result.compiled->summary;
  fmt::print(
      "compiled       {} instructions, {} semaphore waits, SBUF {} B and PSUM {} B per "
      "partition at most{}\n",
      s.instructions, s.semaphoreWaits, s.sbufPeakBytes, s.psumPeakBytes,
      s.spills > 0 ? fmt::format(", {} tile(s) spilled to HBM ({} B of spill traffic)", s.spills,
                                 s.spillBytes)
                   : std::string());
  if (result.checked) {
    printNumerics(result);
  } else if (core::hasData(mode)) {
    fmt::print("numerics       not checked (--no-check)\n");
  } else {
    fmt::print("numerics       not checked: timing-only computes no values\n");
  }
  if (core::hasTiming(mode)) {
    printPerformance(result);
  }
  if (result.cores.size() > 1) {
    fmt::print("\n");
    std::fputs(profile::formatChipSummary(
                   profile::makeChipSummary(result.cores, result.physicalCores, chip))
                   .c_str(),
               stdout);
  }
  if (!args.trace.empty()) {
    fmt::print("\ntrace: {} (open in ui.perfetto.dev)\n", args.trace);
  }
}

int bench(const BenchArgs& args) {
  constexpr std::string_view kCommand = "kernels bench";
  auto fail = [&](const Status& status) {
    return args.json ? reportJsonError(kCommand, status) : reportError(status);
  };
  if (Status loaded = loadPlugins(args.plugins); !loaded.ok()) {
    return fail(loaded);
  }
  const kernels::KernelEntry* entry = kernels::findKernel(args.name);
  if (entry == nullptr) {
    return fail(
        notFound(fmt::format("no kernel '{}'; 'trnsim kernels list' shows them", args.name)));
  }
  Result<std::vector<kernel::TensorSpec>> specs =
      kernels::benchInputs(*entry, args.shapes, args.dtypes);
  Result<runtime::Session> session =
      specs.ok() ? runtime::Session::open(args.chip) : specs.status();
  Result<core::RunMode> mode = session.ok() ? core::parseRunMode(args.mode) : session.status();
  if (!mode.ok()) {
    return fail(mode.status());
  }
  harness::CheckOptions options;
  options.run.mode = *mode;
  options.run.seed = args.seed;
  options.run.detectRaces = !args.allowRaces;
  // Records give the verdict its critical path (and the trace and report their timelines).
  options.run.record = core::hasTiming(*mode);
  if (!args.report.empty() && !core::hasTiming(*mode)) {
    return fail(Status(ErrorCode::kInvalidArgument,
                       "--report needs a timed mode (functional+timing or timing-only)"));
  }
  options.run.maxInstructions = args.maxInstructions;
  options.checkNumerics = !args.noCheck;
  options.run.lnc = args.lnc;
  options.compile.autoCast = args.autoCast;
  if (!args.json) {
    fmt::print("{} on {}{} ({}): {}\n", entry->name, session->chip().name,
               args.lnc > 1 ? fmt::format(", LNC={} (physical cores 0..{})", args.lnc, args.lnc - 1)
                            : std::string(),
               core::runModeName(*mode), describeInputs(*specs));
  }
  Result<harness::CheckResult> result = harness::checkKernel(*session, *entry, *specs, options);
  if (!result.ok()) {
    return fail(result.status());
  }
  if (!args.trace.empty()) {
    if (Status written = writeBenchTrace(args.trace, *result); !written.ok()) {
      return fail(written);
    }
  }
  const int code = result->pass ? kExitOk : kExitCheckFailed;
  std::vector<profile::PageRun> runs;
  for (std::size_t c = 0; c < result->cores.size(); ++c) {
    const std::string core = fmt::format("core {}", result->physicalCores[c]);
    runs.push_back({core, core, &result->launch.cores[c]->program, &result->cores[c], {}});
  }
  const std::string title = fmt::format("trnsim kernels bench {}", entry->name);
  if (!args.json) {
    printText(args, *result, *mode, session->chip());
    if (!args.report.empty()) {
      if (const Status written = writeReport(args.report, runs, session->chip(), title);
          !written.ok()) {
        return fail(written);
      }
    }
    return code;
  }
  if (!args.report.empty()) {
    if (const Status written = writeReport(args.report, runs, session->chip(), title, false);
        !written.ok()) {
      return fail(written);
    }
  }
  nlohmann::json doc = jsonDocument(kCommand);
  doc["chip"] = session->chip().name;
  doc["mode"] = std::string(core::runModeName(*mode));
  doc["lnc"] = args.lnc;
  doc["result"] = checkResultToJson(entry->name, *result);
  doc["chip_summary"] = result->cores.size() > 1
                            ? profile::chipSummaryToJson(profile::makeChipSummary(
                                  result->cores, result->physicalCores, session->chip()))
                            : nlohmann::json(nullptr);
  doc["trace"] = args.trace.empty() ? nlohmann::json(nullptr) : nlohmann::json(args.trace);
  doc["report"] = args.report.empty() ? nlohmann::json(nullptr) : nlohmann::json(args.report);
  printJson(std::move(doc), code);
  return code;
}

}  // namespace

void registerKernelBenchCommand(CLI::App& kernelsGroup, int& exitCode) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = kernelsGroup.add_subcommand(
      "bench", "Run a kernel, check it against its float64 reference and report its speed");
  cmd->add_option("name", args->name, "kernel name ('trnsim kernels list')")->required();
  cmd->add_option("--shape", args->shapes,
                  "input shape, in input order or as NAME=SHAPE, e.g. --shape x=512x2048");
  cmd->add_option("--dtype", args->dtypes,
                  "dtype of every floating-point input (e.g. bf16), or NAME=DTYPE for one");
  cmd->add_option("--chip", args->chip, "chip name or YAML path")->capture_default_str();
  cmd->add_option("--mode", args->mode, "functional+timing, timing-only or functional-only")
      ->capture_default_str();
  cmd->add_option("--trace", args->trace, "write a Perfetto trace of the run");
  addReportOption(cmd, args->report);
  addSeedOption(cmd, args->seed, "seed of the random inputs");
  addMaxInstructionsOption(cmd, args->maxInstructions);
  cmd->add_flag("--allow-races", args->allowRaces, "do not check for races");
  cmd->add_option("--lnc", args->lnc,
                  "physical cores of the logical core the kernel is launched on (1 or 2): its "
                  "SPMD programs split the work")
      ->capture_default_str();
  addAutoCastOption(cmd, args->autoCast);
  cmd->add_flag("--no-check", args->noCheck,
                "skip the float64 reference and the numerics check (the run still computes)");
  addPluginOption(cmd, args->plugins);
  cmd->add_flag("--json", args->json,
                "print one JSON document (docs/cli.md) instead of the text report");
  cmd->callback([args, &exitCode] { exitCode = bench(*args); });
}

}  // namespace trn::tools
