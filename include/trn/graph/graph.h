// The graph IR: values (named tensors with element type and shape), nodes in topological order,
// the graph's inputs and outputs, and its initializers (weights). It is what ONNX import builds
// and what every later pass (shape inference, folding, lowering) reads and rewrites.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "trn/graph/element_type.h"
#include "trn/graph/node.h"
#include "trn/graph/rank_layout.h"
#include "trn/graph/shape.h"
#include "trn/graph/tensor.h"

namespace trn::graph {

/// A named tensor flowing between nodes. The shape is unknown (nullopt) until shape inference
/// when the file gave none.
struct Value {
  std::string name;
  std::optional<ElementType> type;
  std::optional<Shape> shape;
};

struct Graph {
  std::string name;
  std::string source;                ///< the file it was imported from, for messages
  std::int64_t opsetVersion = 0;     ///< of the default ONNX domain
  std::string producer;              ///< producer_name and version, e.g. "pytorch 1.13.1"
  std::vector<std::string> inputs;   ///< graph inputs that are not initializers, in order
  std::vector<std::string> outputs;  ///< in order
  std::vector<Node> nodes;           ///< in topological order
  std::map<std::string, Value> values;
  std::map<std::string, Tensor> initializers;
  /// Small integer tensors whose values are known at compile time (initializers, Constant and
  /// Shape outputs, arithmetic on them), flattened, by value name: filled by shape inference, read
  /// by lowering for the operators' parameters (Slice's starts, ...).
  std::map<std::string, std::vector<std::int64_t>> knownIntegers;
  /// Set by the shard pass (shard.h): the tensor-parallel degree and each value's layout over the
  /// ranks (a value not listed is replicated).
  int ranks = 1;
  std::map<std::string, RankLayout> layouts;

  [[nodiscard]] const Value* value(const std::string& valueName) const;
  /// The axes a Reduce node reduces: its `axes` attribute, or its second input when the values
  /// are known (knownIntegers); nullopt when neither gives them.
  [[nodiscard]] std::optional<std::vector<std::int64_t>> reductionAxes(const Node& node) const;
  /// The layout of `valueName` over the ranks: replicated unless the shard pass listed it.
  [[nodiscard]] RankLayout layoutOf(const std::string& valueName) const;
  [[nodiscard]] Value* value(const std::string& valueName);
  [[nodiscard]] const Tensor* initializer(const std::string& valueName) const;

  /// Number of weight elements and their bytes: the floating-point initializers (integer and bool
  /// initializers are shapes, indices and masks, not parameters).
  [[nodiscard]] std::int64_t parameterCount() const;
  [[nodiscard]] std::int64_t parameterBytes() const;
};

/// "fp32[2, 3]", "fp32[?]" (unknown shape) or "?[?]" (nothing known) for a value.
std::string describeValue(const Value& value);

/// Removes the `candidates` that no node, graph input or graph output reads any more: their
/// initializers and values (what a pass that rewired nodes leaves behind).
void dropUnread(Graph& graph, std::set<std::string> candidates);

/// How an error names a node: "node 'mm0' (MatMul) with inputs x: fp32[2, 3], w: fp32[4, 5]".
std::string describeNode(const Graph& graph, const Node& node);

}  // namespace trn::graph
