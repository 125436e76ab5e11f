#include "kernel_commands.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>

#include "exit_codes.h"
#include "kernel_bench_command.h"
#include "messages.h"
#include "run_options.h"
#include "trn/harness/check.h"
#include "trn/kernels/bench_inputs.h"
#include "trn/kernels/registry.h"
#include "trn/runtime/host_io.h"
#include "trn/runtime/session.h"

namespace trn::tools {
namespace {

struct CompileArgs {
  std::string name;
  std::vector<std::string> shapes;
  std::vector<std::string> dtypes;
  std::vector<std::string> plugins;
  std::string chip = "trn2";
  std::string dumpAfter;
  std::string output;
  int bufs = 2;
  int lnc = 1;
  kernel::AutoCast autoCast = kernel::AutoCast::kNone;
};

void listEntry(const kernels::KernelEntry& k, std::size_t width, bool user) {
  std::vector<std::string> inputs;
  for (const kernel::TensorSpec& t : k.defaultInputs) {
    inputs.push_back(fmt::format("{}[{}] {}", t.name, fmt::join(t.shape, "x"), dtypeName(t.dtype)));
  }
  // [spmd]: the kernel splits its work over the program instances of an SPMD grid.
  fmt::print("{:<{}}  {}  ({}){}{}\n", k.name, width, k.summary, fmt::join(inputs, ", "),
             k.spmd ? "  [spmd]" : "", user ? "  [plugin]" : "");
}

int list(const std::vector<std::string>& plugins) {
  if (Status loaded = loadPlugins(plugins); !loaded.ok()) {
    return reportError(loaded);
  }
  std::size_t width = 0;
  for (const kernels::KernelEntry& k : kernels::referenceKernels()) {
    width = std::max(width, k.name.size());
  }
  for (const kernels::KernelEntry* k : kernels::userKernels()) {
    width = std::max(width, k->name.size());
  }
  for (const kernels::KernelEntry& k : kernels::referenceKernels()) {
    listEntry(k, width, false);
  }
  for (const kernels::KernelEntry* k : kernels::userKernels()) {
    listEntry(*k, width, true);
  }
  return kExitOk;
}

Status compileKernel(const CompileArgs& args) {
  TRN_RETURN_IF_ERROR(loadPlugins(args.plugins));
  const kernels::KernelEntry* entry = kernels::findKernel(args.name);
  if (entry == nullptr) {
    return notFound(fmt::format("no kernel '{}'; 'trnsim kernels list' shows them", args.name));
  }
  TRN_ASSIGN_OR_RETURN(const std::vector<kernel::TensorSpec> specs,
                       kernels::benchInputs(*entry, args.shapes, args.dtypes));
  TRN_ASSIGN_OR_RETURN(const runtime::Session session, runtime::Session::open(args.chip));
  kernel::CompileOptions options;
  options.bufs = args.bufs;
  options.autoCast = args.autoCast;
  if (!args.dumpAfter.empty()) {
    options.dumpAfter = args.dumpAfter;
    options.dumpStream = &std::cout;
  }
  if (args.lnc > 1 && !entry->spmd) {
    return invalidArgument(
        fmt::format("kernel '{}' does not split its work over SPMD programs; at LNC={} "
                    "every core would compute all of it",
                    entry->name, args.lnc));
  }
  TRN_RETURN_IF_ERROR(harness::checkAutoCast(*entry, specs, args.autoCast));
  runtime::RunOptions launchOptions;
  launchOptions.lnc = args.lnc;
  TRN_ASSIGN_OR_RETURN(const runtime::CompiledLaunch launch,
                       session.compileLaunch(entry->def, specs, launchOptions, options));
  for (std::size_t c = 0; c < launch.cores.size(); ++c) {
    const kernel::CompileSummary& s = launch.cores[c]->summary;
    fmt::print(
        "compiled {} for {}{}: {} instructions, {} semaphore waits for {} cross-engine "
        "dependencies, SBUF {} B and PSUM {} B per partition at most, {}-deep buffering{}{}\n",
        entry->name, session.chip().name,
        launch.cores.size() > 1 ? fmt::format(" core {}", c) : std::string(), s.instructions,
        s.semaphoreWaits, s.crossEngineDependencies, s.sbufPeakBytes, s.psumPeakBytes, s.bufs,
        s.singleSites > 0 ? fmt::format(" ({} declaration site(s) single to fit)", s.singleSites)
                          : std::string(),
        s.spills > 0 ? fmt::format(", {} tile(s) spilled to HBM ({} B of spill traffic)", s.spills,
                                   s.spillBytes)
                     : std::string());
  }
  if (!args.output.empty()) {
    TRN_RETURN_IF_ERROR(runtime::saveChipProgram(launch.chipProgram(), args.output));
    fmt::print("program: {} (run it with 'trnsim run')\n", args.output);
  }
  return {};
}

}  // namespace

void registerKernelCommands(CLI::App& app, int& exitCode) {
  CLI::App* group = app.add_subcommand("kernels", "The reference tile-kernel library");
  group->require_subcommand(1);
  auto listPlugins = std::make_shared<std::vector<std::string>>();
  CLI::App* listCommand = group->add_subcommand("list", "List the reference kernels");
  addPluginOption(listCommand, *listPlugins);
  listCommand->callback([listPlugins, &exitCode] { exitCode = list(*listPlugins); });
  auto args = std::make_shared<CompileArgs>();
  CLI::App* compile = group->add_subcommand(
      "compile", "Compile a kernel at its default or given shapes and dtypes");
  compile->add_option("name", args->name, "kernel name")->required();
  compile->add_option("--shape", args->shapes,
                      "input shape, in input order or as NAME=SHAPE, e.g. --shape x=512x2048");
  compile->add_option("--dtype", args->dtypes,
                      "dtype of every floating-point input (e.g. bf16), or NAME=DTYPE for one");
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
  addPluginOption(compile, args->plugins);
  compile->callback([args, &exitCode] {
    const Status status = compileKernel(*args);
    exitCode = status.ok() ? kExitOk : reportError(status);
  });
  registerKernelBenchCommand(*group, exitCode);
}

}  // namespace trn::tools
