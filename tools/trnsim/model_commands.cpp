#include "model_commands.h"

#include <fmt/format.h>

#include <array>
#include <filesystem>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "exit_codes.h"
#include "graph_command.h"
#include "run_options.h"
#include "trn/graph/model.h"
#include "trn/graph/model_file.h"
#include "trn/graph/node_profile.h"
#include "trn/graph/printer.h"
#include "trn/profile/chip_summary.h"
#include "trn/profile/report.h"
#include "trn/profile/trace.h"
#include "trn/profile/verdict.h"
#include "trn/runtime/host_io.h"
#include "trn/runtime/npy.h"

namespace trn::tools {
namespace {

struct ModelArgs {
  std::string model;
  std::vector<std::string> dims;
  std::vector<std::string> dumpAfter;
  std::string chip = "trn2";
  std::string output;
  // graph run
  std::string mode = "functional+timing";
  std::vector<std::string> inputs;
  std::string outputDir;
  std::string trace;
  std::string report;
  std::uint64_t seed = 1;
  std::string autoCast = "none";
  DType autoCastType = DType::kBf16;
  std::string partition = "auto";
  int lnc = 1;
  // graph run --tp N: tensor-parallel ranks (shard.h) on a system's chips
  int tp = 1;
  std::string system = "trn2.48xlarge";
  /// graph run: the options given on the command line, of those a compiled .trnx file fixes.
  std::vector<std::string> compileOptionsGiven;
  bool chipGiven = false;
};

/// The options of `graph run` that compiling from ONNX takes and a .trnx file has already fixed.
constexpr std::array<const char*, 8> kCompileOptions = {
    "--dim",       "--dump-after", "--auto-cast", "--auto-cast-type",
    "--partition", "--lnc",        "--tp",        "--system"};

Result<graph::CompiledModel> compile(const ModelArgs& args, const runtime::Session& session) {
  graph::PipelineOptions pipeline;
  TRN_ASSIGN_OR_RETURN(pipeline.shapes.symbols, parseDims(args.dims));
  pipeline.dumpAfter = args.dumpAfter;
  pipeline.dump = [](std::string_view pass, const graph::Graph& g) {
    fmt::print("// after {}\n{}", pass, graph::formatGraph(g));
  };
  kernel::CompileOptions options;
  TRN_RETURN_IF_ERROR(graph::applyAutoCast(args.autoCast, args.autoCastType, pipeline, options));
  TRN_ASSIGN_OR_RETURN(const graph::Partition partition, graph::parsePartition(args.partition));
  pipeline.tensorParallel = args.tp;
  TRN_ASSIGN_OR_RETURN(const graph::Placement placement,
                       graph::placement(session, partition, args.lnc, args.tp, args.system));
  TRN_ASSIGN_OR_RETURN(graph::CompiledModel model,
                       graph::compileModel(session, args.model, pipeline, options, placement));
  std::int64_t sbuf = 0;
  std::int64_t psum = 0;
  for (const graph::ModelPart& part : model.parts) {
    for (const auto& core : part.launch.cores) {
      sbuf = std::max(sbuf, core->summary.sbufPeakBytes);
      psum = std::max(psum, core->summary.psumPeakBytes);
    }
  }
  fmt::print(
      "compiled {} for {}{}: {} nodes, {} instructions, SBUF {} B and PSUM {} B per "
      "partition at most\n",
      args.model, session.chip().name,
      model.lnc > 1
          ? fmt::format(" (a logical core of {} cores, each its share of every node)", model.lnc)
      : model.ranks > 1 ? fmt::format(" ({} tensor-parallel ranks on {}, a chip each; per rank)",
                                      model.ranks, args.system)
                        : std::string(),
      model.graph->nodes.size(), model.launchedInstructions(), sbuf, psum);
  if (model.parts.size() > 1) {
    fmt::print("{} kernels launched in order, {} of them distinct ({} instructions compiled)\n",
               model.parts.size(), model.kernels, model.compiledInstructions());
    for (const graph::ModelPart& part : model.parts) {
      fmt::print("  {:<12} nodes {:>5}-{:<5} kernel {} ({} instructions)\n", part.name,
                 part.nodes.first + 1, part.nodes.first + part.nodes.count, part.kernelIndex,
                 part.instructions());
    }
  }
  return model;
}

/// The collectives of a tensor-parallel run: by operation and size, their count and fabric time
/// (the engine table below is rank 0's).
void printCollectives(const graph::ModelRun& run, int ranks) {
  std::map<std::pair<std::string, std::int64_t>, std::pair<int, std::int64_t>> byKind;
  std::int64_t bytes = 0;
  std::int64_t picoseconds = 0;
  for (const fabric::CollectiveRecord& c : run.collectives) {
    auto& [count, time] = byKind[{std::string(fabric::opName(c.op)), c.bytes}];
    ++count;
    time += c.picoseconds;
    bytes += c.bytes;
    picoseconds += c.picoseconds;
  }
  fmt::print(
      "collectives over {} ranks: {}, {} bytes, {} of fabric time (the tables are rank 0's)\n",
      ranks, run.collectives.size(), bytes, profile::formatDuration(Picoseconds(picoseconds)));
  for (const auto& [kind, figures] : byKind) {
    fmt::print("  {:>4} x {} of {} bytes: {}\n", figures.first, kind.first, kind.second,
               profile::formatDuration(Picoseconds(figures.second)));
  }
}

Status compileCommand(const ModelArgs& args) {
  TRN_ASSIGN_OR_RETURN(const runtime::Session session, runtime::Session::open(args.chip));
  TRN_ASSIGN_OR_RETURN(const graph::CompiledModel model, compile(args, session));
  const auto nodes = model.nodeLowerings();
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    fmt::print("  line {:>4}: {} ({})\n", n + 1, nodes[n].first, nodes[n].second);
  }
  if (args.output.ends_with(".trnx")) {
    TRN_RETURN_IF_ERROR(graph::saveModel(model, session.chip().name, args.output));
    fmt::print(
        "model: {} ({} launches of {} kernels, the weights; run it with 'trnsim graph run "
        "{}')\n",
        args.output, model.parts.size(), model.kernels, args.output);
  } else if (!args.output.empty()) {
    if (model.parts.size() > 1) {
      return invalidArgument(
          fmt::format("-o saves one program, and {} compiles to {} kernels launched in order; give "
                      "--partition one to compile it as one, or save the model as FILE.trnx",
                      args.model, model.parts.size()));
    }
    TRN_RETURN_IF_ERROR(
        runtime::saveChipProgram(model.parts.front().launch.chipProgram(), args.output));
    fmt::print(
        "program: {} (its inputs are the graph inputs, then the weights; 'trnsim graph "
        "run' binds the weights from the model)\n",
        args.output);
  }
  return Status();
}

/// A model to run: compiled from ONNX, or read from a .trnx file (on the chip it was compiled
/// for; the compile options then have nothing to do and are refused).
struct Prepared {
  runtime::Session session;
  graph::CompiledModel model;
};

Result<Prepared> prepare(const ModelArgs& args) {
  if (!args.model.ends_with(".trnx")) {
    TRN_ASSIGN_OR_RETURN(runtime::Session session, runtime::Session::open(args.chip));
    TRN_ASSIGN_OR_RETURN(graph::CompiledModel model, compile(args, session));
    return Prepared{std::move(session), std::move(model)};
  }
  if (!args.compileOptionsGiven.empty()) {
    return invalidArgument(fmt::format("{} is compiled: {} applies when compiling from ONNX",
                                       args.model, fmt::join(args.compileOptionsGiven, ", ")));
  }
  TRN_ASSIGN_OR_RETURN(graph::LoadedModel loaded, graph::loadModel(args.model));
  if (args.chipGiven && args.chip != loaded.chip) {
    return invalidArgument(
        fmt::format("{} is compiled for {}, not {}", args.model, loaded.chip, args.chip));
  }
  TRN_ASSIGN_OR_RETURN(runtime::Session session, runtime::Session::open(loaded.chip));
  fmt::print("loaded {} for {}: {} launches of {} kernels, {} instructions\n", args.model,
             loaded.chip, loaded.model.parts.size(), loaded.model.kernels,
             loaded.model.launchedInstructions());
  return Prepared{std::move(session), std::move(loaded.model)};
}

Status runCommand(const ModelArgs& args) {
  TRN_ASSIGN_OR_RETURN(const core::RunMode mode, core::parseRunMode(args.mode));
  TRN_ASSIGN_OR_RETURN(const Prepared prepared, prepare(args));
  const runtime::Session& session = prepared.session;
  const graph::CompiledModel& model = prepared.model;
  const graph::Graph& g = *model.graph;
  std::vector<runtime::NpyArray> inputs;
  if (core::hasData(mode)) {
    for (const std::string& name : g.inputs) {
      std::string path;
      for (const std::string& binding : args.inputs) {
        if (binding.starts_with(name + "=")) {
          path = binding.substr(name.size() + 1);
        }
      }
      if (path.empty()) {
        return invalidArgument(
            fmt::format("no array for model input '{}': give --input {}=FILE.npy", name, name));
      }
      TRN_ASSIGN_OR_RETURN(runtime::NpyArray array, runtime::readNpy(path));
      inputs.push_back(std::move(array));
    }
  }
  runtime::RunOptions options;
  options.mode = mode;
  options.seed = args.seed;
  options.record = core::hasTiming(mode);
  TRN_ASSIGN_OR_RETURN(const graph::ModelRun result,
                       graph::runModel(session, model, inputs, options));
  if (core::hasTiming(mode)) {
    const profile::Report report = profile::makeReport(result.stats, session.chip());
    fmt::print("simulated time {}\n", profile::formatDuration(report.total));
    // The verdict follows the critical path of the kernel that took longest (with several, the
    // layers are usually the same kernel).
    std::size_t longest = 0;
    for (std::size_t p = 1; p < result.parts.size(); ++p) {
      longest = result.parts[p].total > result.parts[longest].total ? p : longest;
    }
    std::vector<const isa::Program*> programs;
    for (const auto& core : model.parts[longest].launch.cores) {
      programs.push_back(&core->program);
    }
    TRN_ASSIGN_OR_RETURN(
        const profile::Verdict verdict,
        profile::explainSlowestCore(programs, result.coresOf(longest), session.chip()));
    if (model.parts.size() > 1) {
      fmt::print("the longest kernel, {} ({} of the {} kernels' {}):\n", model.parts[longest].name,
                 profile::formatDuration(result.parts[longest].total), model.parts.size(),
                 profile::formatDuration(result.stats.total));
    }
    fmt::print("{}\n", profile::formatVerdict(verdict));
    if (model.ranks > 1) {
      printCollectives(result, model.ranks);
    }
    std::fputs(profile::formatReport(report).c_str(), stdout);
    const std::vector<graph::NodeTime> nodes = graph::profileNodes(model, result);
    fmt::print("\nthe nodes with most engine and DMA time (line n of {} is node n):\n{}",
               args.model, graph::formatNodeProfile(nodes, 12));
    fmt::print("\nby layer:\n{}", graph::formatLayerProfile(graph::profileLayers(nodes), 40));
    if (model.lnc > 1) {
      std::vector<int> physical(result.coreTotals.size());
      std::iota(physical.begin(), physical.end(), 0);
      std::fputs(("\n" + profile::formatChipSummary(
                             profile::makeChipSummary(result.coreTotals, physical, session.chip())))
                     .c_str(),
                 stdout);
    }
    // Each launch's cores: a trace process and a report lane per core.
    std::vector<profile::TraceSegment> segments;
    std::vector<profile::PageRun> runs;
    for (std::size_t p = 0; p < model.parts.size(); ++p) {
      const std::span<const core::RunStats> cores = result.coresOf(p);
      for (std::size_t c = 0; c < cores.size(); ++c) {
        const isa::Program* program = &model.parts[p].launch.cores[c]->program;
        const std::string name = cores.size() == 1
                                     ? model.parts[p].name
                                     : fmt::format("{} core {}", model.parts[p].name, c);
        segments.push_back(
            {name, program, &cores[c], cores.size() == 1 ? -1 : static_cast<int>(p)});
        runs.push_back({name, fmt::format("core {}", c), program, &cores[c], result.starts[p]});
      }
    }
    if (!args.trace.empty()) {
      TRN_RETURN_IF_ERROR(
          segments.size() == 1
              ? profile::writeTraceFile(args.trace, *segments[0].program, *segments[0].stats)
              : profile::writeSequenceTraceFile(args.trace, segments));
      fmt::print("trace: {}\n", args.trace);
    }
    if (!args.report.empty()) {
      TRN_RETURN_IF_ERROR(writeReport(args.report, runs, session.chip(),
                                      fmt::format("trnsim graph run {}", args.model)));
    }
  }
  if (!args.outputDir.empty() && !result.outputs.empty()) {
    std::error_code made;
    std::filesystem::create_directories(args.outputDir, made);
    if (made) {
      return ioError(fmt::format("--output-dir {}: {}", args.outputDir, made.message()));
    }
  }
  for (std::size_t i = 0; i < result.outputs.size(); ++i) {
    const std::string& name = g.outputs[i];
    const runtime::NpyArray& out = result.outputs[i];
    fmt::print("output {} [{}]\n", name, fmt::join(out.shape, ", "));
    if (!args.outputDir.empty()) {
      const std::string path = fmt::format("{}/{}.npy", args.outputDir, model.outputs[i].spec.name);
      TRN_RETURN_IF_ERROR(runtime::writeNpy(path, out));
      fmt::print("  written to {}\n", path);
    }
  }
  return Status();
}

void addCommonOptions(CLI::App* cmd, ModelArgs& args) {
  cmd->add_option("model", args.model, "the .onnx file")->required();
  cmd->add_option("--dim", args.dims, "the size of a symbolic input dimension, NAME=N; repeatable");
  cmd->add_option("--chip", args.chip, "chip name or YAML path")->capture_default_str();
  cmd->add_option("--dump-after", args.dumpAfter,
                  fmt::format("print the graph after this pass ({}); repeatable",
                              fmt::join(graph::passNames(), ", ")));
  cmd->add_option(
         "--auto-cast", args.autoCast,
         "matmult: matrix products of fp32 tensors in the --auto-cast-type with fp32 "
         "accumulation (neuronx-cc's default); all: every fp32 computation in that type; none: as "
         "the model is written")
      ->check(CLI::IsMember({"none", "matmult", "all"}))
      ->capture_default_str();
  addAutoCastTypeOption(cmd, args.autoCastType);
  cmd->add_option("--partition", args.partition,
                  "kernels to compile the model as: auto (one per layer when layers repeat, each "
                  "distinct layer compiled once), one, or per-layer")
      ->check(CLI::IsMember({"auto", "one", "per-layer"}))
      ->capture_default_str();
  cmd->add_option("--lnc", args.lnc,
                  "cores of the logical core each kernel is launched over: 1, or 2 (trn2's "
                  "default LNC=2; each core computes its share of every node)")
      ->capture_default_str();
}

}  // namespace

