#include "kernel_commands.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>

#include "kernel_bench_command.h"
#include "messages.h"
#include "run_options.h"
#include "trn/harness/check.h"
#include "trn/kernels/registry.h"
#include "trn/runtime/host_io.h"
#include "trn/runtime/session.h"

namespace trn::tools {
namespace {

constexpr int kUserError = 1;

struct CompileArgs {
  std::string name;
  std::string chip = "trn2";
  std::string dumpAfter;
  std::string output;
  int bufs = 2;
  int lnc = 1;
  kernel::AutoCast autoCast = kernel::AutoCast::kNone;
};

int list() {
  std::size_t width = 0;
  for (const kernels::KernelEntry& k : kernels::referenceKernels()) {
    width = std::max(width, k.name.size());
  }
  for (const kernels::KernelEntry& k : kernels::referenceKernels()) {
    std::vector<std::string> inputs;
    for (const kernel::TensorSpec& t : k.defaultInputs) {
      inputs.push_back(
          fmt::format("{}[{}] {}", t.name, fmt::join(t.shape, "x"), dtypeName(t.dtype)));
    }
    // [spmd]: the kernel splits its work over the program instances of an SPMD grid.
    fmt::print("{:<{}}  {}  ({}){}\n", k.name, width, k.summary, fmt::join(inputs, ", "),
               k.spmd ? "  [spmd]" : "");
  }
  return 0;
}

int compileKernel(const CompileArgs& args) {
  const kernels::KernelEntry* entry = kernels::findKernel(args.name);
  if (entry == nullptr) {
    printError(fmt::format("no kernel '{}'; 'trnsim kernels list' shows them", args.name));
    return kUserError;
  }
  Result<runtime::Session> session = runtime::Session::open(args.chip);
  if (!session.ok()) {
    printError(session.status().message());
    return kUserError;
  }
  kernel::CompileOptions options;
  options.bufs = args.bufs;
  options.autoCast = args.autoCast;
  if (!args.dumpAfter.empty()) {
    options.dumpAfter = args.dumpAfter;
    options.dumpStream = &std::cout;
  }
  if (args.lnc > 1 && !entry->spmd) {
    printError(
        fmt::format("kernel '{}' does not split its work over SPMD programs; at LNC={} "
                    "every core would compute all of it",
                    entry->name, args.lnc));
    return kUserError;
  }
  if (Status status = harness::checkAutoCast(*entry, entry->defaultInputs, args.autoCast);
      !status.ok()) {
    printError(status.message());
    return kUserError;
  }
  runtime::RunOptions launchOptions;
  launchOptions.lnc = args.lnc;
  Result<runtime::CompiledLaunch> launch =
      session->compileLaunch(entry->def, entry->defaultInputs, launchOptions, options);
  if (!launch.ok()) {
    printError(launch.status().message());
    return kUserError;
  }
  isa::ChipProgram chip;
  chip.lnc = args.lnc;
  for (std::size_t c = 0; c < launch->cores.size(); ++c) {
    const kernel::CompileSummary& s = launch->cores[c]->summary;
    fmt::print(
        "compiled {} for {}{}: {} instructions, {} semaphore waits for {} cross-engine "
        "dependencies, SBUF {} B and PSUM {} B per partition at most, {}-deep buffering{}\n",
        entry->name, session->chip().name,
        launch->cores.size() > 1 ? fmt::format(" core {}", c) : std::string(), s.instructions,
        s.semaphoreWaits, s.crossEngineDependencies, s.sbufPeakBytes, s.psumPeakBytes, s.bufs,
        s.spills > 0 ? fmt::format(", {} tile(s) spilled to HBM", s.spills) : std::string());
    chip.cores.push_back({static_cast<int>(c), launch->cores[c]->program});
  }
  if (!args.output.empty()) {
    const Status saved = runtime::saveChipProgram(chip, args.output);
    if (!saved.ok()) {
      printError(saved.message());
      return kUserError;
    }
    fmt::print("program: {} (run it with 'trnsim run')\n", args.output);
  }
  return 0;
}

}  // namespace

void registerKernelCommands(CLI::App& app, int& exitCode) {
  CLI::App* group = app.add_subcommand("kernels", "The reference tile-kernel library");
  group->require_subcommand(1);
  group->add_subcommand("list", "List the reference kernels")->callback([&exitCode] {
    exitCode = list();
  });
  auto args = std::make_shared<CompileArgs>();
  CLI::App* compile = group->add_subcommand("compile", "Compile a kernel at its default shapes");
  compile->add_option("name", args->name, "kernel name")->required();
  compile->add_option("--chip", args->chip, "chip name or YAML path")->capture_default_str();
  compile->add_option("--dump-after", args->dumpAfter,
                      "print the kernel IR after this pass (trace, allocate, place-dma, "
                      "synchronise, lower)");
  compile->add_option("--bufs", args->bufs, "multi-buffering depth")->check(CLI::Range(1, 8));
  compile
      ->add_option("--lnc", args->lnc,
                   "compile an SPMD launch over this many physical cores (a chip program)")
      ->capture_default_str();
  compile->add_option("-o,--output", args->output, "save the Program (binary format)");
  addAutoCastOption(compile, args->autoCast);
  compile->callback([args, &exitCode] { exitCode = compileKernel(*args); });
  registerKernelBenchCommand(*group, exitCode);
}

}  // namespace trn::tools
