#include "trn/graph/fold.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace trn::graph {
namespace {

/// A Constant node's value as an initializer named after its output.
Result<Tensor> constantValue(const Graph& graph, const Node& node) {
  if (node.attributes.size() != 1) {
    return invalidArgument(fmt::format("{}: {}: a Constant needs exactly one value attribute",
                                       graph.source, describeNode(graph, node)));
  }
  const Attribute& a = node.attributes[0];
  auto bytesOf = [](const void* data, std::size_t bytes) {
    auto out = std::make_shared<std::vector<std::byte>>(bytes);
    std::memcpy(out->data(), data, bytes);
    return std::shared_ptr<const std::vector<std::byte>>(std::move(out));
  };
  Tensor t;
  t.name = node.outputs[0];
  if (const auto* tensor = std::get_if<Tensor>(&a.value); tensor != nullptr && a.name == "value") {
    t = *tensor;
    t.name = node.outputs[0];
  } else if (const auto* f = std::get_if<float>(&a.value)) {
    t.type = ElementType::kFp32;
    t.bytes = bytesOf(f, sizeof(float));
  } else if (const auto* fs = std::get_if<std::vector<float>>(&a.value)) {
    t.type = ElementType::kFp32;
    t.shape = Shape::of({static_cast<std::int64_t>(fs->size())});
    t.bytes = bytesOf(fs->data(), fs->size() * sizeof(float));
  } else if (const auto* i = std::get_if<std::int64_t>(&a.value)) {
    t.type = ElementType::kInt64;
    t.bytes = bytesOf(i, sizeof(std::int64_t));
  } else if (const auto* is = std::get_if<std::vector<std::int64_t>>(&a.value)) {
    t.type = ElementType::kInt64;
    t.shape = Shape::of({static_cast<std::int64_t>(is->size())});
    t.bytes = bytesOf(is->data(), is->size() * sizeof(std::int64_t));
  } else {
    return invalidArgument(fmt::format("{}: {}: the Constant attribute '{}' is not supported",
                                       graph.source, describeNode(graph, node), a.name));
  }
  return t;
}

/// Identity and inference-mode Dropout: output 0 is input 0.
bool isPassThrough(const Node& node) {
  return node.opType == "Identity" || node.opType == "Dropout";
}

}  // namespace

bool isShapeArgument(const std::string& opType, std::size_t input) {
  static const std::map<std::string, std::set<std::size_t>> kShapeArguments = {
      {"Reshape", {1}},   {"Expand", {1}},    {"Slice", {1, 2, 3, 4}}, {"Split", {1}},
      {"Squeeze", {1}},   {"Unsqueeze", {1}}, {"ReduceMean", {1}},     {"ReduceSum", {1}},
      {"ReduceMax", {1}}, {"ReduceMin", {1}}, {"ReduceProd", {1}},     {"ConstantOfShape", {0}},
      {"Shape", {0}},  // reads only its input's shape
  };
  auto it = kShapeArguments.find(opType);
  return it != kShapeArguments.end() && it->second.contains(input);
}

Status foldConstants(Graph& graph) {
  // Constant nodes become initializers.
  std::vector<Node> kept;
  kept.reserve(graph.nodes.size());
  for (Node& node : graph.nodes) {
    if (node.opType == "Constant" && node.domain.empty()) {
      TRN_ASSIGN_OR_RETURN(Tensor value, constantValue(graph, node));
      graph.initializers[value.name] = std::move(value);
      continue;
    }
    kept.push_back(std::move(node));
  }
  graph.nodes = std::move(kept);

  // Pass-through nodes: their consumers read the input instead, unless the output is a graph
  // output (the node then stays, and lowering copies).
  const std::set<std::string> graphOutputs(graph.outputs.begin(), graph.outputs.end());
  std::map<std::string, std::string> renamed;
  auto resolve = [&](const std::string& name) {
    auto it = renamed.find(name);
    return it == renamed.end() ? name : it->second;
  };
  kept.clear();
  for (Node& node : graph.nodes) {
    for (std::string& in : node.inputs) {
      if (!in.empty()) {
        in = resolve(in);
      }
    }
    if (isPassThrough(node) && !graphOutputs.contains(node.outputs[0])) {
      renamed[node.outputs[0]] = node.inputs[0];
      // Dropout's mask (output 1) must be unused: checked below, once liveness is known.
      if (node.outputs.size() > 1 && !node.outputs[1].empty()) {
        kept.push_back(Node{node.name, "DropoutMask", "", {}, {node.outputs[1]}, {}});
      }
      continue;
    }
    kept.push_back(std::move(node));
  }
  graph.nodes = std::move(kept);

  // Liveness from the graph outputs through the inputs the device reads.
  std::set<std::string> live(graph.outputs.begin(), graph.outputs.end());
  std::vector<bool> keep(graph.nodes.size(), false);
  for (std::size_t n = graph.nodes.size(); n-- > 0;) {
    const Node& node = graph.nodes[n];
    bool used = false;
    for (const std::string& out : node.outputs) {
      used = used || (!out.empty() && live.contains(out));
    }
    if (!used) {
      continue;
    }
    if (node.opType == "DropoutMask") {
      return unsupported(fmt::format(
          "{}: node '{}' (Dropout): its mask output '{}' is used; only inference-mode Dropout "
          "(mask unused) is supported",
          graph.source, node.name, node.outputs[0]));
    }
    keep[n] = true;
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.hasInput(i) && !isShapeArgument(node.opType, i)) {
        live.insert(node.inputs[i]);
      }
    }
  }
  kept.clear();
  for (std::size_t n = 0; n < graph.nodes.size(); ++n) {
    if (keep[n]) {
      kept.push_back(std::move(graph.nodes[n]));
    }
  }
  graph.nodes = std::move(kept);
  // Values and initializers nothing refers to any more go; a kept node's shape arguments stay
  // (they are small and name what inference resolved), but only its data inputs reach the device.
  std::set<std::string> referenced(graph.inputs.begin(), graph.inputs.end());
  referenced.insert(graph.outputs.begin(), graph.outputs.end());
  for (const Node& node : graph.nodes) {
    referenced.insert(node.inputs.begin(), node.inputs.end());
    referenced.insert(node.outputs.begin(), node.outputs.end());
  }
  std::erase_if(graph.initializers,
                [&](const auto& entry) { return !referenced.contains(entry.first); });
  std::erase_if(graph.values, [&](const auto& entry) { return !referenced.contains(entry.first); });
  return Status();
}

}  // namespace trn::graph
