#include "demo_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

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
  std::uint64_t seed = runtime::RunOptions{}.seed;
  std::uint64_t maxInstructions = runtime::RunOptions{}.maxInstructions;
  bool small = false;
  bool noCheck = false;
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

void printLayer(const harness::DecoderLayerConfig& c, const harness::DecoderLayerRun& run) {
  fmt::print("{:<29} {:<16} {:>10} {:>6}  {:<14} {:<24} {}\n", "step", "kernel", "time", "MFU",
             "bound by", "numerics vs float64", "inputs");
  for (const harness::LayerStep& step : run.steps) {
    const harness::CheckResult& r = step.result;
    const std::string mfu = r.usefulFlops > 0 ? fmt::format("{:.1f}%", 100.0 * r.mfu) : "-";
    fmt::print("{:<29} {:<16} {:>10} {:>6}  {:<14} {:<24} {}\n", step.name, step.kernel,
               microseconds(r.report.total), mfu, harness::boundBy(r.report), numericsCell(r),
               describeShapes(r));
  }
  const double seconds = static_cast<double>(run.total.count()) * 1e-12;
  fmt::print(
      "\nlayer total: {} for {:.2f} GFLOP of matrix products: {:.1f} TFLOP/s, MFU {:.1f} %; "
      "{} tokens -> {:.0f} tokens/s per core for this layer\n",
      microseconds(run.total), run.usefulFlops * 1e-9,
      seconds > 0 ? run.usefulFlops / seconds * 1e-12 : 0.0, 100.0 * run.mfu, c.tokens,
      seconds > 0 ? static_cast<double>(c.tokens) / seconds : 0.0);
}

Status runDemo(const DemoArgs& args) {
  TRN_ASSIGN_OR_RETURN(const runtime::Session session, runtime::Session::open(args.chip));
  TRN_ASSIGN_OR_RETURN(const core::RunMode mode, core::parseRunMode(args.mode));
  const spec::ChipSpec* chip = &session.chip();
  printChipSummary(*chip);

  const harness::DecoderLayerConfig config =
      args.small ? harness::DecoderLayerConfig::small() : harness::DecoderLayerConfig::tinyLlama();
  fmt::print(
      "\none Llama-style decoder layer ({}) on one {} NeuronCore, {}, {}:\n"
      "  {} tokens, hidden {}, {} query heads and {} kv heads of {}, SwiGLU MLP {}\n\n",
      args.small ? "small test shapes" : "TinyLlama-1.1B shapes", chip->name,
      dtypeName(config.dtype), core::runModeName(mode), config.tokens, config.hidden, config.heads,
      config.kvHeads, config.headDim, config.intermediate);
  harness::CheckOptions options;
  options.run.mode = mode;
  options.run.seed = args.seed;
  options.run.maxInstructions = args.maxInstructions;
  options.run.record = !args.trace.empty() && core::hasTiming(mode);
  options.checkNumerics = !args.noCheck;
  TRN_ASSIGN_OR_RETURN(const harness::DecoderLayerRun run,
                       harness::runDecoderLayer(session, config, options));
  printLayer(config, run);

  if (options.run.record) {
    std::vector<profile::TraceSegment> segments;
    for (const harness::LayerStep& step : run.steps) {
      segments.push_back({step.name + " (" + step.kernel + ")", &step.result.compiled->program,
                          &step.result.stats});
    }
    const std::filesystem::path dir = std::filesystem::path(args.trace).parent_path();
    std::error_code error;
    if (!dir.empty()) {
      std::filesystem::create_directories(dir, error);
    }
    TRN_RETURN_IF_ERROR(profile::writeSequenceTraceFile(args.trace, segments));
    fmt::print(
        "trace: {} (open it in ui.perfetto.dev: one process per kernel, one track per "
        "engine and DMA queue)\n",
        args.trace);
  }
  fmt::print("\nnext: 'trnsim kernels list' and 'trnsim kernels bench NAME' for each kernel\n");
  if (!run.pass) {
    return failedPrecondition("a kernel of the layer is outside its float64 tolerance");
  }
  return {};
}

}  // namespace

void registerDemoCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<DemoArgs>();
  CLI::App* demo = app.add_subcommand(
      "demo", "run the main job: one Llama-style decoder layer on a simulated NeuronCore");
  demo->add_option("--chip", args->chip, "chip name or YAML path")->capture_default_str();
  demo->add_option("--mode", args->mode, "functional+timing, timing-only or functional-only")
      ->capture_default_str();
  demo->add_option("--trace", args->trace, "Perfetto trace of the layer ('' for none)")
      ->capture_default_str();
  addSeedOption(demo, args->seed, "seed of the inputs and weights");
  addMaxInstructionsOption(demo, args->maxInstructions);
  demo->add_flag("--small", args->small, "small shapes (128 tokens, hidden 256), for a quick run");
  demo->add_flag("--no-check", args->noCheck, "skip the float64 references and numerics checks");
  demo->callback([args, &exitCode] {
    const Status status = runDemo(*args);
    if (!status.ok()) {
      printError(status.message());
      exitCode = 1;
    }
  });
}

}  // namespace trn::tools
