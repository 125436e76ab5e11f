// Attention fusion (see fuse_attention.h): each Softmax is the anchor of a match, walked up to the
// product of queries and keys and down to the product with the values; a match records the nodes
// it replaces, and the graph is rebuilt once with each fused node where the second product was.
#include "trn/graph/fuse_attention.h"

#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "fuse_pattern.h"

namespace trn::graph {
namespace {

using detail::moduleOf;
using detail::scalarWeight;
using detail::staticSizes;
using detail::typeOf;
using detail::unusedName;
using detail::Uses;

/// Largest head dimension and sequence the flash kernel takes (kernels/attention.h).
constexpr std::int64_t kMaxHeadDim = 128;
constexpr std::int64_t kMaxSequence = 8192;

/// True when `sizes` is [..., s, s] with every leading dimension 1: one [S, S] matrix that
/// broadcasts over batch and heads.
bool isSharedSquare(const std::vector<std::int64_t>& sizes, std::int64_t s) {
  if (sizes.size() < 2 || sizes[sizes.size() - 1] != s || sizes[sizes.size() - 2] != s) {
    return false;
  }
  for (std::size_t d = 0; d + 2 < sizes.size(); ++d) {
    if (sizes[d] != 1) {
      return false;
    }
  }
  return true;
}

/// True when `name` is an initializer of `type` and [..., s, s] (leading dimensions 1) in which
/// key j is visible from query i exactly when j <= i, `visible` reading that from an element
/// (nullopt: neither visible nor masked, so not a mask).
template <typename Visible>
bool holdsCausalPattern(const Graph& graph, const std::string& name, std::int64_t s,
                        ElementType type, std::size_t elementBytes, Visible visible) {
  const Tensor* t = graph.initializer(name);
  if (t == nullptr || t->type != type || !isSharedSquare(t->shape.sizes(), s)) {
    return false;
  }
  const std::byte* data = t->data().data();
  for (std::int64_t i = 0; i < s; ++i) {
    for (std::int64_t j = 0; j < s; ++j) {
      if (visible(data + static_cast<std::size_t>(i * s + j) * elementBytes) != (j <= i)) {
        return false;
      }
    }
  }
  return true;
}

/// A boolean causal mask (what Where keeps): true exactly where the key is at most the query.
bool isCausalMask(const Graph& graph, const std::string& name, std::int64_t s) {
  return holdsCausalPattern(graph, name, s, ElementType::kBool, 1, [](const std::byte* e) {
    return std::optional<bool>(*e != std::byte{0});
  });
}

/// An fp32 causal mask written additively: 0 where the key is at most the query, -inf (or below
/// -1e30) elsewhere; the kernel's causal flag applies it without reading it.
bool isAdditiveCausalMask(const Graph& graph, const std::string& name, std::int64_t s) {
  return holdsCausalPattern(graph, name, s, ElementType::kFp32, sizeof(float),
                            [](const std::byte* e) {
                              float value = 0;
                              std::memcpy(&value, e, sizeof(float));
                              return value == 0.0f     ? std::optional<bool>(true)
                                     : value <= -1e30f ? std::optional<bool>(false)
                                                       : std::nullopt;
                            });
}

/// One attention subgraph to fuse.
struct Match {
  std::set<std::size_t> removed;  ///< the nodes it replaces
  std::size_t at = 0;             ///< where the fused node goes (the second product's index)
  std::string q, k, v, bias;      ///< the fused node's inputs (bias may be empty)
  std::string out;
  float scale = 1.0f;
  bool causal = false;
  /// A Transpose to insert before the fused node, making k [B, H, S, D] from another layout.
  std::optional<Node> keyTranspose;
  std::optional<Value> keyValue;
  std::string name;
};

class Matcher {
 public:
  Matcher(Graph& graph, const Uses& uses) : graph_(graph), uses_(uses) {}

