#include "fusion.h"

#include <algorithm>

namespace trn::graph::detail {

FusionPlan planElementwiseFusion(const Graph& graph) {
  const std::size_t n = graph.nodes.size();
  FusionPlan plan;
  plan.computedBy.resize(n);
  std::map<std::string, std::size_t> producer;
  std::map<std::string, int> readers;
  for (std::size_t i = 0; i < n; ++i) {
    plan.computedBy[i] = i;
    for (const std::string& out : graph.nodes[i].outputs) {
      producer[out] = i;
    }
    for (const std::string& in : graph.nodes[i].inputs) {
      ++readers[in];
    }
  }
  for (const std::string& out : graph.outputs) {
    ++readers[out];  // an output is read after the graph
  }
  auto sizesOf = [&](const std::string& value) {
    const Value* v = graph.value(value);
    return v != nullptr && v->shape ? v->shape->sizes() : std::vector<std::int64_t>{-1};
  };
  std::map<std::size_t, std::vector<std::size_t>> members;  // by the group's current last node
  for (std::size_t i = 0; i < n; ++i) {
    const Node& node = graph.nodes[i];
    if (!isFusibleElementwise(node.opType) || node.outputs.size() != 1) {
      continue;
    }
    std::vector<std::size_t> group = {i};
    for (const std::string& in : node.inputs) {
      auto from = producer.find(in);
      if (from == producer.end() || readers[in] != 1 || sizesOf(in) != sizesOf(node.outputs[0])) {
        continue;
      }
      // A fusible producer heads a group of its own until its only reader takes it over.
      auto earlier = members.find(from->second);
      if (earlier != members.end()) {
        group.insert(group.end(), earlier->second.begin(), earlier->second.end());
        members.erase(earlier);
      }
    }
    std::sort(group.begin(), group.end());
    group.erase(std::unique(group.begin(), group.end()), group.end());
    for (const std::size_t m : group) {
      plan.computedBy[m] = i;
    }
    members[i] = std::move(group);
  }
  for (auto& [last, group] : members) {
    if (group.size() > 1) {
      plan.groups[last] = std::move(group);
    }
  }
  return plan;
}

}  // namespace trn::graph::detail
