// Linear fusion (see fuse_linear.h): each MatMul or Gemm against a 2-D weight is the anchor of a
// match, walked down through its bias and its activation.
#include "trn/graph/fuse_linear.h"

#include <algorithm>
#include <cmath>
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

/// One product to fuse.
struct Match {
  Replacement r;
  std::string x, w, bias, out;
  std::string activation;
  std::string multiplier;  ///< m of out = m * (x @ W), a SwiGLU MLP's gate
};

class Matcher {
 public:
  Matcher(const Graph& graph, const Uses& uses) : graph_(graph), uses_(uses) {}

  std::optional<Replacement> match(std::size_t anchor) {
    const Node& node = graph_.nodes[anchor];
    Match m;
    if (!product(m, node)) {
      return std::nullopt;
    }
    m.r.removed.insert(anchor);
    m.r.at = anchor;
    m.out = node.outputs.at(0);
    const std::optional<std::vector<std::int64_t>> sizes = staticSizes(graph_, m.out);
    const std::optional<ElementType> type = typeOf(graph_, m.x);
    if (!sizes || sizes->empty() || (type != ElementType::kFp32 && type != ElementType::kBf16) ||
        typeOf(graph_, m.out) != type) {
      return std::nullopt;
    }
    if (m.bias.empty()) {
      addBias(m, sizes->back());
    }
    addActivation(m);
    if (m.bias.empty() && m.activation.empty()) {
      addMultiplier(m, *sizes, *type);
    }
    if (m.bias.empty() && m.activation.empty() && m.multiplier.empty()) {
      return std::nullopt;
    }
    if ((!m.bias.empty() && typeOf(graph_, m.bias) != type) ||
        staticSizes(graph_, m.out) != sizes || typeOf(graph_, m.out) != type) {
      return std::nullopt;
    }
    Node linear;
    linear.name = node.name;
    linear.domain = kTrnDomain;
    linear.opType = kLinearOp;
    linear.inputs = {m.x, m.w};
    if (!m.bias.empty() || !m.multiplier.empty()) {
      linear.inputs.push_back(m.bias);
    }
    if (!m.multiplier.empty()) {
      linear.inputs.push_back(m.multiplier);
    }
    linear.outputs = {m.out};
    linear.attributes = {Attribute{"activation", m.activation}};
    m.r.nodes.push_back(std::move(linear));
    return std::move(m.r);
  }

 private:
  /// True when `node` is a product of activations and a 2-D weight initializer the fused node
  /// takes: MatMul, or Gemm as the layout pass leaves nn.Linear's (with its bias, if 1-D).
  bool product(Match& m, const Node& node) const {
    if (!node.domain.empty() || node.outputs.size() != 1 ||
        (node.opType != "MatMul" && node.opType != "Gemm") || !node.hasInput(1)) {
      return false;
    }
    m.x = node.inputs[0];
    m.w = node.inputs[1];
    // The weight: an initializer, or a graph input of x's type (a model exported without its
    // weights, as the Llama-3-8B-shaped one is).
    const std::optional<std::vector<std::int64_t>> ws = staticSizes(graph_, m.w);
    const bool weight =
        graph_.initializer(m.w) != nullptr ||
        (std::find(graph_.inputs.begin(), graph_.inputs.end(), m.w) != graph_.inputs.end() &&
         typeOf(graph_, m.w) == typeOf(graph_, m.x));
    const std::optional<std::vector<std::int64_t>> x = staticSizes(graph_, m.x);
    if (!weight || !ws || ws->size() != 2 || !x || x->size() < 2 || x->back() != (*ws)[0]) {
      return false;
    }
    if (node.opType == "MatMul") {
      return true;
    }
    if (node.floatAttribute("alpha").value_or(1.0f) != 1.0f ||
        node.floatAttribute("beta").value_or(1.0f) != 1.0f ||
        node.intAttribute("transA").value_or(0) != 0 ||
        node.intAttribute("transB").value_or(0) != 0 || x->size() != 2) {
      return false;
    }
    if (node.hasInput(2)) {
      const std::optional<std::vector<std::int64_t>> b = staticSizes(graph_, node.inputs[2]);
      if (b != std::vector<std::int64_t>{(*ws)[1]}) {
        return false;
      }
      m.bias = node.inputs[2];
    }
    return true;
  }

  /// Takes the Add of a bias [n] to m.out, when m.out's only reader is one.
  void addBias(Match& m, std::int64_t n) {
    const std::optional<std::size_t> add = uses_.soleReaderOp(graph_, m.out, "Add");
    if (!add) {
      return;
    }
    const Node& node = graph_.nodes[*add];
    const std::optional<std::string> bias = otherOperand(node, m.out);
    if (!bias || staticSizes(graph_, *bias) != std::vector{n}) {
      return;
    }
    m.bias = *bias;
    m.r.removed.insert(*add);
    m.r.at = *add;
    m.out = node.outputs.at(0);
  }