  std::optional<Match> match(std::size_t softmaxIndex) {
    const Node& softmax = graph_.nodes[softmaxIndex];
    const std::string& probabilities = softmax.outputs.at(0);
    auto scoresSizes = staticSizes(graph_, softmax.inputs.at(0));
    if (!scoresSizes || scoresSizes->size() != 4) {
      return std::nullopt;
    }
    const std::int64_t defaultAxis = graph_.opsetVersion >= 13 ? -1 : 1;
    const std::int64_t axis = softmax.intAttribute("axis").value_or(defaultAxis);
    if (axis != 3 && axis != -1) {
      return std::nullopt;
    }
    Match m;
    m.removed.insert(softmaxIndex);
    m.name = moduleOf(softmax.name) + kFlashAttentionOp;
    // Down: the product with the values.
    auto readers = uses_.readers.find(probabilities);
    if (readers == uses_.readers.end() || !uses_.onlyReader(probabilities, readers->second[0])) {
      return std::nullopt;
    }
    const std::size_t pv = readers->second[0];
    const Node& pvNode = graph_.nodes[pv];
    if (pvNode.opType != "MatMul" || !pvNode.domain.empty() ||
        pvNode.inputs.at(0) != probabilities) {
      return std::nullopt;
    }
    m.removed.insert(pv);
    m.at = pv;
    m.out = pvNode.outputs.at(0);
    // Up: mask, scale, the product of queries and keys.
    std::string scores = softmax.inputs.at(0);
    if (!matchMask(m, scores, softmaxIndex, (*scoresSizes)[3])) {
      return std::nullopt;
    }
    return finish(m, pv, scores);
  }

 private:
  /// Steps over an additive mask or a causal Where in front of `reader` (the Softmax): `scores`
  /// becomes the value before it. False when a mask is there but not one the kernel takes.
  bool matchMask(Match& m, std::string& scores, std::size_t reader, std::int64_t s) {
    if (auto add = uses_.producedBy(graph_, scores, "Add")) {
      if (!uses_.onlyReader(scores, reader)) {
        return false;
      }
      const Node& node = graph_.nodes[*add];
      for (std::size_t side = 0; side < 2; ++side) {
        const std::string& mask = node.inputs.at(1 - side);
        auto maskSizes = staticSizes(graph_, mask);
        if (maskSizes && isSharedSquare(*maskSizes, s) && scaledProduct(node.inputs.at(side))) {
          if (isAdditiveCausalMask(graph_, mask, s)) {
            m.causal = true;
          } else {
            m.bias = mask;
          }
          m.removed.insert(*add);
          scores = node.inputs.at(side);
          maskReader_ = *add;
          return true;
        }
      }
      return false;
    }
    if (auto where = uses_.producedBy(graph_, scores, "Where")) {
      const Node& node = graph_.nodes[*where];
      const std::optional<float> fill = scalarWeight(graph_, node.inputs.at(2));
      if (!uses_.onlyReader(scores, reader) || !fill || *fill > -1e30f ||
          !isCausalMask(graph_, node.inputs.at(0), s)) {
        return false;
      }
      m.causal = true;
      m.removed.insert(*where);
      scores = node.inputs.at(1);
      maskReader_ = *where;
      return true;
    }
    maskReader_ = reader;
    return true;
  }

  /// True when `value` is a (scaled) MatMul: what the mask is added to.
  bool scaledProduct(const std::string& value) const {
    if (uses_.producedBy(graph_, value, "MatMul")) {
      return true;
    }
    for (const char* op : {"Div", "Mul"}) {
      if (auto n = uses_.producedBy(graph_, value, op)) {
        const Node& node = graph_.nodes[*n];
        for (const std::string& in : node.inputs) {
          if (uses_.producedBy(graph_, in, "MatMul")) {
            return true;
          }
        }
      }
    }
    return false;
  }

