// Rotary-embedding fusion (see fuse_rope.h): each Concat is the anchor of a match, walked up to
// rotate_half's slices of x and down through the products with the tables and their sum.
#include "trn/graph/fuse_rope.h"

#include <optional>
#include <string>

#include "fuse_pattern.h"

namespace trn::graph {
namespace {

using detail::otherOperand;
using detail::Replacement;
using detail::staticSizes;
using detail::typeOf;
using detail::Uses;

/// Largest head dimension the rope kernel takes (one PSUM bank of fp32 per token row).
constexpr std::int64_t kMaxHeadDim = 512;

class Matcher {
 public:
  Matcher(const Graph& graph, const Uses& uses) : graph_(graph), uses_(uses) {}

  std::optional<Replacement> match(std::size_t concat) {
    const Node& cat = graph_.nodes[concat];
    if (cat.opType != "Concat" || !cat.domain.empty() || cat.inputs.size() != 2) {
      return std::nullopt;
    }
    Replacement r;
    r.removed.insert(concat);
    // Up: Neg(x[..., D/2:]) and x[..., :D/2].
    const std::optional<std::size_t> neg = uses_.producedBy(graph_, cat.inputs[0], "Neg");
    if (!neg || !uses_.onlyReader(cat.inputs[0], concat)) {
      return std::nullopt;
    }
    r.removed.insert(*neg);
    const std::string& upper = graph_.nodes[*neg].inputs.at(0);
    const std::optional<std::string> x = sliceSource(r, upper, *neg, true);
    if (!x || sliceSource(r, cat.inputs[1], concat, false) != x) {
      return std::nullopt;
    }
    const std::optional<std::vector<std::int64_t>> sizes = staticSizes(graph_, *x);
    const std::optional<ElementType> type = typeOf(graph_, *x);
    if (!sizes || sizes->size() < 2 || (type != ElementType::kFp32 && type != ElementType::kBf16)) {
      return std::nullopt;
    }
    const std::int64_t s = (*sizes)[sizes->size() - 2];
    const std::int64_t d = sizes->back();
    const auto rank = static_cast<std::int64_t>(sizes->size());
    const std::int64_t axis = cat.intAttribute("axis").value_or(0);
    if (d % 2 != 0 || d > kMaxHeadDim || (axis != -1 && axis != rank - 1) ||
        halfOf(upper) != d / 2 || staticSizes(graph_, cat.inputs[1]) != halfSizes(*sizes)) {
      return std::nullopt;
    }
    // Down: times sin, plus x times cos.
    const std::optional<std::size_t> sinMul = uses_.soleReaderOp(graph_, cat.outputs.at(0), "Mul");
    if (!sinMul) {
      return std::nullopt;
    }
    const std::string& rotated = graph_.nodes[*sinMul].outputs[0];
    const std::optional<std::string> sin = otherOperand(graph_.nodes[*sinMul], cat.outputs[0]);
    const std::optional<std::size_t> add = uses_.soleReaderOp(graph_, rotated, "Add");
    if (!sin || !add) {
      return std::nullopt;
    }
    const Node& sum = graph_.nodes[*add];
    const std::optional<std::string> other = otherOperand(sum, rotated);
    const std::optional<std::size_t> cosMul =
        other ? uses_.producedBy(graph_, *other, "Mul") : std::nullopt;
    if (!cosMul || !uses_.onlyReader(*other, *add)) {
      return std::nullopt;
    }
    const std::optional<std::string> cos = otherOperand(graph_.nodes[*cosMul], *x);
    const std::string& out = sum.outputs.at(0);
    if (!cos || !isTable(*cos, s, d, *type) || !isTable(*sin, s, d, *type) ||
        staticSizes(graph_, out) != sizes || typeOf(graph_, out) != type) {
      return std::nullopt;
    }
    r.removed.insert({*sinMul, *cosMul, *add});
    r.at = *add;
    Node rope;
    rope.name = detail::moduleOf(cat.name) + kRopeOp;
    rope.domain = kTrnDomain;
    rope.opType = kRopeOp;
    rope.inputs = {*x, *cos, *sin};
    rope.outputs = {out};
    r.nodes.push_back(std::move(rope));
    return r;
  }