void registerModelCommands(CLI::App& app, CLI::App& graphCommand, int& exitCode) {
  auto compileArgs = std::make_shared<ModelArgs>();
  CLI::App* compileCmd = app.add_subcommand(
      "compile", "Compile an ONNX model onto a logical core of a simulated chip");
  addCommonOptions(compileCmd, *compileArgs);
  compileCmd->add_option("-o,--output", compileArgs->output,
                         "save the model: FILE.trnx (every kernel, the launch order and the "
                         "weights; 'graph run FILE.trnx' runs it), or the Program of a model "
                         "compiled as one kernel (binary format)");
  compileCmd->callback([compileArgs, &exitCode] {
    if (const Status s = compileCommand(*compileArgs); !s.ok()) {
      exitCode = reportError(s);
    }
  });

  auto runArgs = std::make_shared<ModelArgs>();
  CLI::App* runCmd = graphCommand.add_subcommand(
      "run", "Compile an ONNX model and run it on a simulated chip with its own weights");
  addCommonOptions(runCmd, *runArgs);
  runCmd->add_option("--mode", runArgs->mode, "functional+timing, timing-only or functional-only")
      ->capture_default_str();
  runCmd->add_option("--input", runArgs->inputs, "a model input, NAME=FILE.npy; repeatable");
  runCmd->add_option("--output-dir", runArgs->outputDir, "write each output as DIR/NAME.npy");
  runCmd->add_option("--trace", runArgs->trace, "write a Perfetto trace of the run");
  runCmd
      ->add_option("--tp", runArgs->tp,
                   "tensor-parallel ranks: the model sharded over this many chips of --system "
                   "(Megatron's rules, the collectives inserted; docs/compiler.md)")
      ->capture_default_str();
  runCmd->add_option("--system", runArgs->system, "the system --tp runs on: name or YAML path")
      ->capture_default_str();
  addReportOption(runCmd, runArgs->report);
  addSeedOption(runCmd, runArgs->seed, "seed of stochastic rounding");
  runCmd->callback([runArgs, runCmd, &exitCode] {
    for (const char* option : kCompileOptions) {
      if (runCmd->count(option) > 0) {
        runArgs->compileOptionsGiven.emplace_back(option);
      }
    }
    runArgs->chipGiven = runCmd->count("--chip") > 0;
    if (const Status s = runCommand(*runArgs); !s.ok()) {
      exitCode = reportError(s);
    }
  });
}

}  // namespace trn::tools
