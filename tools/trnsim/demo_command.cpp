#include "demo_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "demo_model.h"
#include "exit_codes.h"
#include "json_output.h"
#include "messages.h"
#include "run_options.h"
#include "trn/harness/decoder_layer.h"
#include "trn/profile/trace.h"
#include "trn/spec/report.h"

namespace trn::tools {
namespace {

struct DemoArgs {
  std::string chip = "trn2";
  std::string mode = "functional+timing";
  std::string trace = "out/trace.json";
  std::string report;  ///< --report: the HTML report's path
  std::uint64_t seed = runtime::RunOptions{}.seed;
  std::uint64_t maxInstructions = runtime::RunOptions{}.maxInstructions;
  int lnc = 0;  ///< physical cores of the logical core; 0: the chip's default
  bool small = false;
  bool noCheck = false;
  bool json = false;
};

void printChipSummary(const spec::ChipSpec& chip) {
  const spec::Core& core = chip.core;
  std::printf("%s: %s\n", chip.name.c_str(), chip.description.c_str());
  std::printf("  per core: PE %lldx%lld at %s, ACT %s, DVE %s, POOL %s\n",
              static_cast<long long>(core.pe.rows), static_cast<long long>(core.pe.columns),
              toString(core.pe.clock).c_str(), toString(core.act.clock).c_str(),
              toString(core.dve.clock).c_str(), toString(core.pool.clock).c_str());
  std::printf(
      "            SBUF %lld x %s, PSUM %lld banks x %s per partition, %lld DMA engines x "
      "%lld queues at %s each\n",
      static_cast<long long>(core.sbuf.partitions), toString(core.sbuf.partitionBytes).c_str(),
      static_cast<long long>(core.psum.banks), toString(core.psum.bankBytes).c_str(),
      static_cast<long long>(core.dma.enginesPerCore),
      static_cast<long long>(core.dma.queuesPerEngine), toString(core.dma.engineBandwidth).c_str());
  std::printf("  HBM %s at %s; every value and its source: trnsim spec show %s\n",
              toString(chip.hbm.capacity).c_str(), toString(chip.hbm.bandwidth).c_str(),
              chip.name.c_str());
  for (const spec::DerivedValue& d : spec::derivedValues(chip)) {
    std::printf("  %s: %s (%s)\n", d.name.c_str(), d.value.c_str(), d.formula.c_str());
  }
}

std::string describeShapes(const harness::CheckResult& result) {
  std::vector<std::string> parts;
  for (const kernel::TensorSpec& t : result.compiled->inputs) {
    parts.push_back(fmt::format("{}[{}]", t.name, fmt::join(t.shape, "x")));
  }
  return fmt::format("{}", fmt::join(parts, " "));
}

std::string numericsCell(const harness::CheckResult& result) {
  if (!result.checked) {
    return "not checked";
  }
  double worst = 0;
  for (const harness::Comparison& c : result.comparisons) {
    worst = std::max(worst, c.maxAbsError);
  }
  return fmt::format("{} (max err {:.2g})", result.pass ? "PASS" : "FAIL", worst);
}

std::string microseconds(Picoseconds t) {
  return fmt::format("{:.2f} us", static_cast<double>(t.count()) * 1e-6);
}

/// `one` is the layer on one core; `logical`, when given, on the cores of a logical core.
void printLayer(const harness::DecoderLayerConfig& c, const harness::DecoderLayerRun& one,
                const harness::DecoderLayerRun* logical, int lnc) {
  const harness::DecoderLayerRun& shown = logical != nullptr ? *logical : one;
  if (logical != nullptr) {
    fmt::print("{:<29} {:<16} {:>10} {:>10} {:>6} {:>6}  {:<36} {}\n", "step", "kernel", "1 core",
               fmt::format("{} cores", lnc), "x", "MFU", "bound by", "numerics vs float64");
  } else {
    fmt::print("{:<29} {:<16} {:>10} {:>6}  {:<36} {:<24} {}\n", "step", "kernel", "time", "MFU",
               "bound by", "numerics vs float64", "inputs");
  }
  for (std::size_t i = 0; i < shown.steps.size(); ++i) {
    const harness::CheckResult& r = shown.steps[i].result;
    const std::string mfu = r.usefulFlops > 0 ? fmt::format("{:.1f}%", 100.0 * r.mfu) : "-";
    if (logical != nullptr) {
      const Picoseconds single = one.steps[i].result.report.total;
      const double speedup =
          r.report.total.count() > 0
              ? static_cast<double>(single.count()) / static_cast<double>(r.report.total.count())
              : 0.0;
      fmt::print("{:<29} {:<16} {:>10} {:>10} {:>5.2f}x {:>6}  {:<36} {}\n", shown.steps[i].name,
                 shown.steps[i].kernel, microseconds(single), microseconds(r.report.total), speedup,
                 mfu, harness::boundBy(r), numericsCell(r));
    } else {
      fmt::print("{:<29} {:<16} {:>10} {:>6}  {:<36} {:<24} {}\n", shown.steps[i].name,
                 shown.steps[i].kernel, microseconds(r.report.total), mfu,
                 harness::boundBy(r), numericsCell(r), describeShapes(r));
    }
  }
  auto rates = [&](const harness::DecoderLayerRun& run) {
    const double seconds = static_cast<double>(run.total.count()) * 1e-12;
    return std::pair(seconds > 0 ? run.usefulFlops / seconds * 1e-12 : 0.0,
                     seconds > 0 ? static_cast<double>(c.tokens) / seconds : 0.0);
  };
  const auto [tflops1, tokens1] = rates(one);
  fmt::print(
      "\nlayer on 1 core: {} for {:.2f} GFLOP of matrix products: {:.1f} TFLOP/s, MFU {:.1f} %, "
      "{:.0f} tokens/s\n",
      microseconds(one.total), one.usefulFlops * 1e-9, tflops1, 100.0 * one.mfu, tokens1);
  if (logical != nullptr) {
    const auto [tflops, tokens] = rates(*logical);
    fmt::print(
        "layer on {} cores (LNC={}): {}: {:.1f} TFLOP/s, MFU {:.1f} % of the {} cores, {:.0f} "
        "tokens/s per logical core: {:.2f}x one core\n",
        lnc, lnc, microseconds(logical->total), tflops, 100.0 * logical->mfu, lnc, tokens,
        logical->total.count() > 0
            ? static_cast<double>(one.total.count()) / static_cast<double>(logical->total.count())
            : 0.0);
    if (!one.output.values.empty()) {
      const bool same = one.output.values == logical->output.values;
      fmt::print("layer output on {} cores {} the one-core output\n", lnc,
                 same ? "is bit-identical to" : "DIFFERS from");
    }
  }
}

Status writeLayerTrace(const std::string& path, const harness::DecoderLayerRun& run) {
  std::vector<profile::TraceSegment> segments;
  for (std::size_t s = 0; s < run.steps.size(); ++s) {
    const harness::LayerStep& step = run.steps[s];
    const harness::CheckResult& r = step.result;
    for (std::size_t c = 0; c < r.cores.size(); ++c) {
      const std::string core =
          r.cores.size() > 1 ? fmt::format(", core {}", r.physicalCores[c]) : std::string();
      segments.push_back({fmt::format("{} ({}{})", step.name, step.kernel, core),
                          &r.launch.cores[c]->program, &r.cores[c], static_cast<int>(s)});
    }
  }
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::error_code error;
  if (!dir.empty()) {
    std::filesystem::create_directories(dir, error);
  }
  return profile::writeSequenceTraceFile(path, segments);
}

nlohmann::json layerToJson(const harness::DecoderLayerRun& run) {
  nlohmann::json steps = nlohmann::json::array();
  for (const harness::LayerStep& step : run.steps) {
    nlohmann::json result = checkResultToJson(step.kernel, step.result);
    result["step"] = step.name;
    steps.push_back(std::move(result));
  }
  return {{"total_ps", run.total.count()},
          {"useful_flops", run.usefulFlops},
          {"mfu", run.mfu},
          {"pass", run.pass},
          {"steps", std::move(steps)}};
}

/// The layer's kernels end to end, each core of a step on its lane ("core 0", "core 1").
Status writeLayerReport(const std::string& path, const harness::DecoderLayerRun& run,
                        const spec::ChipSpec& chip, bool announce = true) {
  std::vector<profile::PageRun> runs;
  Picoseconds offset;
  for (const harness::LayerStep& step : run.steps) {
    const harness::CheckResult& r = step.result;
    Picoseconds longest;
    for (std::size_t c = 0; c < r.cores.size(); ++c) {
      const std::string core =
          r.cores.size() > 1 ? fmt::format(", core {}", r.physicalCores[c]) : std::string();
      runs.push_back({fmt::format("{} ({}{})", step.name, step.kernel, core),
                      fmt::format("core {}", r.physicalCores[c]), &r.launch.cores[c]->program,
                      &r.cores[c], offset});
      longest = std::max(longest, r.cores[c].total);
    }
    offset += longest;
  }
  return writeReport(path, runs, chip, "trnsim demo: one decoder layer", announce);
}

/// Runs the demo; on success `pass` tells whether every kernel met its tolerance.
Status runDemo(const DemoArgs& args, bool& pass) {
  TRN_ASSIGN_OR_RETURN(const runtime::Session session, runtime::Session::open(args.chip));
  TRN_ASSIGN_OR_RETURN(const core::RunMode mode, core::parseRunMode(args.mode));
  const spec::ChipSpec* chip = &session.chip();
  if (!args.json) {
    printChipSummary(*chip);
  }
  const int lnc = args.lnc != 0 ? args.lnc : static_cast<int>(chip->chip.logicalCores.defaultSize);
  const std::vector<std::int64_t>& sizes = chip->chip.logicalCores.sizes;
  if (std::find(sizes.begin(), sizes.end(), lnc) == sizes.end()) {
    return invalidArgument(
        fmt::format("--lnc {}: chip '{}' has logical cores of {} physical "
                    "cores",
                    lnc, chip->name, fmt::join(sizes, " or ")));
  }

  const harness::DecoderLayerConfig config =
      args.small ? harness::DecoderLayerConfig::small() : harness::DecoderLayerConfig::tinyLlama();
  if (!args.json) {
    fmt::print(
        "\none Llama-style decoder layer ({}) on {} {}, {}, {}:\n"
        "  {} tokens, hidden {}, {} query heads and {} kv heads of {}, SwiGLU MLP {}\n\n",
        args.small ? "small test shapes" : "TinyLlama-1.1B shapes",
        lnc > 1 ? fmt::format("one NeuronCore and on an LNC={} logical core (a core pair) of", lnc)
                : std::string("one NeuronCore of"),
        chip->name, dtypeName(config.dtype), core::runModeName(mode), config.tokens, config.hidden,
        config.heads, config.kvHeads, config.headDim, config.intermediate);
  }
  harness::CheckOptions options;
  options.run.mode = mode;
  options.run.seed = args.seed;
  options.run.maxInstructions = args.maxInstructions;
  const bool trace = (!args.trace.empty() || !args.report.empty()) && core::hasTiming(mode);
  if (!args.report.empty() && !core::hasTiming(mode)) {
    return invalidArgument("--report needs a timed mode (functional+timing or timing-only)");
  }
  // One core first; at LNC > 1 the logical core is the run that is checked and traced.
  harness::CheckOptions single = options;
  single.run.lnc = 1;
  // Records give each kernel's verdict its critical path (and the trace its timeline).
  single.run.record = core::hasTiming(mode) && lnc == 1;  // at LNC > 1 the pair is shown
  single.checkNumerics = !args.noCheck && lnc == 1;
  TRN_ASSIGN_OR_RETURN(const harness::DecoderLayerRun one,
                       harness::runDecoderLayer(session, config, single));
  std::optional<harness::DecoderLayerRun> logical;
  if (lnc > 1) {
    harness::CheckOptions pair = options;
    pair.run.lnc = lnc;
    pair.run.record = core::hasTiming(mode);
    pair.checkNumerics = !args.noCheck;
    TRN_ASSIGN_OR_RETURN(logical, harness::runDecoderLayer(session, config, pair));
  }
  const bool traceFile = trace && !args.trace.empty();
  if (traceFile) {
    TRN_RETURN_IF_ERROR(writeLayerTrace(args.trace, logical ? *logical : one));
  }
  pass = logical ? logical->pass : one.pass;
  if (args.json) {
    if (!args.report.empty()) {
      TRN_RETURN_IF_ERROR(
          writeLayerReport(args.report, logical ? *logical : one, *chip, /*announce=*/false));
    }
    nlohmann::json doc = jsonDocument("demo");
    doc["chip"] = chip->name;
    doc["mode"] = std::string(core::runModeName(mode));
    doc["lnc"] = lnc;
    doc["config"] = {{"name", args.small ? "small" : "tinyllama"},
                     {"tokens", config.tokens},
                     {"hidden", config.hidden},
                     {"heads", config.heads},
                     {"kv_heads", config.kvHeads},
                     {"head_dim", config.headDim},
                     {"intermediate", config.intermediate},
                     {"dtype", std::string(dtypeName(config.dtype))}};
    doc["one_core"] = layerToJson(one);
    doc["logical_core"] = logical ? layerToJson(*logical) : nlohmann::json(nullptr);
    doc["pass"] = pass;
    doc["trace"] = traceFile ? nlohmann::json(args.trace) : nlohmann::json(nullptr);
    doc["report"] = args.report.empty() ? nlohmann::json(nullptr) : nlohmann::json(args.report);
    printJson(std::move(doc), pass ? kExitOk : kExitCheckFailed);
    return {};
  }
  printLayer(config, one, logical ? &*logical : nullptr, lnc);
  TRN_RETURN_IF_ERROR(runDemoModel(session, mode, pass));
  if (!args.report.empty()) {
    TRN_RETURN_IF_ERROR(writeLayerReport(args.report, logical ? *logical : one, *chip));
  }
  if (traceFile) {
    fmt::print(
        "trace: {} (open it in ui.perfetto.dev: one process per kernel and core, one track per "
        "engine and DMA queue)\n",
        args.trace);
  }
  fmt::print("\nnext: 'trnsim kernels list' and 'trnsim kernels bench NAME' for each kernel\n");
  if (!pass) {
    printError("a kernel of the layer or the model is outside its tolerance");
  }
  return {};
}

}  // namespace

void registerDemoCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<DemoArgs>();
  CLI::App* demo = app.add_subcommand(
      "demo",
      "run the main job: one Llama-style decoder layer on one simulated NeuronCore and on an "
      "LNC=2 logical core");
  demo->add_option("--chip", args->chip, "chip name or YAML path")->capture_default_str();
  demo->add_option("--mode", args->mode, "functional+timing, timing-only or functional-only")
      ->capture_default_str();
  demo->add_option("--trace", args->trace, "Perfetto trace of the layer ('' for none)")
      ->capture_default_str();
  addReportOption(demo, args->report);
  addSeedOption(demo, args->seed, "seed of the inputs and weights");
  addMaxInstructionsOption(demo, args->maxInstructions);
  demo->add_option("--lnc", args->lnc,
                   "physical cores of the logical core the layer also runs on (default: the "
                   "chip's, 2 on trn2; 1 runs one core only)");
  demo->add_flag("--small", args->small, "small shapes (128 tokens, hidden 256), for a quick run");
  demo->add_flag("--no-check", args->noCheck, "skip the float64 references and numerics checks");
  demo->add_flag("--json", args->json,
                 "print one JSON document (docs/cli.md) instead of the text report");
  demo->callback([args, &exitCode] {
    bool pass = true;
    const Status status = runDemo(*args, pass);
    if (!status.ok()) {
      exitCode = args->json ? reportJsonError("demo", status) : reportError(status);
    } else {
      exitCode = pass ? kExitOk : kExitCheckFailed;
    }
  });
}

}  // namespace trn::tools