 private:
  /// `sizes` with the last dimension halved.
  static std::vector<std::int64_t> halfSizes(std::vector<std::int64_t> sizes) {
    sizes.back() /= 2;
    return sizes;
  }

  /// The last dimension of `value`, or -1.
  std::int64_t halfOf(const std::string& value) const {
    const std::optional<std::vector<std::int64_t>> sizes = staticSizes(graph_, value);
    return sizes && !sizes->empty() ? sizes->back() : -1;
  }

  /// The integers of input `input` of `node` known at compile time.
  std::optional<std::vector<std::int64_t>> known(const Node& node, std::size_t input) const {
    if (!node.hasInput(input)) {
      return std::nullopt;
    }
    auto it = graph_.knownIntegers.find(node.inputs[input]);
    return it == graph_.knownIntegers.end() ? std::nullopt : std::optional(it->second);
  }

  /// The x of `value` = Slice(x) read by `reader` alone: the upper half x[..., D/2:] when
  /// `upper`, else the lower x[..., :D/2], along the last axis with step 1. The Slice joins `r`.
  std::optional<std::string> sliceSource(Replacement& r, const std::string& value,
                                         std::size_t reader, bool upper) const {
    const std::optional<std::size_t> slice = uses_.producedBy(graph_, value, "Slice");
    if (!slice || !uses_.onlyReader(value, reader)) {
      return std::nullopt;
    }
    const Node& node = graph_.nodes[*slice];
    const std::optional<std::vector<std::int64_t>> sizes = staticSizes(graph_, node.inputs.at(0));
    const std::optional<std::vector<std::int64_t>> starts = known(node, 1);
    const std::optional<std::vector<std::int64_t>> ends = known(node, 2);
    const std::optional<std::vector<std::int64_t>> axes = known(node, 3);
    const std::optional<std::vector<std::int64_t>> steps = known(node, 4);
    if (!sizes || sizes->empty() || !starts || !ends || starts->size() != 1 || ends->size() != 1 ||
        (node.hasInput(3) && (!axes || axes->size() != 1)) ||
        (node.hasInput(4) && (!steps || *steps != std::vector<std::int64_t>{1}))) {
      return std::nullopt;
    }
    const auto rank = static_cast<std::int64_t>(sizes->size());
    const std::int64_t axis = axes ? (*axes)[0] : 0;
    const std::int64_t d = sizes->back();
    const bool lastAxis = axis == -1 || axis == rank - 1;
    const bool halves = upper ? ((*starts)[0] == d / 2 || (*starts)[0] == -d / 2) && (*ends)[0] >= d
                              : (*starts)[0] == 0 && (*ends)[0] == d / 2;
    if (!lastAxis || !halves) {
      return std::nullopt;
    }
    r.removed.insert(*slice);
    return node.inputs[0];
  }

  /// True when `table` holds [S, D] elements as [..., S, D] with leading dimensions 1, of `type`.
  bool isTable(const std::string& table, std::int64_t s, std::int64_t d, ElementType type) const {
    const std::optional<std::vector<std::int64_t>> sizes = staticSizes(graph_, table);
    if (!sizes || sizes->size() < 2 || typeOf(graph_, table) != type ||
        (*sizes)[sizes->size() - 2] != s || sizes->back() != d) {
      return false;
    }
    for (std::size_t i = 0; i + 2 < sizes->size(); ++i) {
      if ((*sizes)[i] != 1) {
        return false;
      }
    }
    return true;
  }

  const Graph& graph_;
  const Uses& uses_;
};

}  // namespace

Result<int> fuseRope(Graph& graph) { return detail::fuseMatches<Matcher>(graph); }

}  // namespace trn::graph
