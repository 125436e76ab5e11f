// RMS-norm fusion (see fuse_rms_norm.h): each ReduceMean is the anchor of a match, walked up to
// the square of x and down through eps, the reciprocal square root and the two products.
#include "trn/graph/fuse_rms_norm.h"

#include <optional>
#include <string>

#include "fuse_pattern.h"

namespace trn::graph {
namespace {

using detail::otherOperand;
using detail::Replacement;
using detail::scalarWeight;
using detail::staticSizes;
using detail::typeOf;
using detail::Uses;

class Matcher {
 public:
  Matcher(const Graph& graph, const Uses& uses) : graph_(graph), uses_(uses) {}

  std::optional<Replacement> match(std::size_t mean) {
    const Node& meanNode = graph_.nodes[mean];
    if (meanNode.opType != "ReduceMean" || !meanNode.domain.empty() ||
        meanNode.intAttribute("keepdims").value_or(1) != 1) {
      return std::nullopt;
    }
    Replacement r;
    r.removed.insert(mean);
    // Up: the square of x.
    const std::string& squares = meanNode.inputs.at(0);
    const std::optional<std::string> x = squared(r, squares, mean);
    if (!x) {
      return std::nullopt;
    }
    const std::optional<std::vector<std::int64_t>> sizes = staticSizes(graph_, *x);
    const std::optional<ElementType> type = typeOf(graph_, *x);
    if (!sizes || sizes->empty() || !lastAxis(meanNode, sizes->size()) ||
        (type != ElementType::kFp32 && type != ElementType::kBf16)) {
      return std::nullopt;
    }
    // Down: + eps, sqrt, the reciprocal and the product with x.
    std::optional<std::size_t> node = uses_.soleReaderOp(graph_, meanNode.outputs.at(0), "Add");
    if (!node) {
      return std::nullopt;
    }
    const Node& add = graph_.nodes[*node];
    const std::optional<std::string> epsilon = otherOperand(add, meanNode.outputs.at(0));
    const std::optional<float> eps = epsilon ? scalarWeight(graph_, *epsilon) : std::nullopt;
    if (!eps) {
      return std::nullopt;
    }
    r.removed.insert(*node);
    const std::optional<std::size_t> sqrt = uses_.soleReaderOp(graph_, add.outputs.at(0), "Sqrt");
    if (!sqrt) {
      return std::nullopt;
    }
    r.removed.insert(*sqrt);
    const std::optional<std::string> normalized = scaled(r, *x, graph_.nodes[*sqrt].outputs.at(0));
    if (!normalized) {
      return std::nullopt;
    }
    // The weight.
    const std::optional<std::size_t> times = uses_.soleReaderOp(graph_, *normalized, "Mul");
    if (!times) {
      return std::nullopt;
    }
    const Node& mul = graph_.nodes[*times];
    const std::optional<std::string> w = otherOperand(mul, *normalized);
    const std::string& out = mul.outputs.at(0);
    if (!w || staticSizes(graph_, *w) != std::vector<std::int64_t>{sizes->back()} ||
        typeOf(graph_, *w) != type || typeOf(graph_, out) != type ||
        staticSizes(graph_, out) != sizes) {
      return std::nullopt;
    }
    r.removed.insert(*times);
    r.at = *times;
    Node norm;
    norm.name = detail::moduleOf(meanNode.name) + kRmsNormOp;
    norm.domain = kTrnDomain;
    norm.opType = kRmsNormOp;
    norm.inputs = {*x, *w};
    norm.outputs = {out};
    norm.attributes = {Attribute{"epsilon", *eps}};
    r.nodes.push_back(std::move(norm));
    return r;
  }

 private:
  /// True when the ReduceMean `node` reduces the last axis alone of a rank-`rank` tensor.
  bool lastAxis(const Node& node, std::size_t rank) const {
    const std::optional<std::vector<std::int64_t>> axes = graph_.reductionAxes(node);
    const auto last = static_cast<std::int64_t>(rank) - 1;
    return axes && axes->size() == 1 && ((*axes)[0] == -1 || (*axes)[0] == last);
  }

  /// x when `squares` is Pow(x, 2) or Mul(x, x) read by `mean` alone; that node joins `r`.
  std::optional<std::string> squared(Replacement& r, const std::string& squares,
                                     std::size_t mean) const {
    if (!uses_.onlyReader(squares, mean)) {
      return std::nullopt;
    }
    std::optional<std::size_t> node = uses_.producedBy(graph_, squares, "Pow");
    if (node) {
      const std::optional<float> exponent = scalarWeight(graph_, graph_.nodes[*node].inputs.at(1));
      if (exponent != 2.0f) {
        return std::nullopt;
      }
    } else {
      node = uses_.producedBy(graph_, squares, "Mul");
      if (!node || graph_.nodes[*node].inputs.at(0) != graph_.nodes[*node].inputs.at(1)) {
        return std::nullopt;
      }
    }
    r.removed.insert(*node);
    return graph_.nodes[*node].inputs.at(0);
  }

  /// x times the reciprocal of `root` (Div(1, root) or Reciprocal(root), then Mul with x), or x
  /// divided by it; returns that value, its nodes joining `r`.
  std::optional<std::string> scaled(Replacement& r, const std::string& x,
                                    const std::string& root) const {
    const std::optional<std::size_t> reader = uses_.soleReader(root);
    if (!reader) {
      return std::nullopt;
    }
    const Node& node = graph_.nodes[*reader];
    if (!node.domain.empty() || node.outputs.size() != 1) {
      return std::nullopt;
    }
    if (node.opType == "Div" && node.inputs.at(0) == x && node.inputs.at(1) == root) {
      r.removed.insert(*reader);
      return node.outputs[0];
    }
    const bool reciprocal = (node.opType == "Reciprocal" && node.inputs.at(0) == root) ||
                            (node.opType == "Div" && node.inputs.at(1) == root &&
                             scalarWeight(graph_, node.inputs.at(0)) == 1.0f);
    if (!reciprocal) {
      return std::nullopt;
    }
    const std::optional<std::size_t> times = uses_.soleReaderOp(graph_, node.outputs[0], "Mul");
    if (!times || otherOperand(graph_.nodes[*times], node.outputs[0]) != x) {
      return std::nullopt;
    }
    const Node& mul = graph_.nodes[*times];
    r.removed.insert({*reader, *times});
    return mul.outputs[0];
  }

  const Graph& graph_;
  const Uses& uses_;
};

}  // namespace

Result<int> fuseRmsNorm(Graph& graph) { return detail::fuseMatches<Matcher>(graph); }

}  // namespace trn::graph
