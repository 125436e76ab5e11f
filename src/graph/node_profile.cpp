#include "trn/graph/node_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>

namespace trn::graph {

std::vector<NodeTime> profileNodes(const CompiledModel& model, const core::RunStats& stats) {
  const LoweredModel& lowered = model.lowered;
  std::vector<NodeTime> nodes(lowered.nodeNames.size());
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    nodes[n].node = lowered.nodeNames[n];
    nodes[n].lowering = lowered.nodeLowerings[n];
    nodes[n].first = Picoseconds(std::numeric_limits<std::int64_t>::max());
  }
  const isa::Program& program = model.kernel->program;
  // Instructions carry their node as line n (lowering.h); the backend's own instructions
  // (semaphore hand-offs it adds) carry the line of the node they serve.
  auto nodeOf = [&](const core::InstructionRecord& r) -> NodeTime* {
    const std::int32_t line = program.stream(r.engine).locationLine(r.index);
    return line >= 1 && static_cast<std::size_t>(line) <= nodes.size()
               ? &nodes[static_cast<std::size_t>(line - 1)]
               : nullptr;
  };
  for (const core::InstructionRecord& r : stats.records) {
    if (NodeTime* node = nodeOf(r)) {
      ++node->instructions;
      node->first = std::min(node->first, r.start);
      node->last = std::max(node->last, r.end);
      node->engineBusy += r.end - r.start;
    }
  }
  for (const core::TransferRecord& t : stats.transfers) {
    if (NodeTime* node = nodeOf(stats.records[t.instruction])) {
      node->last = std::max(node->last, t.end);
      node->dmaBusy += t.end - t.start;
    }
  }
  for (NodeTime& node : nodes) {
    if (node.instructions == 0) {
      node.first = Picoseconds(0);
    }
  }
  return nodes;
}

std::string formatNodeProfile(const std::vector<NodeTime>& nodes, std::size_t top) {
  std::vector<std::size_t> order(nodes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return nodes[a].engineBusy + nodes[a].dmaBusy > nodes[b].engineBusy + nodes[b].dmaBusy;
  });
  auto us = [](Picoseconds t) { return static_cast<double>(t.count()) * 1e-6; };
  std::string out =
      fmt::format("{:>5}  {:<32} {:>7} {:>11} {:>11} {:>11} {:>11}  {}\n", "line", "node", "instrs",
                  "from us", "to us", "engines us", "DMA us", "lowered as");
  for (std::size_t i = 0; i < order.size() && i < top; ++i) {
    const NodeTime& n = nodes[order[i]];
    if (n.instructions == 0) {
      break;
    }
    out += fmt::format("{:>5}  {:<32} {:>7} {:>11.3f} {:>11.3f} {:>11.3f} {:>11.3f}  {}\n",
                       order[i] + 1, n.node.substr(0, 32), n.instructions, us(n.first), us(n.last),
                       us(n.engineBusy), us(n.dmaBusy), n.lowering);
  }
  return out;
}

}  // namespace trn::graph
