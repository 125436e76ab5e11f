#include "demo_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "trn/graph/model.h"
#include "trn/profile/report.h"
#include "trn/profile/verdict.h"
#include "trn/runtime/npy.h"

namespace trn::tools {

Status runDemoModel(const runtime::Session& session, core::RunMode mode, bool& pass) {
  const std::string dir = TRN_DEMO_MODEL_DIR;
  const std::string model = dir + "/torch_block.onnx";
  fmt::print("\na PyTorch model through the graph compiler: {}\n", model);
  if (!std::filesystem::exists(model)) {
    fmt::print("  not found (the model ships with the source tree)\n");
    return Status();
  }
  graph::PipelineOptions pipeline;
  pipeline.shapes.symbols = {{"batch", 2}};
  TRN_ASSIGN_OR_RETURN(
      const graph::CompiledModel compiled,
      graph::compileModel(session, model, pipeline, {}, {.partition = graph::Partition::kOne}));
  const graph::ModelPart& kernel = compiled.parts.front();
  TRN_ASSIGN_OR_RETURN(const runtime::NpyArray x, runtime::readNpy(dir + "/torch_block.x.npy"));
  TRN_ASSIGN_OR_RETURN(const runtime::NpyArray y, runtime::readNpy(dir + "/torch_block.y.npy"));
  runtime::RunOptions options;
  options.mode = mode;
  options.record = core::hasTiming(mode);
  TRN_ASSIGN_OR_RETURN(const graph::ModelRun run,
                       graph::runModel(session, compiled, {&x, 1}, options));
  fmt::print(
      "  pre-norm transformer block (LayerNorm, 4-head attention, GELU MLP), fp32, "
      "x [2, 8, 16]: {} nodes after folding, {} instructions\n",
      compiled.graph->nodes.size(), kernel.instructions());
  if (core::hasData(mode)) {
    const std::vector<float> got = runtime::floatValues(run.outputs.at(0));
    const std::vector<float> want = runtime::floatValues(y);
    double worst = 0;
    for (std::size_t i = 0; i < got.size() && i < want.size(); ++i) {
      worst = std::max(worst, std::abs(static_cast<double>(got[i]) - want[i]));
    }
    // fp32 throughout; the bound is the one tests/graph/model_test.cpp holds it to.
    const bool ok = got.size() == want.size() && worst < 1e-5;
    pass = pass && ok;
    fmt::print("  against PyTorch's output: {} (max err {:.2g})\n", ok ? "PASS" : "FAIL", worst);
  }
  if (core::hasTiming(mode)) {
    const profile::Report report = profile::makeReport(run.stats, session.chip());
    TRN_ASSIGN_OR_RETURN(
        const profile::Verdict verdict,
        profile::explainRun(kernel.kernel().program, run.parts.front(), session.chip()));
    fmt::print("  simulated time {}, {}\n", profile::formatDuration(report.total),
               profile::verdictLabel(verdict));
  }
  // The same model on an LNC=2 pair (when the chip has one): each node split over the two cores.
  const std::vector<std::int64_t>& sizes = session.chip().chip.logicalCores.sizes;
  if (std::find(sizes.begin(), sizes.end(), 2) != sizes.end()) {
    TRN_ASSIGN_OR_RETURN(const graph::CompiledModel pair,
                         graph::compileModel(session, model, pipeline, {},
                                             {.partition = graph::Partition::kOne, .lnc = 2}));
    TRN_ASSIGN_OR_RETURN(const graph::ModelRun two,
                         graph::runModel(session, pair, {&x, 1}, options));
    std::string line = "  on an LNC=2 pair (each node split over the two cores):";
    if (core::hasTiming(mode)) {
      line += fmt::format(" simulated time {}", profile::formatDuration(two.stats.total));
    }
    if (core::hasData(mode)) {
      const bool same = two.outputs.at(0).data == run.outputs.at(0).data;
      pass = pass && same;
      line += fmt::format("{} outputs bit-identical to one core: {}",
                          core::hasTiming(mode) ? "," : "", same ? "PASS" : "FAIL");
    }
    fmt::print("{}\n", line);
  }
  fmt::print("  more: 'trnsim graph run {} --dim batch=2 --input x=...' (docs/compiler.md)\n",
             model);
  return Status();
}

}  // namespace trn::tools
