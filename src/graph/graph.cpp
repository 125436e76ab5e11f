#include "trn/graph/graph.h"

#include <fmt/format.h>

#include <cstring>

#include "trn/base/checked.h"
#include "trn/graph/attribute.h"

namespace trn::graph {

std::optional<std::vector<std::int64_t>> Tensor::toInt64() const {
  if (!isInteger(type)) {
    return std::nullopt;
  }
  const std::span<const std::byte> raw = data();
  const auto size = static_cast<std::size_t>(elementByteSize(type));
  std::vector<std::int64_t> out;
  out.reserve(raw.size() / size);
  for (std::size_t off = 0; off + size <= raw.size(); off += size) {
    const std::byte* p = raw.data() + off;
    switch (type) {
      case ElementType::kInt8: {
        std::int8_t v;
        std::memcpy(&v, p, 1);
        out.push_back(v);
        break;
      }
      case ElementType::kUint8: {
        std::uint8_t v;
        std::memcpy(&v, p, 1);
        out.push_back(v);
        break;
      }
      case ElementType::kInt16: {
        std::int16_t v;
        std::memcpy(&v, p, 2);
        out.push_back(v);
        break;
      }
      case ElementType::kUint16: {
        std::uint16_t v;
        std::memcpy(&v, p, 2);
        out.push_back(v);
        break;
      }
      case ElementType::kInt32: {
        std::int32_t v;
        std::memcpy(&v, p, 4);
        out.push_back(v);
        break;
      }
      case ElementType::kUint32: {
        std::uint32_t v;
        std::memcpy(&v, p, 4);
        out.push_back(v);
        break;
      }
      case ElementType::kInt64: {
        std::int64_t v;
        std::memcpy(&v, p, 8);
        out.push_back(v);
        break;
      }
      case ElementType::kUint64: {
        std::uint64_t v;
        std::memcpy(&v, p, 8);
        out.push_back(static_cast<std::int64_t>(v));
        break;
      }
      default:
        return std::nullopt;
    }
  }
  return out;
}

const Attribute* Node::attribute(const std::string& attributeName) const {
  for (const Attribute& a : attributes) {
    if (a.name == attributeName) {
      return &a;
    }
  }
  return nullptr;
}

std::optional<std::int64_t> Node::intAttribute(const std::string& attributeName) const {
  const Attribute* a = attribute(attributeName);
  if (a == nullptr || !std::holds_alternative<std::int64_t>(a->value)) {
    return std::nullopt;
  }
  return std::get<std::int64_t>(a->value);
}

std::optional<float> Node::floatAttribute(const std::string& attributeName) const {
  const Attribute* a = attribute(attributeName);
  if (a == nullptr || !std::holds_alternative<float>(a->value)) {
    return std::nullopt;
  }
  return std::get<float>(a->value);
}

std::optional<std::vector<std::int64_t>> Node::intsAttribute(
    const std::string& attributeName) const {
  const Attribute* a = attribute(attributeName);
  if (a == nullptr || !std::holds_alternative<std::vector<std::int64_t>>(a->value)) {
    return std::nullopt;
  }
  return std::get<std::vector<std::int64_t>>(a->value);
}

std::string formatAttribute(const Attribute& attribute) {
  struct Visitor {
    std::string operator()(std::int64_t v) const { return std::to_string(v); }
    std::string operator()(float v) const { return fmt::format("{}", v); }
    std::string operator()(const std::string& v) const { return fmt::format("\"{}\"", v); }
    std::string operator()(const Tensor& t) const {
      return fmt::format("tensor {}{}", elementTypeName(t.type), t.shape.toString());
    }
    std::string operator()(const std::vector<std::int64_t>& v) const {
      return fmt::format("[{}]", fmt::join(v, ", "));
    }
    std::string operator()(const std::vector<float>& v) const {
      return fmt::format("[{}]", fmt::join(v, ", "));
    }
    std::string operator()(const std::vector<std::string>& v) const {
      return fmt::format("[\"{}\"]", fmt::join(v, "\", \""));
    }
  };
  return attribute.name + "=" + std::visit(Visitor{}, attribute.value);
}

const Value* Graph::value(const std::string& valueName) const {
  auto it = values.find(valueName);
  return it == values.end() ? nullptr : &it->second;
}

std::optional<std::vector<std::int64_t>> Graph::reductionAxes(const Node& node) const {
  std::optional<std::vector<std::int64_t>> axes = node.intsAttribute("axes");
  if (!axes && node.hasInput(1)) {
    auto known = knownIntegers.find(node.inputs[1]);
    if (known != knownIntegers.end()) {
      axes = known->second;
    }
  }
  return axes;
}

RankLayout Graph::layoutOf(const std::string& valueName) const {
  auto it = layouts.find(valueName);
  return it == layouts.end() ? RankLayout::replicated() : it->second;
}

Value* Graph::value(const std::string& valueName) {
  auto it = values.find(valueName);
  return it == values.end() ? nullptr : &it->second;
}

const Tensor* Graph::initializer(const std::string& valueName) const {
  auto it = initializers.find(valueName);
  return it == initializers.end() ? nullptr : &it->second;
}

std::int64_t Graph::parameterCount() const {
  Checked<std::int64_t> count = 0;
  for (const auto& [n, t] : initializers) {
    if (isInteger(t.type) || t.type == ElementType::kBool) {
      continue;
    }
    count += t.shape.elementCount().value_or(0);
  }
  return count.get().value_or(-1);
}

std::int64_t Graph::parameterBytes() const {
  Checked<std::int64_t> bytes = 0;
  for (const auto& [n, t] : initializers) {
    if (isInteger(t.type) || t.type == ElementType::kBool) {
      continue;
    }
    bytes += static_cast<std::int64_t>(t.data().size());
  }
  return bytes.get().value_or(-1);
}

std::string describeValue(const Value& value) {
  const std::string type = value.type ? std::string(elementTypeName(*value.type)) : "?";
  return type + (value.shape ? value.shape->toString() : "[?]");
}

void dropUnread(Graph& graph, std::set<std::string> candidates) {
  for (const Node& node : graph.nodes) {
    for (const std::string& in : node.inputs) {
      candidates.erase(in);
    }
  }
  for (const std::string& name : graph.outputs) {
    candidates.erase(name);
  }
  for (const std::string& name : graph.inputs) {
    candidates.erase(name);
  }
  for (const std::string& name : candidates) {
    graph.initializers.erase(name);
    graph.values.erase(name);
  }
}

std::string describeNode(const Graph& graph, const Node& node) {
  std::string inputs;
  for (const std::string& in : node.inputs) {
    if (!inputs.empty()) {
      inputs += ", ";
    }
    if (in.empty()) {
      inputs += "<omitted>";
      continue;
    }
    const Value* v = graph.value(in);
    inputs += v != nullptr ? fmt::format("'{}': {}", in, describeValue(*v))
                           : fmt::format("'{}' (undefined)", in);
  }
  return fmt::format("node '{}' ({}) with inputs {}", node.name, node.opType,
                     inputs.empty() ? "none" : inputs);
}

}  // namespace trn::graph
