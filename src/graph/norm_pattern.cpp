// The norm fusions' shared matching (see norm_pattern.h).
#include "norm_pattern.h"

#include <vector>

namespace trn::graph::detail {

bool meanOverLastAxis(const Graph& graph, const Node& node, std::size_t rank) {
  if (node.opType != "ReduceMean" || !node.domain.empty() ||
      node.intAttribute("keepdims").value_or(1) != 1 || rank == 0) {
    return false;
  }
  const std::optional<std::vector<std::int64_t>> axes = graph.reductionAxes(node);
  const auto last = static_cast<std::int64_t>(rank) - 1;
  return axes && axes->size() == 1 && ((*axes)[0] == -1 || (*axes)[0] == last);
}

std::optional<std::string> squaredValue(const Graph& graph, const Uses& uses, Replacement& r,
                                        const std::string& squares, std::size_t mean) {
  if (!uses.onlyReader(squares, mean)) {
    return std::nullopt;
  }
  std::optional<std::size_t> node = uses.producedBy(graph, squares, "Pow");
  if (node) {
    const std::optional<float> exponent = scalarWeight(graph, graph.nodes[*node].inputs.at(1));
    if (exponent != 2.0f) {
      return std::nullopt;
    }
  } else {
    node = uses.producedBy(graph, squares, "Mul");
    if (!node || graph.nodes[*node].inputs.at(0) != graph.nodes[*node].inputs.at(1)) {
      return std::nullopt;
    }
  }
  r.removed.insert(*node);
  return graph.nodes[*node].inputs.at(0);
}

namespace {

/// v / root written as Div(v, root), or as Mul(v, .) or Mul(., v) of Div(1, root) or
/// Reciprocal(root), `root` read by that node alone: the quotient's value, its nodes joining
/// `r`.
std::optional<std::string> dividedByRoot(const Graph& graph, const Uses& uses, Replacement& r,
                                         const std::string& v, const std::string& root) {
  const std::optional<std::size_t> reader = uses.soleReader(root);
  if (!reader) {
    return std::nullopt;
  }
  const Node& node = graph.nodes[*reader];
  if (!node.domain.empty() || node.outputs.size() != 1) {
    return std::nullopt;
  }
  if (node.opType == "Div" && node.inputs.at(0) == v && node.inputs.at(1) == root) {
    r.removed.insert(*reader);
    return node.outputs[0];
  }
  const bool reciprocal = (node.opType == "Reciprocal" && node.inputs.at(0) == root) ||
                          (node.opType == "Div" && node.inputs.at(1) == root &&
                           scalarWeight(graph, node.inputs.at(0)) == 1.0f);
  if (!reciprocal) {
    return std::nullopt;
  }
  const std::optional<std::size_t> times = uses.soleReaderOp(graph, node.outputs[0], "Mul");
  if (!times || otherOperand(graph.nodes[*times], node.outputs[0]) != v) {
    return std::nullopt;
  }
  r.removed.insert({*reader, *times});
  return graph.nodes[*times].outputs[0];
}

}  // namespace

std::optional<Normalized> normalizedBy(const Graph& graph, const Uses& uses, Replacement& r,
                                       const std::string& v, const std::string& meanSquare) {
  const std::optional<std::size_t> add = uses.soleReaderOp(graph, meanSquare, "Add");
  if (!add) {
    return std::nullopt;
  }
  const Node& plus = graph.nodes[*add];
  const std::optional<std::string> epsilon = otherOperand(plus, meanSquare);
  const std::optional<float> eps = epsilon ? scalarWeight(graph, *epsilon) : std::nullopt;
  if (!eps) {
    return std::nullopt;
  }
  const std::optional<std::size_t> sqrt = uses.soleReaderOp(graph, plus.outputs.at(0), "Sqrt");
  if (!sqrt) {
    return std::nullopt;
  }
  r.removed.insert({*add, *sqrt});
  std::optional<std::string> quotient =
      dividedByRoot(graph, uses, r, v, graph.nodes[*sqrt].outputs.at(0));
  if (!quotient) {
    return std::nullopt;
  }
  return Normalized{std::move(*quotient), *eps};
}

std::optional<ColumnOperand> perColumn(const Graph& graph, const Uses& uses, Replacement& r,
                                       const std::string& value, const char* opType,
                                       const std::vector<std::int64_t>& sizes,
                                       std::optional<ElementType> type) {
  const std::optional<std::size_t> node = uses.soleReaderOp(graph, value, opType);
  if (!node || sizes.empty()) {
    return std::nullopt;
  }
  const Node& applied = graph.nodes[*node];
  const std::optional<std::string> operand = otherOperand(applied, value);
  const std::string& result = applied.outputs.at(0);
  if (!operand || staticSizes(graph, *operand) != std::vector<std::int64_t>{sizes.back()} ||
      typeOf(graph, *operand) != type || typeOf(graph, result) != type ||
      staticSizes(graph, result) != sizes) {
    return std::nullopt;
  }
  r.removed.insert(*node);
  r.at = *node;
  return ColumnOperand{*operand, result};
}

}  // namespace trn::graph::detail
