#include "graph_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "exit_codes.h"
#include "model_commands.h"
#include "trn/graph/pipeline.h"
#include "trn/graph/printer.h"

namespace trn::tools {
namespace {

struct ShowArgs {
  std::string model;
  std::vector<std::string> dumpAfter;
  std::vector<std::string> dims;
  int tp = 1;
};

int show(const ShowArgs& args) {
  graph::PipelineOptions options;
  Result<std::map<std::string, std::int64_t>> dims = parseDims(args.dims);
  if (!dims.ok()) {
    return reportError(dims.status());
  }
  options.shapes.symbols = *dims;
  options.dumpAfter = args.dumpAfter;
  options.tensorParallel = args.tp;
  const bool dumping = !args.dumpAfter.empty();
  if (dumping) {
    // Stop after the last pass asked for, so a model a later pass rejects can still be shown.
    const std::vector<std::string>& passes = graph::passNames();
    std::size_t last = 0;
    for (const std::string& pass : args.dumpAfter) {
      auto it = std::find(passes.begin(), passes.end(), pass);
      if (it != passes.end()) {
        last = std::max(last, static_cast<std::size_t>(it - passes.begin()));
      }
    }
    options.stopAfter = passes[last];
    options.dump = [](std::string_view pass, const graph::Graph& g) {
      fmt::print("// after {}\n{}", pass, graph::formatGraph(g));
    };
  }
  Result<graph::Graph> result = graph::runPipeline(args.model, options);
  if (!result.ok()) {
    return reportError(result.status());
  }
  if (!dumping) {
    fmt::print("{}", graph::formatGraph(*result));
  }
  return 0;
}

}  // namespace

Result<std::map<std::string, std::int64_t>> parseDims(const std::vector<std::string>& dims) {
  std::map<std::string, std::int64_t> out;
  for (const std::string& d : dims) {
    const std::size_t eq = d.find('=');
    std::int64_t size = 0;
    const char* end = d.data() + d.size();
    if (eq == std::string::npos || eq == 0 ||
        std::from_chars(d.data() + eq + 1, end, size).ptr != end || size < 0) {
      return invalidArgument(fmt::format("--dim '{}' is not NAME=N with N >= 0", d));
    }
    out[d.substr(0, eq)] = size;
  }
  return out;
}

void registerGraphCommands(CLI::App& app, int& exitCode) {
  CLI::App* graphCommand =
      app.add_subcommand("graph", "The graph compiler's front end: ONNX models as a graph IR");
  graphCommand->require_subcommand(1);
  auto args = std::make_shared<ShowArgs>();
  CLI::App* showCommand = graphCommand->add_subcommand(
      "show", "Import an ONNX model, infer its shapes and print the graph");
  showCommand->add_option("model", args->model, "the .onnx file")->required();
  showCommand->add_option("--dump-after", args->dumpAfter,
                          fmt::format("print the graph after this pass ({}) and stop there; "
                                      "repeatable",
                                      fmt::join(graph::passNames(), ", ")));
  showCommand->add_option("--dim", args->dims,
                          "the size of a symbolic input dimension, NAME=N; repeatable");
  showCommand
      ->add_option("--tp", args->tp,
                   "shard over this many tensor-parallel ranks (the shard pass; each value's "
                   "layout printed)")
      ->capture_default_str();
  showCommand->callback([args, &exitCode] { exitCode = show(*args); });
  registerModelCommands(app, *graphCommand, exitCode);
}

}  // namespace trn::tools
