// Where a model's time goes, node by node and layer by layer: the records of a timed run of the
// model kernel grouped by the node each instruction was lowered from (its source line), with each
// node's span on the timeline, its engine and DMA time and its instruction count; then the nodes
// grouped by the layer their names place them in.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "trn/base/units.h"
#include "trn/core/timeline.h"
#include "trn/graph/model.h"
#include "trn/graph/partition.h"

namespace trn::graph {

struct NodeTime {
  std::string node;
  std::string lowering;
  std::int64_t instructions = 0;  ///< executed
  Picoseconds first;              ///< the earliest start of its instructions
  Picoseconds last;               ///< the latest end of its instructions or transfers
  Picoseconds engineBusy;         ///< summed over the compute engines
  Picoseconds dmaBusy;            ///< summed over its transfers
};

/// One entry per node of the model, in graph order, from a run that kept records, timed from the
/// start of the model's first kernel; nodes whose instructions did not run (views) have none. On
/// a logical core of several cores a node's instructions and busy times are its cores' summed.
std::vector<NodeTime> profileNodes(const CompiledModel& model, const ModelRun& run);
/// The same from each launch's per-core statistics with records and start times (`coreRuns` and
/// `starts`: launch p's core c at p × model.lnc + c).
std::vector<NodeTime> profileNodes(const CompiledModel& model,
                                   std::span<const core::RunStats> coreRuns,
                                   std::span<const Picoseconds> starts);

/// The table `trnsim graph run` prints: the `top` nodes with most engine and DMA time.
std::string formatNodeProfile(const std::vector<NodeTime>& nodes, std::size_t top);

/// The nodes of one layer of the model, summed; first/last span its nodes that ran.
struct LayerTime {
  std::string layer;
  std::int64_t nodes = 0;
  std::int64_t instructions = 0;
  Picoseconds first;
  Picoseconds last;
  Picoseconds engineBusy;
  Picoseconds dmaBusy;
};

/// The nodes grouped by layer (partition.h's layerOf), in the order layers first appear.
std::vector<LayerTime> profileLayers(const std::vector<NodeTime>& nodes);

/// The table `trnsim graph run` prints: every layer (at most `limit`, the rest summed in a last
/// row) with its span, engine and DMA time.
std::string formatLayerProfile(const std::vector<LayerTime>& layers, std::size_t limit);

}  // namespace trn::graph