  /// Takes the activation of m.out, when one reads it alone (or the erf GELU's nodes do).
  void addActivation(Match& m) {
    const auto readers = uses_.readers.find(m.out);
    if (readers == uses_.readers.end() || uses_.outputs.contains(m.out)) {
      return;
    }
    if (const std::optional<std::size_t> reader = uses_.soleReader(m.out)) {
      const Node& node = graph_.nodes[*reader];
      const bool exactGelu = node.opType == "Gelu" && node.attribute("approximate") == nullptr;
      if (node.domain.empty() && node.outputs.size() == 1 &&
          (node.opType == "Relu" || node.opType == "Sigmoid" || node.opType == "Tanh" ||
           exactGelu)) {
        m.activation = node.opType;
        m.r.removed.insert(*reader);
        m.r.at = *reader;
        m.out = node.outputs.at(0);
      }
      return;
    }
    if (!silu(m, readers->second)) {
      erfGelu(m, readers->second);
    }
  }

  /// Takes Mul(out, m) or Mul(m, out), out's only reader, for m another value of out's sizes
  /// and type: a SwiGLU MLP's gate times its up projection.
  void addMultiplier(Match& m, const std::vector<std::int64_t>& sizes, ElementType type) {
    const std::optional<std::size_t> reader = uses_.soleReaderOp(graph_, m.out, "Mul");
    if (!reader) {
      return;
    }
    const Node& mul = graph_.nodes[*reader];
    const std::optional<std::string> other = otherOperand(mul, m.out);
    if (!other || *other == m.out || staticSizes(graph_, *other) != sizes ||
        typeOf(graph_, *other) != type) {
      return;
    }
    m.multiplier = *other;
    m.r.removed.insert(*reader);
    m.r.at = *reader;
    m.out = mul.outputs.at(0);
  }

  /// v * sigmoid(v) as PyTorch's nn.SiLU (F.silu) exports it, read by `readers`: true when it
  /// matched.
  bool silu(Match& m, const std::vector<std::size_t>& readers) {
    if (readers.size() != 2) {
      return false;
    }
    const std::size_t first = graph_.nodes[readers[0]].opType == "Sigmoid" ? 0 : 1;
    const std::size_t sigmoid = readers[first];
    const std::size_t mul = readers[1 - first];
    const Node& sigmoidNode = graph_.nodes[sigmoid];
    const Node& mulNode = graph_.nodes[mul];
    if (sigmoidNode.opType != "Sigmoid" || !sigmoidNode.domain.empty() || mulNode.opType != "Mul" ||
        !mulNode.domain.empty() || uses_.soleReader(sigmoidNode.outputs.at(0)) != mul) {
      return false;
    }
    if (otherOperand(mulNode, m.out) != sigmoidNode.outputs.at(0)) {
      return false;
    }
    m.activation = "Silu";
    m.r.removed.insert({sigmoid, mul});
    m.r.at = mul;
    m.out = mulNode.outputs.at(0);
    return true;
  }

  /// The node of `opType` that reads `value` and a one-element constant equal to `constant`, as
  /// `value`'s only reader.
  std::optional<std::size_t> constantOp(const std::string& value, const char* opType,
                                        float constant) const {
    const std::optional<std::size_t> reader = uses_.soleReaderOp(graph_, value, opType);
    if (!reader) {
      return std::nullopt;
    }
    const std::optional<std::string> operand = otherOperand(graph_.nodes[*reader], value);
    const std::optional<float> c = operand ? scalarWeight(graph_, *operand) : std::nullopt;
    if (c != constant) {
      return std::nullopt;
    }
    return reader;
  }

  /// v * (erf(v / sqrt 2) + 1) * 0.5 as PyTorch's nn.GELU exports it, read by `readers`.
  void erfGelu(Match& m, const std::vector<std::size_t>& readers) {
    if (readers.size() != 2) {
      return;
    }
    const std::size_t first = graph_.nodes[readers[0]].opType == "Div" ? 0 : 1;
    const std::size_t div = readers[first];
    const std::size_t mul = readers[1 - first];
    const Node& divNode = graph_.nodes[div];
    const std::optional<float> root2 = scalarWeight(graph_, divNode.inputs.at(1));
    if (divNode.opType != "Div" || !divNode.domain.empty() || divNode.inputs.at(0) != m.out ||
        !root2 || std::abs(static_cast<double>(*root2) - std::sqrt(2.0)) > 1e-6) {
      return;
    }
    const std::optional<std::size_t> erf = uses_.soleReaderOp(graph_, divNode.outputs.at(0), "Erf");
    if (!erf) {
      return;
    }
    const std::optional<std::size_t> plusOne =
        constantOp(graph_.nodes[*erf].outputs.at(0), "Add", 1.0f);
    if (!plusOne || uses_.soleReader(graph_.nodes[*plusOne].outputs.at(0)) != mul) {
      return;
    }
    const Node& mulNode = graph_.nodes[mul];
    if (mulNode.opType != "Mul" || !mulNode.domain.empty() ||
        otherOperand(mulNode, m.out) != graph_.nodes[*plusOne].outputs.at(0)) {
      return;
    }
    const std::optional<std::size_t> half = constantOp(mulNode.outputs.at(0), "Mul", 0.5f);
    if (!half) {
      return;
    }
    m.activation = "Gelu";
    m.r.removed.insert({div, *erf, *plusOne, mul, *half});
    m.r.at = *half;
    m.out = graph_.nodes[*half].outputs.at(0);
  }

  const Graph& graph_;
  const Uses& uses_;
};

}  // namespace

Result<int> fuseLinear(Graph& graph) { return detail::fuseMatches<Matcher>(graph); }

}  // namespace trn::graph
