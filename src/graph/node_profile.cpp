#include "trn/graph/node_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>

namespace trn::graph {

namespace {

/// The records of one core's run of `part`, which began at `start`, added to their nodes.
void addCoreRun(const ModelPart& part, const isa::Program& program, const core::RunStats& stats,
                Picoseconds start, std::vector<NodeTime>& nodes) {
  // Instructions carry their node as its line in the part the kernel was compiled for (model.h);
  // the backend's own instructions (semaphore hand-offs it adds) carry the line of the node they
  // serve.
  auto nodeOf = [&](const core::InstructionRecord& r) -> NodeTime* {
    const std::int64_t line = program.stream(r.engine).locationLine(r.index);
    const std::int64_t inPart = line - 1 - static_cast<std::int64_t>(part.compiledFor.first);
    return inPart >= 0 && inPart < static_cast<std::int64_t>(part.nodes.count)
               ? &nodes[part.nodes.first + static_cast<std::size_t>(inPart)]
               : nullptr;
  };
  for (const core::InstructionRecord& r : stats.records) {
    if (NodeTime* node = nodeOf(r)) {
      ++node->instructions;
      node->first = std::min(node->first, start + r.start);
      node->last = std::max(node->last, start + r.end);
      node->engineBusy += r.end - r.start;
    }
  }
  for (const core::TransferRecord& t : stats.transfers) {
    if (NodeTime* node = nodeOf(stats.records[t.instruction])) {
      node->last = std::max(node->last, start + t.end);
      node->dmaBusy += t.end - t.start;
    }
  }
}

std::vector<NodeTime> emptyProfile(const CompiledModel& model) {
  std::vector<NodeTime> nodes;
  for (const auto& [name, lowering] : model.nodeLowerings()) {
    NodeTime node;
    node.node = name;
    node.lowering = lowering;
    node.first = Picoseconds(std::numeric_limits<std::int64_t>::max());
    nodes.push_back(std::move(node));
  }
  return nodes;
}

void finishProfile(std::vector<NodeTime>& nodes) {
  for (NodeTime& node : nodes) {
    if (node.instructions == 0) {
      node.first = Picoseconds(0);
    }
  }
}

}  // namespace

std::vector<NodeTime> profileNodes(const CompiledModel& model, const ModelRun& run) {
  std::vector<NodeTime> nodes = emptyProfile(model);
  for (std::size_t p = 0; p < run.parts.size() && p < model.parts.size(); ++p) {
    const ModelPart& part = model.parts[p];
    const std::span<const core::RunStats> cores = run.coresOf(p);
    for (std::size_t c = 0; c < cores.size() && c < part.launch.cores.size(); ++c) {
      addCoreRun(part, part.launch.cores[c]->program, cores[c], run.starts[p], nodes);
    }
  }
  finishProfile(nodes);
  return nodes;
}

std::vector<NodeTime> profileNodes(const CompiledModel& model,
                                   std::span<const core::RunStats> coreRuns,
                                   std::span<const Picoseconds> starts) {
  std::vector<NodeTime> nodes = emptyProfile(model);
  const auto lnc = static_cast<std::size_t>(model.lnc);
  for (std::size_t i = 0; i < coreRuns.size() && i < starts.size(); ++i) {
    if (i / lnc < model.parts.size()) {
      const ModelPart& part = model.parts[i / lnc];
      addCoreRun(part, part.launch.cores[i % lnc]->program, coreRuns[i], starts[i], nodes);
    }
  }
  finishProfile(nodes);
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

std::vector<LayerTime> profileLayers(const std::vector<NodeTime>& nodes) {
  std::vector<LayerTime> layers;
  std::map<std::string, std::size_t> index;
  for (const NodeTime& node : nodes) {
    const std::string layer = layerOf(node.node);
    auto [it, added] = index.emplace(layer, layers.size());
    if (added) {
      LayerTime l;
      l.layer = layer;
      l.first = Picoseconds(std::numeric_limits<std::int64_t>::max());
      layers.push_back(std::move(l));
    }
    LayerTime& l = layers[it->second];
    ++l.nodes;
    l.instructions += node.instructions;
    if (node.instructions > 0) {
      l.first = std::min(l.first, node.first);
      l.last = std::max(l.last, node.last);
    }
    l.engineBusy += node.engineBusy;
    l.dmaBusy += node.dmaBusy;
  }
  for (LayerTime& l : layers) {
    if (l.instructions == 0) {
      l.first = Picoseconds(0);
    }
  }
  return layers;
}

std::string formatLayerProfile(const std::vector<LayerTime>& layers, std::size_t limit) {
  auto us = [](Picoseconds t) { return static_cast<double>(t.count()) * 1e-6; };
  std::string out = fmt::format("{:<24} {:>6} {:>8} {:>11} {:>11} {:>11} {:>11}\n", "layer",
                                "nodes", "instrs", "from us", "to us", "engines us", "DMA us");
  auto row = [&](const LayerTime& l) {
    out += fmt::format("{:<24} {:>6} {:>8} {:>11.3f} {:>11.3f} {:>11.3f} {:>11.3f}\n",
                       l.layer.substr(0, 24), l.nodes, l.instructions, us(l.first), us(l.last),
                       us(l.engineBusy), us(l.dmaBusy));
  };
  for (std::size_t i = 0; i < layers.size() && i < limit; ++i) {
    row(layers[i]);
  }
  if (layers.size() > limit) {
    LayerTime rest;
    rest.layer = fmt::format("({} more)", layers.size() - limit);
    rest.first = Picoseconds(std::numeric_limits<std::int64_t>::max());
    for (std::size_t i = limit; i < layers.size(); ++i) {
      rest.nodes += layers[i].nodes;
      rest.instructions += layers[i].instructions;
      rest.first = std::min(rest.first, layers[i].first);
      rest.last = std::max(rest.last, layers[i].last);
      rest.engineBusy += layers[i].engineBusy;
      rest.dmaBusy += layers[i].dmaBusy;
    }
    row(rest);
  }
  return out;
}

}  // namespace trn::graph
