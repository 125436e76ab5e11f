// Test support for the graph module: builds graphs in memory (no ONNX file) and reads back the
// shapes shape inference gave them.
#pragma once

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "trn/graph/graph.h"

namespace trn::graph::fixtures {

/// Adds an fp32 initializer `name` of `sizes` holding `values` (and its value) to `graph`.
inline void addFloats(Graph& graph, const std::string& name, const std::vector<std::int64_t>& sizes,
                      const std::vector<float>& values) {
  auto bytes = std::make_shared<std::vector<std::byte>>(values.size() * sizeof(float));
  std::memcpy(bytes->data(), values.data(), bytes->size());
  graph.initializers[name] = Tensor{name, ElementType::kFp32, Shape::of(sizes), bytes};
  graph.values[name] = Value{name, ElementType::kFp32, Shape::of(sizes)};
}

/// `count` values offset + amplitude sin(step i + 0.3): inputs and weights of every sign and
/// magnitude below the amplitude, deterministic.
inline std::vector<float> wave(std::int64_t count, double step, double amplitude,
                               double offset = 0.0) {
  std::vector<float> values(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] =
        static_cast<float>(offset + amplitude * std::sin(step * static_cast<double>(i) + 0.3));
  }
  return values;
}

class GraphBuilder {
 public:
  explicit GraphBuilder(std::int64_t opset = 17) {
    graph_.source = "test.onnx";
    graph_.opsetVersion = opset;
  }

  GraphBuilder& input(const std::string& name, std::vector<std::int64_t> sizes,
                      ElementType type = ElementType::kFp32) {
    graph_.inputs.push_back(name);
    graph_.values[name] = Value{name, type, Shape::of(sizes)};
    return *this;
  }

  /// An int64 initializer holding `values` with shape `sizes` ({n} when empty and values has n).
  GraphBuilder& ints(const std::string& name, const std::vector<std::int64_t>& values,
                     std::vector<std::int64_t> sizes = {-1}) {
    if (sizes == std::vector<std::int64_t>{-1}) {
      sizes = {static_cast<std::int64_t>(values.size())};
    }
    auto bytes = std::make_shared<std::vector<std::byte>>(values.size() * 8);
    std::memcpy(bytes->data(), values.data(), bytes->size());
    graph_.initializers[name] = Tensor{name, ElementType::kInt64, Shape::of(sizes), bytes};
    graph_.values[name] = Value{name, ElementType::kInt64, Shape::of(sizes)};
    return *this;
  }

  /// A zero-filled fp32 initializer.
  GraphBuilder& weight(const std::string& name, std::vector<std::int64_t> sizes) {
    const auto count = Shape::of(sizes).elementCount().value_or(0);
    auto bytes = std::make_shared<std::vector<std::byte>>(static_cast<std::size_t>(count) * 4);
    graph_.initializers[name] = Tensor{name, ElementType::kFp32, Shape::of(sizes), bytes};
    graph_.values[name] = Value{name, ElementType::kFp32, Shape::of(sizes)};
    return *this;
  }

  GraphBuilder& node(const std::string& op, std::vector<std::string> inputs,
                     std::vector<std::string> outputs, std::vector<Attribute> attributes = {}) {
    Node n;
    n.name = op + "_" + std::to_string(graph_.nodes.size());
    n.opType = op;
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    n.attributes = std::move(attributes);
    for (const std::string& out : n.outputs) {
      if (!out.empty()) {
        graph_.values[out] = Value{out, {}, {}};
      }
    }
    graph_.nodes.push_back(std::move(n));
    return *this;
  }

  GraphBuilder& output(const std::string& name) {
    graph_.outputs.push_back(name);
    return *this;
  }

  Graph& graph() { return graph_; }

 private:
  Graph graph_;
};

inline Attribute attr(const std::string& name, std::int64_t v) { return Attribute{name, v}; }
inline Attribute attr(const std::string& name, std::vector<std::int64_t> v) {
  return Attribute{name, std::move(v)};
}
inline Attribute textAttr(const std::string& name, const char* v) {
  return Attribute{name, std::string(v)};
}

/// The sizes of value `name` (empty with a failed expectation if unknown).
inline std::vector<std::int64_t> sizesOf(const Graph& graph, const std::string& name) {
  const Value* v = graph.value(name);
  if (v == nullptr || !v->shape || !v->shape->isStatic()) {
    return {-1};
  }
  return v->shape->sizes();
}

}  // namespace trn::graph::fixtures
