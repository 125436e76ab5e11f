#include "trn/graph/auto_cast.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>
#include <vector>

#include "trn/numerics/convert.h"

namespace trn::graph {

namespace {

/// A name for `base` no value of `graph` has.
std::string freshName(const Graph& graph, const std::string& base) {
  std::string name = base;
  for (int n = 1; graph.values.contains(name) || graph.initializers.contains(name); ++n) {
    name = fmt::format("{}_{}", base, n);
  }
  return name;
}

/// A new value of `value`'s shape and of `type`, named after it; returns its name.
std::string addTwin(Graph& graph, const std::string& value, ElementType type) {
  const std::string name = freshName(graph, fmt::format("{}_{}", value, elementTypeName(type)));
  Value twin = graph.values[value];
  twin.name = name;
  twin.type = type;
  graph.values[name] = twin;
  return name;
}

Node castNode(const std::string& name, const std::string& from, const std::string& to,
              std::int64_t type) {
  Node cast;
  cast.name = name;
  cast.opType = "Cast";
  cast.inputs = {from};
  cast.outputs = {to};
  cast.attributes.push_back({"to", type});
  return cast;
}

}  // namespace

Tensor roundedTo(const Tensor& t, ElementType type) {
  std::vector<float> values(t.data().size() / sizeof(float));
  std::memcpy(values.data(), t.data().data(), values.size() * sizeof(float));
  auto bytes = std::make_shared<std::vector<std::byte>>(
      values.size() * static_cast<std::size_t>(elementByteSize(type)));
  convertFromFloat(values, deviceDType(type).value(), *bytes);
  Tensor out = t;
  out.type = type;
  out.bytes = std::move(bytes);
  return out;
}

Status castAll(Graph& graph, ElementType type) {
  const std::optional<std::int64_t> onnxType = onnxDataType(type);
  if (type != ElementType::kBf16 || !onnxType) {
    return Status(ErrorCode::kUnsupported,
                  fmt::format("--auto-cast all computes in bf16 here, not {}: the library's "
                              "kernels take bf16 or fp32 (--auto-cast matmult takes fp16, tf32 "
                              "and fp8_e4m3 for the matrix products)",
                              elementTypeName(type)));
  }
  for (auto& [name, weight] : graph.initializers) {
    if (weight.type == ElementType::kFp32) {
      weight = roundedTo(weight, type);
      graph.values[name].type = type;
    }
  }
  const std::set<std::string> interface = [&] {
    std::set<std::string> names(graph.inputs.begin(), graph.inputs.end());
    names.insert(graph.outputs.begin(), graph.outputs.end());
    return names;
  }();
  for (auto& [name, value] : graph.values) {
    if (value.type == ElementType::kFp32 && !interface.contains(name)) {
      value.type = type;
    }
  }
  for (Node& node : graph.nodes) {
    for (Attribute& a : node.attributes) {
      if (node.opType == "Cast" && a.name == "to" &&
          std::get_if<std::int64_t>(&a.value) != nullptr &&
          fromOnnxDataType(static_cast<int>(std::get<std::int64_t>(a.value))) ==
              ElementType::kFp32) {
        a.value = *onnxType;
      }
    }
  }
  // The interface: fp32 inputs cast on entry, each just before the first node that reads
  // it and named in that node's module ("/layers.3/mlp/up/auto_cast_x"), so that a layer's
  // weights are cast in the layer (partition.h); fp32 outputs cast back on exit.
  for (const std::string& in : graph.inputs) {
    if (graph.values[in].type != ElementType::kFp32) {
      continue;
    }
    auto first = std::find_if(graph.nodes.begin(), graph.nodes.end(), [&](const Node& node) {
      return std::find(node.inputs.begin(), node.inputs.end(), in) != node.inputs.end();
    });
    if (first == graph.nodes.end()) {
      continue;
    }
    const std::string cast = addTwin(graph, in, type);
    for (Node& node : graph.nodes) {
      std::replace(node.inputs.begin(), node.inputs.end(), in, cast);
    }
    const std::size_t slash = first->name.rfind('/');
    const std::string module =
        slash == std::string::npos || slash == 0 ? "/auto_cast" : first->name.substr(0, slash);
    graph.nodes.insert(first, castNode(module + "/auto_cast_" + in, in, cast, *onnxType));
  }
  for (const std::string& out : graph.outputs) {
    if (graph.values[out].type != ElementType::kFp32) {
      continue;
    }
    const std::string inner = addTwin(graph, out, type);
    for (Node& node : graph.nodes) {
      std::replace(node.outputs.begin(), node.outputs.end(), out, inner);
      std::replace(node.inputs.begin(), node.inputs.end(), out, inner);
    }
    graph.nodes.push_back(
        castNode("/auto_cast/" + out, inner, out, *onnxDataType(ElementType::kFp32)));
  }
  return Status();
}

}  // namespace trn::graph
