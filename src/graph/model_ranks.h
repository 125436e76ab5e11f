// Internal to the compiled model (model.h): the helpers model.cpp shares with the tensor-parallel
// run (model_ranks.cpp), which runs a sharded model's parts on its ranks.
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "trn/graph/model.h"

namespace trn::graph::detail {

/// A weight of the graph as the host array the runtime fills its tensor from.
Result<runtime::NpyArray> weightArray(const Tensor& weight);

/// The statistics of runs one after another on one logical core: counts and busy times summed,
/// the total the sum of the totals.
core::RunStats chainStats(std::span<const core::RunStats> runs);

/// Per core of an LNC launch (`lnc` > 1), its statistics over every part (`partCores[p]` holds
/// part p's per core), chained as chainStats does; empty for one core.
std::vector<core::RunStats> coreTotals(std::span<const std::vector<core::RunStats>> partCores,
                                       int lnc);

/// The graph inputs as the device takes them: flattened, int64 ones narrowed to int32; or an
/// error naming an input of the wrong count or shape.
Result<std::map<std::string, runtime::NpyArray>> deviceInputs(
    const CompiledModel& model, std::span<const runtime::NpyArray> inputs);

/// Per value handed between parts (the graph inputs and the parts' results), the last part that
/// reads it (the part count for a graph output): the host drops it after that part.
std::map<std::string, std::size_t> lastReaders(const CompiledModel& model, const Graph& graph);

/// An error unless a graph sharded over graph.ranks ranks can be placed as `placement` says (a
/// system of enough chips, a logical core of each chip per rank).
Status checkRanks(const Graph& sharded, const Placement& placement);

/// Weight `name` of a sharded graph as each rank's host array (one array when every rank holds
/// it whole).
Result<std::vector<runtime::NpyArray>> rankWeightArrays(const Graph& sharded,
                                                        const std::string& name);

/// runModel for a sharded model: each part a system run over the ranks.
Result<ModelRun> runModelOnRanks(const runtime::Session& session, const CompiledModel& model,
                                 std::span<const runtime::NpyArray> inputs,
                                 const runtime::RunOptions& options);

}  // namespace trn::graph::detail
