// Layer-norm fusion (see fuse_layer_norm.h): each ReduceMean of x is the anchor of a match, walked
// down through x - mean, its mean square plus eps, the division by its root, the weight and the
// bias.
#include "trn/graph/fuse_layer_norm.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "fuse_pattern.h"
#include "norm_pattern.h"

namespace trn::graph {
namespace {

using detail::ColumnOperand;
using detail::Replacement;
using detail::Uses;

class Matcher {
 public:
  Matcher(const Graph& graph, const Uses& uses) : graph_(graph), uses_(uses) {}

  std::optional<Replacement> match(std::size_t mean) {
    const Node& meanNode = graph_.nodes[mean];
    if (meanNode.opType != "ReduceMean" || !meanNode.domain.empty()) {
      return std::nullopt;
    }
    const std::string& x = meanNode.inputs.at(0);
    const std::optional<std::vector<std::int64_t>> sizes = detail::staticSizes(graph_, x);
    const std::optional<ElementType> type = detail::typeOf(graph_, x);
    if (!sizes || !detail::meanOverLastAxis(graph_, meanNode, sizes->size()) ||
        (type != ElementType::kFp32 && type != ElementType::kBf16)) {
      return std::nullopt;
    }
    Replacement r;
    r.removed.insert(mean);
    // d = x - mean, read by its square and by the division alone.
    const std::optional<std::size_t> sub =
        uses_.soleReaderOp(graph_, meanNode.outputs.at(0), "Sub");
    if (!sub || graph_.nodes[*sub].inputs.at(0) != x) {
      return std::nullopt;
    }
    r.removed.insert(*sub);
    const std::string& d = graph_.nodes[*sub].outputs.at(0);
    auto readers = uses_.readers.find(d);
    if (uses_.outputs.contains(d) || readers == uses_.readers.end()) {
      return std::nullopt;
    }
    // The variance: the one reader of d whose output is the mean square of d.
    std::optional<std::string> variance;
    for (const std::size_t reader : readers->second) {
      const std::string& squares = graph_.nodes[reader].outputs.at(0);
      const std::optional<std::size_t> varianceNode =
          uses_.soleReaderOp(graph_, squares, "ReduceMean");
      if (!varianceNode ||
          !detail::meanOverLastAxis(graph_, graph_.nodes[*varianceNode], sizes->size())) {
        continue;
      }
      Replacement tried = r;
      if (detail::squaredValue(graph_, uses_, tried, squares, *varianceNode) == d) {
        tried.removed.insert(*varianceNode);
        r = std::move(tried);
        variance = graph_.nodes[*varianceNode].outputs.at(0);
        break;
      }
    }
    if (!variance) {
      return std::nullopt;
    }
    const std::optional<detail::Normalized> normalized =
        detail::normalizedBy(graph_, uses_, r, d, *variance);
    if (!normalized || !readByMatchAlone(d, r)) {
      return std::nullopt;
    }
    const std::optional<ColumnOperand> weight =
        detail::perColumn(graph_, uses_, r, normalized->value, "Mul", *sizes, type);
    if (!weight) {
      return std::nullopt;
    }
    std::string out = weight->result;
    Node norm;
    norm.name = detail::moduleOf(meanNode.name) + "LayerNormalization";
    norm.opType = "LayerNormalization";
    norm.inputs = {x, weight->operand};
    if (const std::optional<ColumnOperand> bias =
            detail::perColumn(graph_, uses_, r, weight->result, "Add", *sizes, type)) {
      norm.inputs.push_back(bias->operand);
      out = bias->result;
    }
    norm.outputs = {out};
    norm.attributes = {Attribute{"axis", std::int64_t{-1}},
                       Attribute{"epsilon", normalized->epsilon}};
    r.nodes.push_back(std::move(norm));
    return r;
  }

 private:
  /// True when every node reading `value` is one of `r`'s.
  bool readByMatchAlone(const std::string& value, const Replacement& r) const {
    const std::vector<std::size_t>& readers = uses_.readers.at(value);
    return std::all_of(readers.begin(), readers.end(),
                       [&](std::size_t reader) { return r.removed.contains(reader); });
  }

  const Graph& graph_;
  const Uses& uses_;
};

}  // namespace

Result<int> fuseLayerNorm(Graph& graph) { return detail::fuseMatches<Matcher>(graph); }

}  // namespace trn::graph
