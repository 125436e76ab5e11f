// Internal to shape inference: the context a per-operator shape rule sees (its node's input
// types, static sizes and known constant values) and the rule tables of the three rule files.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trn/base/status.h"
#include "trn/graph/graph.h"

namespace trn::graph::detail {

using Sizes = std::vector<std::int64_t>;

/// The most elements of an integer tensor whose values shape inference tracks.
inline constexpr std::int64_t kMaxTrackedElements = 4096;

/// Integer tensors whose values are known at compile time, flattened, by value name.
using Constants = std::map<std::string, std::vector<std::int64_t>>;

class ShapeContext {
 public:
  ShapeContext(Graph& graph, const Node& node, Constants& constants)
      : graph_(graph), node_(node), constants_(constants) {}

  [[nodiscard]] const Node& node() const { return node_; }
  [[nodiscard]] std::int64_t opset() const { return graph_.opsetVersion; }

  /// An error that names the file, the node, its op type and its inputs.
  [[nodiscard]] Status error(const std::string& message) const;
  /// The same, as unsupported, for a shape that depends on a value not known at compile time.
  [[nodiscard]] Status unresolved(const std::string& message) const;

  [[nodiscard]] bool has(std::size_t i) const { return node_.hasInput(i); }
  /// The sizes and type of present input i (shape inference checked both are known).
  [[nodiscard]] Sizes sizes(std::size_t i) const;
  [[nodiscard]] ElementType type(std::size_t i) const;
  /// Fails unless input i is present.
  [[nodiscard]] Status require(std::size_t i, const char* what) const;
  /// The known values of input i, or nullptr.
  [[nodiscard]] const std::vector<std::int64_t>* constant(std::size_t i) const;
  /// The known values of input i, or an "unresolved" error naming `what`.
  Result<std::vector<std::int64_t>> requireConstant(std::size_t i, const char* what) const;

  [[nodiscard]] std::size_t outputCount() const { return node_.outputs.size(); }
  /// Sets output i (ignored if absent) to `type` and `sizes`.
  Status setOutput(std::size_t i, ElementType type, const Sizes& sizes);
  /// Records the values of output i, when small.
  void setConstant(std::size_t i, std::vector<std::int64_t> values);

  /// `axis` within [-rank, rank) made non-negative, or an error naming `what`.
  Result<std::int64_t> axis(std::int64_t axis, std::int64_t rank, const char* what) const;
  /// Multidirectional (numpy) broadcasting of two shapes.
  Result<Sizes> broadcast(const Sizes& a, const Sizes& b) const;

 private:
  Graph& graph_;
  const Node& node_;
  Constants& constants_;
};

/// The number of elements Slice takes from a dimension of `size` with ONNX's clamping rules, and
/// in `*first` the index of the first one (lowering reads the same).
std::int64_t sliceLength(std::int64_t size, std::int64_t start, std::int64_t end, std::int64_t step,
                         std::int64_t* first);

/// The product of sizes[begin, end), or nullopt on overflow.
std::optional<std::int64_t> product(const Sizes& sizes, std::size_t begin, std::size_t end);

using ShapeRule = Status (*)(ShapeContext&);
using ShapeRules = std::map<std::string, ShapeRule>;

void addElementwiseRules(ShapeRules& rules);  // shape_rules_math.cpp
void addTensorRules(ShapeRules& rules);       // shape_rules_tensor.cpp
void addNnRules(ShapeRules& rules);           // shape_rules_nn.cpp

}  // namespace trn::graph::detail