  /// The scale and the product of queries and keys under `scores`; then the keys' and values'
  /// layouts. Fills the rest of `m`.
  std::optional<Match> finish(Match& m, std::size_t pv, std::string scores) {
    std::size_t reader = maskReader_;
    if (auto div = uses_.producedBy(graph_, scores, "Div")) {
      const Node& node = graph_.nodes[*div];
      const std::optional<float> c = scaleConstant(m, node.inputs.at(1), *div);
      if (!c || *c == 0.0f || !uses_.onlyReader(scores, reader)) {
        return std::nullopt;
      }
      m.scale = static_cast<float>(1.0 / static_cast<double>(*c));
      m.removed.insert(*div);
      reader = *div;
      scores = node.inputs.at(0);
    } else if (auto mul = uses_.producedBy(graph_, scores, "Mul")) {
      const Node& node = graph_.nodes[*mul];
      const std::size_t side = scaleConstant(m, node.inputs.at(1), *mul) ? 1 : 0;
      const std::optional<float> c = scaleConstant(m, node.inputs.at(side), *mul);
      if (!c || !uses_.onlyReader(scores, reader)) {
        return std::nullopt;
      }
      m.scale = *c;
      m.removed.insert(*mul);
      reader = *mul;
      scores = node.inputs.at(1 - side);
    }
    auto qk = uses_.producedBy(graph_, scores, "MatMul");
    if (!qk || !uses_.onlyReader(scores, reader)) {
      return std::nullopt;
    }
    m.removed.insert(*qk);
    const Node& qkNode = graph_.nodes[*qk];
    m.q = qkNode.inputs.at(0);
    auto q = staticSizes(graph_, m.q);
    auto keysT = staticSizes(graph_, qkNode.inputs.at(1));
    if (!q || q->size() != 4 || !keysT || keysT->size() != 4) {
      return std::nullopt;
    }
    const std::int64_t b = (*q)[0];
    const std::int64_t h = (*q)[1];
    const std::int64_t s = (*q)[2];
    const std::int64_t d = (*q)[3];
    if (*keysT != std::vector<std::int64_t>{b, h, d, s} || d > kMaxHeadDim || s > kMaxSequence) {
      return std::nullopt;
    }
    auto keys = untransposedKeys(m, qkNode.inputs.at(1), *qk);
    if (!keys) {
      return std::nullopt;
    }
    m.k = *keys;
    const std::string& values = graph_.nodes[pv].inputs.at(1);
    if (staticSizes(graph_, values) != std::vector<std::int64_t>{b, h, s, d}) {
      return std::nullopt;
    }
    m.v = unexpandedHeads(m, values, pv);
    auto k = m.keyValue ? std::optional(m.keyValue->shape->sizes()) : staticSizes(graph_, m.k);
    auto v = staticSizes(graph_, m.v);
    if (!k || !v || *k != *v || (*k)[1] == 0 || h % (*k)[1] != 0) {
      return std::nullopt;
    }
    // One floating-point type the kernel computes in, for every operand and the result.
    const std::optional<ElementType> type = typeOf(graph_, m.q);
    if (type != ElementType::kFp32 && type != ElementType::kBf16) {
      return std::nullopt;
    }
    for (const std::string& operand : {m.k, m.v, m.out, m.bias}) {
      if (!operand.empty() && !(m.keyValue && operand == m.keyValue->name) &&
          typeOf(graph_, operand) != type) {
        return std::nullopt;
      }
    }
    return m;
  }

  /// The value of the one-element scale `value` read by node `reader`: a weight, or computed from
  /// weights by Pow or Sqrt (PyTorch exports `d ** -0.5` as Pow of two constants), that node then
  /// going with the match when nothing else reads its result.
  std::optional<float> scaleConstant(Match& m, const std::string& value, std::size_t reader) {
    if (std::optional<float> weight = scalarWeight(graph_, value)) {
      return weight;
    }
    std::optional<double> computed;
    std::optional<std::size_t> producer;
    if ((producer = uses_.producedBy(graph_, value, "Pow"))) {
      const Node& node = graph_.nodes[*producer];
      const std::optional<float> base = scalarWeight(graph_, node.inputs.at(0));
      const std::optional<float> exponent = scalarWeight(graph_, node.inputs.at(1));
      if (base && exponent) {
        computed = std::pow(static_cast<double>(*base), static_cast<double>(*exponent));
      }
    } else if ((producer = uses_.producedBy(graph_, value, "Sqrt"))) {
      if (const std::optional<float> x =
              scalarWeight(graph_, graph_.nodes[*producer].inputs.at(0))) {
        computed = std::sqrt(static_cast<double>(*x));
      }
    }
    if (!computed || !std::isfinite(*computed)) {
      return std::nullopt;
    }
    if (uses_.onlyReader(value, reader)) {
      m.removed.insert(*producer);
    }
    return static_cast<float>(*computed);
  }

