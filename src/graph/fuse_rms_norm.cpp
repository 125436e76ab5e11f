// RMS-norm fusion (see fuse_rms_norm.h): each ReduceMean is the anchor of a match, walked up to
// the square of x and down through eps, the reciprocal square root and the two products.
#include "trn/graph/fuse_rms_norm.h"

#include <optional>
#include <string>

#include "fuse_pattern.h"
#include "norm_pattern.h"

namespace trn::graph {
namespace {

using detail::meanOverLastAxis;
using detail::Replacement;
using detail::squaredValue;
using detail::staticSizes;
using detail::typeOf;
using detail::Uses;

class Matcher {
 public:
  Matcher(const Graph& graph, const Uses& uses) : graph_(graph), uses_(uses) {}

  std::optional<Replacement> match(std::size_t mean) {
    const Node& meanNode = graph_.nodes[mean];
    if (meanNode.opType != "ReduceMean" || !meanNode.domain.empty()) {
      return std::nullopt;
    }
    Replacement r;
    r.removed.insert(mean);
    // Up: the square of x.
    const std::string& squares = meanNode.inputs.at(0);
    const std::optional<std::string> x = squaredValue(graph_, uses_, r, squares, mean);
    if (!x) {
      return std::nullopt;
    }
    const std::optional<std::vector<std::int64_t>> sizes = staticSizes(graph_, *x);
    const std::optional<ElementType> type = typeOf(graph_, *x);
    if (!sizes || !meanOverLastAxis(graph_, meanNode, sizes->size()) ||
        (type != ElementType::kFp32 && type != ElementType::kBf16)) {
      return std::nullopt;
    }
    // Down: + eps, sqrt, the reciprocal and the product with x.
    const std::optional<detail::Normalized> normalized =
        detail::normalizedBy(graph_, uses_, r, *x, meanNode.outputs.at(0));
    if (!normalized) {
      return std::nullopt;
    }
    // The weight.
    const std::optional<detail::ColumnOperand> w =
        detail::perColumn(graph_, uses_, r, normalized->value, "Mul", *sizes, type);
    if (!w) {
      return std::nullopt;
    }
    Node norm;
    norm.name = detail::moduleOf(meanNode.name) + kRmsNormOp;
    norm.domain = kTrnDomain;
    norm.opType = kRmsNormOp;
    norm.inputs = {*x, w->operand};
    norm.outputs = {w->result};
    norm.attributes = {Attribute{"epsilon", normalized->epsilon}};
    r.nodes.push_back(std::move(norm));
    return r;
  }

 private:
  const Graph& graph_;
  const Uses& uses_;
};

}  // namespace

Result<int> fuseRmsNorm(Graph& graph) { return detail::fuseMatches<Matcher>(graph); }

}  // namespace trn::graph
