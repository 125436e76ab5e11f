// A sharded model's runs (shard.h): each part a system run (Session::runRanks) of the part's
// kernel on every rank (a logical core of its own chip: at LNC=2 the launch's two programs), each
// rank given its share of the inputs and weights; the values parts hand on stay per rank on the
// host.
#include "model_ranks.h"

#include <fmt/format.h>

#include <algorithm>

#include "trn/base/check.h"
#include "trn/graph/shard.h"

namespace trn::graph::detail {
namespace {

/// Rank `rank`'s share of a flat host array of the graph value `name`.
runtime::NpyArray shareOf(const Graph& graph, const std::string& name,
                          const runtime::NpyArray& whole, int rank) {
  const RankLayout layout = graph.layoutOf(name);
  runtime::NpyArray share;
  share.type = whole.type;
  share.data = rankShare(whole.data, graph.value(name)->shape->sizes(),
                         runtime::npyItemSize(whole.type), layout, rank, graph.ranks);
  share.shape = {std::max<std::int64_t>(
      static_cast<std::int64_t>(share.data.size() / runtime::npyItemSize(whole.type)), 1)};
  return share;
}

}  // namespace

Status checkRanks(const Graph& sharded, const Placement& placement) {
  if (placement.system == nullptr) {
    return invalidArgument(fmt::format(
        "{}: a model sharded over {} ranks runs on a system's chips: give one (--system)",
        sharded.source, sharded.ranks));
  }
  if (placement.system->chips() < sharded.ranks) {
    return invalidArgument(
        fmt::format("{}: {} tensor-parallel ranks, but the system has {} chips (a rank per chip)",
                    sharded.source, sharded.ranks, placement.system->chips()));
  }
  return Status();
}

Result<std::vector<runtime::NpyArray>> rankWeightArrays(const Graph& sharded,
                                                        const std::string& name) {
  const Tensor& whole = *sharded.initializer(name);
  const RankLayout layout = sharded.layoutOf(name);
  std::vector<runtime::NpyArray> arrays;
  const int ranks = layout.kind == RankLayout::Kind::kReplicated ? 1 : sharded.ranks;
  for (int r = 0; r < ranks; ++r) {
    TRN_ASSIGN_OR_RETURN(arrays.emplace_back(),
                         weightArray(rankTensor(whole, layout, r, sharded.ranks)));
  }
  return arrays;
}

Result<ModelRun> runModelOnRanks(const runtime::Session& session, const CompiledModel& model,
                                 std::span<const runtime::NpyArray> inputs,
                                 const runtime::RunOptions& options) {
  const Graph& graph = *model.graph;
  const auto ranks = static_cast<std::size_t>(model.ranks);
  const bool data = core::hasData(options.mode);
  // Per rank, the values on the host between parts: its shares of the graph inputs, then the
  // parts' results, each dropped after the last part that reads it.
  std::vector<std::map<std::string, runtime::NpyArray>> values(ranks);
  if (data) {
    TRN_ASSIGN_OR_RETURN(auto whole, deviceInputs(model, inputs));
    for (const auto& [name, array] : whole) {
      for (std::size_t r = 0; r < ranks; ++r) {
        values[r].emplace(name, shareOf(graph, name, array, static_cast<int>(r)));
      }
    }
  }
  const std::map<std::string, std::size_t> lastReader = lastReaders(model, graph);
  ModelRun run;
  Picoseconds start(0);
  for (std::size_t p = 0; p < model.parts.size(); ++p) {
    const ModelPart& part = model.parts[p];
    const auto& compiled = part.launch.cores.front();
    std::vector<runtime::RankProgram> programs(ranks);
    for (std::size_t r = 0; r < ranks; ++r) {
      programs[r].program = std::shared_ptr<const isa::Program>(compiled, &compiled->program);
      for (std::size_t c = 1; c < part.launch.cores.size(); ++c) {
        const auto& other = part.launch.cores[c];
        programs[r].otherCores.emplace_back(other, &other->program);
      }
      if (!data) {
        continue;
      }
      // The kernel may be the one compiled for another part (a repeated layer): its tensors are
      // bound by position, as runLaunch does.
      for (std::size_t i = 0; i < part.lowered.inputs.size(); ++i) {
        const ModelTensor& t = part.lowered.inputs[i];
        auto weight = model.rankWeights.find(t.value);
        const runtime::NpyArray* array = nullptr;
        if (weight != model.rankWeights.end()) {
          array = &weight->second[std::min(r, weight->second.size() - 1)];
        } else {
          auto value = values[r].find(t.value);
          TRN_CHECK(value != values[r].end())
              << part.name << " reads '" << t.value << "', which no earlier part kept";
          array = &value->second;
        }
        programs[r].inputs.push_back(
            {compiled->inputs.at(i).name, array, fmt::format("input '{}'", t.value)});
      }
      for (const kernel::TensorSpec& out : compiled->outputs) {
        programs[r].outputs.push_back(
            {out.name, isFloat(out.dtype) ? std::optional(DType::kFp32) : std::nullopt});
      }
    }
    Result<runtime::RanksResult> ran = session.runRanks(*model.system, programs, options);
    if (!ran.ok()) {
      return ran.status().withContext(
          fmt::format("{} (nodes {}-{} of {}, on {} ranks)", part.name, part.nodes.first + 1,
                      part.nodes.first + part.nodes.count, graph.source, ranks));
    }
    for (std::size_t r = 0; r < ranks; ++r) {
      std::vector<runtime::NpyArray>& outs = ran->ranks[r].outputs;
      for (std::size_t i = 0; i < outs.size(); ++i) {
        values[r][part.lowered.outputs.at(i).value] = std::move(outs[i]);
      }
      std::erase_if(values[r], [&](const auto& entry) {
        auto reader = lastReader.find(entry.first);
        return reader == lastReader.end() || reader->second <= p;
      });
    }
    core::RunStats stats = std::move(ran->ranks.front().stats);
    stats.total = ran->stats.total;  // the slowest rank's
    run.starts.push_back(start);
    start += stats.total;
    run.parts.push_back(std::move(stats));
    if (model.lnc > 1) {
      run.cores.push_back(std::move(ran->ranks.front().cores));
    }
    run.collectives.insert(run.collectives.end(), ran->collectives.begin(), ran->collectives.end());
  }
  run.stats = chainStats(run.parts);
  run.coreTotals = coreTotals(run.cores, model.lnc);
  if (data) {
    // The graph outputs are replicated (the shard pass gathers them): rank 0's are the model's.
    for (const std::string& out : graph.outputs) {
      runtime::NpyArray& array = values.front().at(out);
      array.shape = graph.value(out)->shape->sizes();
      run.outputs.push_back(std::move(array));
    }
  }
  return run;
}

}  // namespace trn::graph::detail
