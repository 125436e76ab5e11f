// Where a model's time goes, node by node: the records of a timed run of the model kernel
// grouped by the node each instruction was lowered from (its source line), with each node's
// span on the timeline, its engine and DMA time and its instruction count.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trn/base/units.h"
#include "trn/core/timeline.h"
#include "trn/graph/model.h"

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

/// One entry per node of the model, in graph order, from a run that kept records; nodes whose
/// instructions did not run (views) have no instructions.
std::vector<NodeTime> profileNodes(const CompiledModel& model, const core::RunStats& stats);

/// The table `trnsim graph run` prints: the `top` nodes with most engine and DMA time.
std::string formatNodeProfile(const std::vector<NodeTime>& nodes, std::size_t top);

}  // namespace trn::graph
