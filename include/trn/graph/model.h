// A model compiled for a simulated chip, end to end: import, the graph passes (pipeline.h), the
// split into kernels (partition.h: one per layer when layers repeat, each distinct layer compiled
// once), lowering (lowering.h) and the kernel backend, each kernel for one core or for the cores
// of a logical core (LNC=2: each core computes its share of every node); then runs of it on a
// runtime::Session, the kernels launched in order, with the graph's own weights, inputs and
// outputs in its shapes. A graph the shard pass split over tensor-parallel ranks (shard.h) is
// compiled once for every rank's share and runs on a system's chips (Session::runRanks), each
// rank with its share of the weights.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trn/base/status.h"
#include "trn/graph/lowering.h"
#include "trn/graph/partition.h"
#include "trn/graph/pipeline.h"
#include "trn/kernel/compiler.h"
#include "trn/runtime/session.h"

namespace trn::graph {

/// One kernel launch of a compiled model: the nodes `nodes` of the model graph lowered as a tile
/// kernel of their own (partition.h) and the compiled launch (a program per core of the logical
/// core), which the parts that are the same kernel share. Its instructions carry as their line the
/// model node they come from, counted in the part the kernel was compiled for (`compiledFor`): line
/// n is node compiledFor.first + n - 1 there, node nodes.first + (n - 1 - compiledFor.first) here.
struct ModelPart {
  NodeRange nodes;
  NodeRange compiledFor;
  /// The part's subgraph lowered: its inputs are the values it reads from the graph inputs and
  /// earlier parts, then its weights; its outputs the values later parts or the graph read.
  LoweredModel lowered;
  runtime::CompiledLaunch launch;
  std::size_t kernelIndex = 0;  ///< distinct kernels are numbered in order of first use
  std::string name;             ///< its first node's layer ("layers.3", "norm"), or "model"

  /// The program of core 0 (on one core, the only one).
  [[nodiscard]] const kernel::CompiledKernel& kernel() const { return launch.first(); }
  /// Instructions of the launch, every core's counted.
  [[nodiscard]] std::int64_t instructions() const;
};

/// How a model's kernels are placed: the split into kernels, and the cores of the logical core
/// each kernel is launched over (1, or 2 on trn2's default LNC=2).
struct Placement {
  Partition partition = Partition::kAuto;
  int lnc = 1;
  /// The chips a sharded graph's ranks run on, rank r on place r (needed when graph.ranks > 1).
  std::shared_ptr<const fabric::Topology> system = nullptr;
};

struct CompiledModel {
  std::shared_ptr<const Graph> graph;  ///< the model after the passes
  std::vector<ModelPart> parts;        ///< launched in this order
  std::size_t kernels = 0;             ///< distinct compiled kernels
  int lnc = 1;                         ///< cores each kernel is launched over
  /// The graph outputs in order, with the program tensors that hold them.
  std::vector<ModelTensor> outputs;
  /// The weights by value name, as the host arrays their tensors are filled from (flattened;
  /// bf16 widened to float32, which the runtime narrows back exactly; int64 narrowed to int32):
  /// converted once, read by every run.
  std::map<std::string, runtime::NpyArray> weights;
  /// Tensor-parallel ranks (graph->ranks; shard.h), the system they run on and, in place of
  /// `weights`, each weight's share per rank (one array when every rank holds it whole).
  int ranks = 1;
  std::shared_ptr<const fabric::Topology> system;
  std::map<std::string, std::vector<runtime::NpyArray>> rankWeights;

  /// Instructions of the distinct compiled kernels, each counted once.
  [[nodiscard]] std::int64_t compiledInstructions() const;
  /// Instructions launched by one run of the model: every part's kernel.
  [[nodiscard]] std::int64_t launchedInstructions() const;
  /// Each node of the graph, in graph order, and how it was lowered.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> nodeLowerings() const;
};

/// Auto-cast as `trnsim compile`, `graph run` and trnsim.trace take it: `mode` "matmult" computes
/// the kernels' products of fp32 tensors in `type`, "all" runs the auto-cast pass in `type` (bf16;
/// compileModel names any other as an error), "none" neither.
Status applyAutoCast(std::string_view mode, DType type, PipelineOptions& pipeline,
                     kernel::CompileOptions& compile);

/// `partition` and `lnc` as given, and for `tp` > 1 tensor-parallel ranks the chips of `system`
/// (a name or a YAML path; fabric/topology.h) for the session's chip.
Result<Placement> placement(const runtime::Session& session, Partition partition, int lnc, int tp,
                            const std::string& system);

/// Compiles the model at `path` for the session's chip, split into kernels and placed on cores as
/// `placement` says. The pipeline's stopAfter must be empty (every pass runs).
Result<CompiledModel> compileModel(const runtime::Session& session, const std::string& path,
                                   const PipelineOptions& pipeline,
                                   const kernel::CompileOptions& compile = {},
                                   Placement placement = {});

/// Compiles a graph the passes have run on (shapes inferred, constants folded: runPipeline, or a
/// graph built in memory) for the session's chip, with the graph's weights.
Result<CompiledModel> compileGraph(const runtime::Session& session, Graph graph,
                                   const kernel::CompileOptions& compile = {},
                                   Placement placement = {});

/// A run of a compiled model: its parts launched one after another on one logical core, each
/// starting when the one before has finished (as separate kernel launches do).
struct ModelRun {
  /// The whole model: the parts' statistics summed, their times one after another; no records.
  core::RunStats stats;
  /// Each part's run in launch order, timed from its own start; `starts` says when each began.
  /// On one core, the core's statistics with its records when they were kept; on several, the
  /// cores' statistics merged (the longest time, counts summed), whose records are in `cores`.
  std::vector<core::RunStats> parts;
  /// Each part's cores' statistics, with their records, when the model runs on more than one
  /// core (empty on one).
  std::vector<std::vector<core::RunStats>> cores;
  /// Each core's statistics over the whole model, chained as `stats` is (empty on one core).
  std::vector<core::RunStats> coreTotals;
  std::vector<Picoseconds> starts;
  /// Part p's statistics per core, with their records: `cores[p]`, or on one core the part's.
  [[nodiscard]] std::span<const core::RunStats> coresOf(std::size_t p) const;
  /// The graph outputs in order and in their graph shapes (empty in timing-only mode).
  std::vector<runtime::NpyArray> outputs;
  /// Tensor-parallel ranks: the collectives the parts ran, in order. A part's statistics are then
  /// rank 0's, with the time of the slowest rank.
  std::vector<fabric::CollectiveRecord> collectives;
};

/// Runs a compiled model: `inputs` are the graph inputs in order, each in its graph shape
/// (ignored in timing-only mode, where they may be empty); int64 ones (token ids) are narrowed
/// to the device's int32, a value out of its range being an error. The weights come from the
/// graph. Values a part hands to later ones go through the host in their device types. The
/// outputs come back in graph order and shape, floating-point ones as float32. A sharded model's
/// parts run on its ranks (Session::runRanks): each rank given its share of the inputs.
Result<ModelRun> runModel(const runtime::Session& session, const CompiledModel& model,
                          std::span<const runtime::NpyArray> inputs,
                          const runtime::RunOptions& options);

}  // namespace trn::graph