  /// The keys as [B, H, S, D] from k^T, the product's second operand: the input of its
  /// Transpose when that swaps the last two axes (then with the head expansion folded away), or
  /// a new Transpose of that input otherwise.
  std::optional<std::string> untransposedKeys(Match& m, const std::string& keysT,
                                              std::size_t reader) {
    auto t = uses_.producedBy(graph_, keysT, "Transpose");
    if (!t || !uses_.onlyReader(keysT, reader)) {
      return std::nullopt;
    }
    const Node& node = graph_.nodes[*t];
    std::vector<std::int64_t> perm =
        node.intsAttribute("perm").value_or(std::vector<std::int64_t>{3, 2, 1, 0});
    if (perm.size() != 4) {
      return std::nullopt;
    }
    std::swap(perm[2], perm[3]);
    m.removed.insert(*t);
    const std::string& source = node.inputs.at(0);
    if (perm == std::vector<std::int64_t>{0, 1, 2, 3}) {
      return unexpandedHeads(m, source, *t);
    }
    auto sourceSizes = staticSizes(graph_, source);
    if (!sourceSizes) {
      return std::nullopt;
    }
    std::vector<std::int64_t> sizes;
    for (const std::int64_t p : perm) {
      sizes.push_back((*sourceSizes)[static_cast<std::size_t>(p)]);
    }
    Node transpose;
    transpose.name = node.name;
    transpose.opType = "Transpose";
    transpose.inputs = {source};
    transpose.outputs = {unusedName(graph_, keysT + "_keys")};
    transpose.attributes = {Attribute{"perm", perm}};
    m.keyValue = Value{transpose.outputs[0], typeOf(graph_, source), Shape::of(sizes)};
    m.keyTranspose = std::move(transpose);
    return m.keyValue->name;
  }

  /// `value` [B, H, S, D] with PyTorch's grouped-query expansion undone: X [B, Hkv, S, D] when
  /// value = Reshape(Expand(Unsqueeze(X, axes=[2]))) read by nothing else, else value itself.
  std::string unexpandedHeads(Match& m, const std::string& value, std::size_t reader) {
    auto reshape = uses_.producedBy(graph_, value, "Reshape");
    if (!reshape || !uses_.onlyReader(value, reader)) {
      return value;
    }
    const std::string& expanded = graph_.nodes[*reshape].inputs.at(0);
    auto expand = uses_.producedBy(graph_, expanded, "Expand");
    if (!expand || !uses_.onlyReader(expanded, *reshape)) {
      return value;
    }
    const std::string& unsqueezed = graph_.nodes[*expand].inputs.at(0);
    auto unsqueeze = uses_.producedBy(graph_, unsqueezed, "Unsqueeze");
    if (!unsqueeze || !uses_.onlyReader(unsqueezed, *expand)) {
      return value;
    }
    const std::string& source = graph_.nodes[*unsqueeze].inputs.at(0);
    auto out = staticSizes(graph_, value);
    auto wide = staticSizes(graph_, expanded);
    auto narrow = staticSizes(graph_, unsqueezed);
    auto x = staticSizes(graph_, source);
    if (!out || !wide || !narrow || !x || wide->size() != 5 || x->size() != 4) {
      return value;
    }
    const std::vector<std::int64_t> expected = {(*x)[0], (*x)[1], 1, (*x)[2], (*x)[3]};
    const std::int64_t rep = (*wide)[2];
    if (*narrow != expected ||
        *wide != std::vector<std::int64_t>{(*x)[0], (*x)[1], rep, (*x)[2], (*x)[3]} ||
        *out != std::vector<std::int64_t>{(*x)[0], (*x)[1] * rep, (*x)[2], (*x)[3]}) {
      return value;
    }
    m.removed.insert({*reshape, *expand, *unsqueeze});
    return source;
  }

  Graph& graph_;
  const Uses& uses_;
  std::size_t maskReader_ = 0;  ///< the node reading the scaled scores
};

}  // namespace

Result<int> fuseAttention(Graph& graph) {
  const Uses uses(graph);
  Matcher matcher(graph, uses);
  detail::Rewrite rewrite;
  for (std::size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    if (node.opType != "Softmax" || !node.domain.empty()) {
      continue;
    }
    std::optional<Match> m = matcher.match(n);
    if (!m) {
      continue;
    }
    detail::Replacement r;
    r.removed = m->removed;
    r.at = m->at;
    if (m->keyTranspose) {
      r.nodes.push_back(*m->keyTranspose);
      r.values.push_back(*m->keyValue);
    }
    Node attention;
    attention.name = m->name;
    attention.domain = kTrnDomain;
    attention.opType = kFlashAttentionOp;
    attention.inputs = {m->q, m->k, m->v};
    if (!m->bias.empty()) {
      attention.inputs.push_back(m->bias);
    }
    attention.outputs = {m->out};
    attention.attributes = {Attribute{"causal", std::int64_t{m->causal ? 1 : 0}},
                            Attribute{"scale", m->scale}};
    r.nodes.push_back(std::move(attention));
    rewrite.claim(std::move(r));
  }
  return rewrite.apply(graph);
}

}  // namespace trn::graph
