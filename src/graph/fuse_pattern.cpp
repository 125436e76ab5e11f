// The fusion passes' shared matching helpers and rewrite (see fuse_pattern.h).
#include "fuse_pattern.h"

#include <fmt/format.h>

#include <cstring>

namespace trn::graph::detail {

Uses::Uses(const Graph& graph) : outputs(graph.outputs.begin(), graph.outputs.end()) {
  for (std::size_t n = 0; n < graph.nodes.size(); ++n) {
    for (const std::string& in : graph.nodes[n].inputs) {
      if (!in.empty()) {
        readers[in].push_back(n);
      }
    }
    for (const std::string& out : graph.nodes[n].outputs) {
      producer[out] = n;
    }
  }
}

std::optional<std::size_t> Uses::producedBy(const Graph& graph, const std::string& value,
                                            const char* opType) const {
  auto it = producer.find(value);
  if (it == producer.end()) {
    return std::nullopt;
  }
  const Node& node = graph.nodes[it->second];
  if (node.opType != opType || !node.domain.empty()) {
    return std::nullopt;
  }
  return it->second;
}

bool Uses::onlyReader(const std::string& value, std::size_t reader) const {
  const std::optional<std::size_t> sole = soleReader(value);
  return sole && *sole == reader;
}

std::optional<std::size_t> Uses::soleReader(const std::string& value) const {
  auto it = readers.find(value);
  // A node reading the value twice (x * x) counts as one reader.
  if (outputs.contains(value) || it == readers.end()) {
    return std::nullopt;
  }
  for (const std::size_t r : it->second) {
    if (r != it->second[0]) {
      return std::nullopt;
    }
  }
  return it->second[0];
}

std::optional<std::size_t> Uses::soleReaderOp(const Graph& graph, const std::string& value,
                                              const char* opType) const {
  const std::optional<std::size_t> reader = soleReader(value);
  if (!reader) {
    return std::nullopt;
  }
  const Node& node = graph.nodes[*reader];
  if (node.opType != opType || !node.domain.empty() || node.outputs.size() != 1) {
    return std::nullopt;
  }
  return reader;
}

std::optional<std::string> otherOperand(const Node& node, const std::string& value) {
  if (node.inputs.size() != 2) {
    return std::nullopt;
  }
  if (node.inputs[0] == value) {
    return node.inputs[1];
  }
  if (node.inputs[1] == value) {
    return node.inputs[0];
  }
  return std::nullopt;
}

std::optional<std::vector<std::int64_t>> staticSizes(const Graph& graph, const std::string& name) {
  const Value* v = graph.value(name);
  if (v == nullptr || !v->shape || !v->shape->isStatic()) {
    return std::nullopt;
  }
  return v->shape->sizes();
}

std::optional<ElementType> typeOf(const Graph& graph, const std::string& name) {
  const Value* v = graph.value(name);
  return v == nullptr ? std::nullopt : v->type;
}

std::optional<float> scalarWeight(const Graph& graph, const std::string& name) {
  const Tensor* t = graph.initializer(name);
  if (t == nullptr || t->type != ElementType::kFp32 || t->data().size() != sizeof(float)) {
    return std::nullopt;
  }
  float value = 0;
  std::memcpy(&value, t->data().data(), sizeof(float));
  return value;
}

std::string moduleOf(const std::string& nodeName) {
  const std::size_t slash = nodeName.rfind('/');
  return slash == std::string::npos ? "" : nodeName.substr(0, slash + 1);
}

std::string unusedName(const Graph& graph, const std::string& base) {
  std::string name = base;
  for (int n = 1; graph.values.contains(name) || graph.initializers.contains(name); ++n) {
    name = fmt::format("{}_{}", base, n);
  }
  return name;
}

bool Rewrite::claim(Replacement r) {
  for (const std::size_t n : r.removed) {
    if (claimed_.contains(n)) {
      return false;
    }
  }
  claimed_.insert(r.removed.begin(), r.removed.end());
  matches_.push_back(std::move(r));
  return true;
}

int Rewrite::apply(Graph& graph) {
  if (matches_.empty()) {
    return 0;
  }
  std::map<std::size_t, Replacement*> fusedAt;
  for (Replacement& m : matches_) {
    fusedAt[m.at] = &m;
  }
  // Node names stay unique: a second fused node of a module ("/layers.0/Rope", the queries' and
  // the keys') is "/layers.0/Rope_1".
  std::set<std::string> names;
  for (std::size_t n = 0; n < graph.nodes.size(); ++n) {
    if (!claimed_.contains(n)) {
      names.insert(graph.nodes[n].name);
    }
  }
  std::set<std::string> touched;
  std::vector<Node> nodes;
  for (std::size_t n = 0; n < graph.nodes.size(); ++n) {
    if (!claimed_.contains(n)) {
      nodes.push_back(std::move(graph.nodes[n]));
      continue;
    }
    const Node& old = graph.nodes[n];
    touched.insert(old.inputs.begin(), old.inputs.end());
    touched.insert(old.outputs.begin(), old.outputs.end());
    auto fused = fusedAt.find(n);
    if (fused == fusedAt.end()) {
      continue;
    }
    for (Value& v : fused->second->values) {
      graph.values[v.name] = std::move(v);
    }
    for (Node& node : fused->second->nodes) {
      const std::string base = node.name;
      for (int k = 1; names.contains(node.name); ++k) {
        node.name = fmt::format("{}_{}", base, k);
      }
      names.insert(node.name);
      nodes.push_back(std::move(node));
    }
  }
  graph.nodes = std::move(nodes);
  dropUnread(graph, touched);
  const int count = static_cast<int>(matches_.size());
  matches_.clear();
  claimed_.clear();
  return count;
}

}  // namespace trn::graph::detail
