#include "trn/graph/partition.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "trn/graph/fold.h"

namespace trn::graph {

namespace {

/// The components of a node name's module path, without the node's own name.
std::vector<std::string> modulePath(const std::string& nodeName) {
  std::vector<std::string> parts;
  for (std::size_t begin = 0; begin < nodeName.size();) {
    const std::size_t end = std::min(nodeName.find('/', begin), nodeName.size());
    if (end > begin) {
      parts.push_back(nodeName.substr(begin, end - begin));
    }
    begin = end + 1;
  }
  if (!parts.empty()) {
    parts.pop_back();
  }
  return parts;
}

/// "layers.3", "h.0" (a module list's entries) or "3" (an nn.Sequential's children).
bool isIndexedModule(const std::string& component) {
  const std::size_t dot = component.rfind('.');
  const std::size_t digits = dot == std::string::npos ? 0 : dot + 1;
  return digits < component.size() &&
         component.find_first_not_of("0123456789", digits) == std::string::npos;
}

/// Appends `bytes` to `key`, preceded by their length so that fields cannot run together.
void appendBytes(std::string& key, const void* bytes, std::size_t size) {
  key += fmt::format("{}:", size);
  key.append(static_cast<const char*>(bytes), size);
}

void appendText(std::string& key, const std::string& text) {
  appendBytes(key, text.data(), text.size());
}

void appendTensor(std::string& key, const Tensor& tensor, bool withData) {
  key += elementTypeName(tensor.type);
  key += tensor.shape.toString();
  if (withData) {
    const std::span<const std::byte> data = tensor.data();
    appendBytes(key, data.data(), data.size());
  }
}

void appendAttribute(std::string& key, const Attribute& attribute) {
  appendText(key, attribute.name);
  key += fmt::format("#{}", attribute.value.index());
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          appendText(key, v);
        } else if constexpr (std::is_same_v<T, Tensor>) {
          appendTensor(key, v, true);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          key += fmt::format("[{}]", v.size());
          for (const std::string& s : v) {
            appendText(key, s);
          }
        } else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, float>) {
          appendBytes(key, &v, sizeof(v));
        } else {
          appendBytes(key, v.data(), v.size() * sizeof(v[0]));
        }
      },
      attribute.value);
}

/// Whether the lowering reads `weight`'s data at compile time, so that two parts are one kernel
/// only if it is the same: one-element weights become immediates. Integer weights the lowering
/// reads (Gather's known indices) are compile-time integers, which the key holds as such; every
/// other weight the kernel reads from HBM.
bool readAtCompileTime(const Tensor& weight) { return weight.shape.elementCount() == 1; }

}  // namespace

std::optional<std::string> indexedLayerOf(const std::string& nodeName) {
  for (const std::string& component : modulePath(nodeName)) {
    if (isIndexedModule(component)) {
      return component;
    }
  }
  return std::nullopt;
}

std::string layerOf(const std::string& nodeName) {
  const std::vector<std::string> path = modulePath(nodeName);
  if (path.empty()) {
    return "(graph)";
  }
  return indexedLayerOf(nodeName).value_or(path.front());
}

Result<Partition> parsePartition(const std::string& text) {
  if (text == "auto") {
    return Partition::kAuto;
  }
  if (text == "one") {
    return Partition::kOne;
  }
  if (text == "per-layer") {
    return Partition::kPerLayer;
  }
  return invalidArgument(
      fmt::format("unknown partition '{}': expected auto, one or per-layer", text));
}

std::vector<NodeRange> layerRanges(const Graph& graph) {
  std::vector<NodeRange> ranges;
  std::optional<std::string> current;
  for (std::size_t n = 0; n < graph.nodes.size(); ++n) {
    const std::optional<std::string> layer = indexedLayerOf(graph.nodes[n].name);
    if (ranges.empty() || layer != current) {
      ranges.push_back({n, 0});
      current = layer;
    }
    ++ranges.back().count;
  }
  return ranges;
}

Graph extractPart(const Graph& graph, NodeRange range) {
  Graph part;
  part.name = graph.name;
  part.source = graph.source;
  part.opsetVersion = graph.opsetVersion;
  part.producer = graph.producer;
  const std::size_t end = range.first + range.count;
  std::set<std::string> produced;
  std::set<std::string> seenInputs;
  auto addValue = [&](const std::string& name) {
    if (const Value* v = graph.value(name)) {
      part.values.emplace(name, *v);
    }
    auto known = graph.knownIntegers.find(name);
    if (known != graph.knownIntegers.end()) {
      part.knownIntegers.emplace(name, known->second);
    }
  };
  for (std::size_t n = range.first; n < end; ++n) {
    const Node& node = graph.nodes[n];
    part.nodes.push_back(node);
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      const std::string& in = node.inputs[i];
      if (in.empty() || produced.contains(in)) {
        continue;
      }
      addValue(in);
      if (const Tensor* weight = graph.initializer(in)) {
        part.initializers.emplace(in, *weight);
      } else if (!isShapeArgument(node.opType, i) && seenInputs.insert(in).second) {
        // A shape argument is known at compile time (knownIntegers); its producer may be gone.
        part.inputs.push_back(in);
      }
    }
    for (const std::string& out : node.outputs) {
      produced.insert(out);
      addValue(out);
    }
  }
  // The part's results that something after it reads, in order of production.
  std::set<std::string> readLater(graph.outputs.begin(), graph.outputs.end());
  for (std::size_t n = end; n < graph.nodes.size(); ++n) {
    readLater.insert(graph.nodes[n].inputs.begin(), graph.nodes[n].inputs.end());
  }
  for (std::size_t n = range.first; n < end; ++n) {
    for (const std::string& out : graph.nodes[n].outputs) {
      if (readLater.contains(out)) {
        part.outputs.push_back(out);
      }
    }
  }
  return part;
}

std::string partKey(const Graph& part) {
  std::map<std::string, std::size_t> ids;
  std::string key;
  auto value = [&](const std::string& name) {
    if (name.empty()) {
      key += "-;";
      return;
    }
    auto [it, added] = ids.emplace(name, ids.size());
    key += fmt::format("v{}", it->second);
    if (!added) {
      key += ';';
      return;
    }
    if (const Tensor* weight = part.initializer(name)) {
      key += 'w';
      appendTensor(key, *weight, readAtCompileTime(*weight));
    } else if (const Value* v = part.value(name)) {
      key += v->type ? elementTypeName(*v->type) : "?";
      key += v->shape ? v->shape->toString() : "?";
    }
    auto known = part.knownIntegers.find(name);
    if (known != part.knownIntegers.end()) {
      key += 'k';
      appendBytes(key, known->second.data(), known->second.size() * sizeof(std::int64_t));
    }
    key += ';';
  };
  key += "in";
  for (const std::string& in : part.inputs) {
    value(in);
  }
  for (const Node& node : part.nodes) {
    key += '\n';
    appendText(key, node.domain);
    appendText(key, node.opType);
    for (const Attribute& attribute : node.attributes) {
      appendAttribute(key, attribute);
    }
    key += "(";
    for (const std::string& in : node.inputs) {
      value(in);
    }
    key += ")->";
    for (const std::string& out : node.outputs) {
      value(out);
    }
  }
  key += "\nout";
  for (const std::string& out : part.outputs) {
    value(out);
  }
  return key;
}

}  // namespace trn::graph
