// Tensor-parallel sharding: the layouts by rule, node by node, and the collectives they need
// (shard.h).
#include "trn/graph/shard.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "trn/graph/fold.h"
#include "trn/graph/fuse_attention.h"
#include "trn/graph/fuse_linear.h"
#include "trn/graph/fuse_rms_norm.h"
#include "trn/graph/fuse_rope.h"

namespace trn::graph {
namespace {

using Sizes = std::vector<std::int64_t>;

const std::set<std::string>& elementwiseOps() {
  static const std::set<std::string> ops = {
      "Add",     "Sub",   "Mul",     "Div",         "Pow",
      "Equal",   "Less",  "Greater", "LessOrEqual", "GreaterOrEqual",
      "Sqrt",    "Exp",   "Log",     "Tanh",        "Erf",
      "Sigmoid", "Relu",  "Neg",     "Abs",         "Reciprocal",
      "Gelu",    "Where", "Cast",    "Not"};
  return ops;
}

const std::set<std::string>& reshapeOps() {
  static const std::set<std::string> ops = {"Reshape", "Flatten", "Squeeze", "Unsqueeze"};
  return ops;
}

/// Normalises a possibly negative axis of a rank-`rank` tensor.
std::int64_t normalAxis(std::int64_t axis, std::size_t rank) {
  return axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis;
}

/// Where a split of `in` lands in `out`, a reshape of the same elements: the axis of `out` whose
/// blocks hold each rank's elements, or nullopt when they do not fall on one axis.
std::optional<RankLayout> reshapeSplit(const Sizes& in, const Sizes& out, const RankLayout& layout,
                                       int ranks) {
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < in.size() || j < out.size()) {
    const std::size_t i0 = i;
    const std::size_t j0 = j;
    std::int64_t pi = i < in.size() ? in[i++] : 1;
    std::int64_t pj = j < out.size() ? out[j++] : 1;
    while (pi != pj) {
      if (pi < pj && i < in.size()) {
        pi *= in[i++];
      } else if (pj < pi && j < out.size()) {
        pj *= out[j++];
      } else {
        return std::nullopt;
      }
    }
    const auto axis = static_cast<std::size_t>(layout.axis);
    if (axis < i0 || axis >= i) {
      continue;
    }
    std::int64_t pre = layout.outer;
    for (std::size_t d = i0; d < axis; ++d) {
      pre *= in[d];
    }
    std::int64_t before = 1;
    for (std::size_t d = j0; d < j; before *= out[d++]) {
      if (pre % before == 0 && (before * out[d]) % (pre * ranks) == 0) {
        return RankLayout::split(static_cast<int>(d), pre / before);
      }
    }
    return std::nullopt;
  }
  return std::nullopt;
}

class Sharder {
 public:
  Sharder(Graph& graph, int ranks) : g_(graph), ranks_(ranks) {
    for (const std::string& in : g_.inputs) {
      open_.insert(in);
    }
    for (const auto& [name, tensor] : g_.initializers) {
      open_.insert(name);
    }
  }

  Status run() {
    std::vector<Node> nodes = std::move(g_.nodes);
    g_.nodes.clear();
    original_ = &nodes;
    for (Node& node : nodes) {
      node_ = &node;
      Status s = shardNode(node);
      if (!s.ok()) {
        return s;
      }
    }
    gatherOutputs();
    g_.ranks = ranks_;
    return Status();
  }

 private:
  [[nodiscard]] Sizes sizesOf(const std::string& name) const {
    const Tensor* init = g_.initializer(name);
    return init != nullptr ? init->shape.sizes() : g_.value(name)->shape->sizes();
  }
  [[nodiscard]] bool divides(const std::string& name, const RankLayout& layout) const {
    if (!layout.isSplit()) {
      return true;
    }
    const Sizes sizes = sizesOf(name);
    return layout.axis >= 0 && static_cast<std::size_t>(layout.axis) < sizes.size() &&
           sizes[static_cast<std::size_t>(layout.axis)] % (layout.outer * ranks_) == 0;
  }
  /// Whether `name` can be read in `want` without a collective: it has that layout, or it is a
  /// weight or graph input no use has fixed yet, whose share the host can give each rank.
  [[nodiscard]] bool canTake(const std::string& name, const RankLayout& want) const {
    if (open_.contains(name)) {
      return divides(name, want) &&
             (want.kind != RankLayout::Kind::kFirstRank || g_.initializer(name) != nullptr);
    }
    return g_.layoutOf(name) == want;
  }
  /// The value to read for `name` in `want`: itself (a weight or input now fixed in `want`), or,
  /// for a replicated read of a split value, its all-gathered copy.
  std::string take(const std::string& name, const RankLayout& want) {
    if (open_.erase(name) > 0) {
      if (want.kind != RankLayout::Kind::kReplicated) {
        g_.layouts[name] = want;
      }
      return name;
    }
    if (g_.layoutOf(name) == want) {
      return name;
    }
    return gather(name);
  }
  std::string gather(const std::string& name) {
    auto cached = gathered_.find(name);
    if (cached != gathered_.end()) {
      return cached->second;
    }
    const std::string whole = name + "/gathered";
    Value v = *g_.value(name);
    v.name = whole;
    g_.values[whole] = v;
    g_.nodes.push_back(allGather(fmt::format("{}/all_gather_{}", node_->name, gathered_.size()),
                                 name, whole, g_.layoutOf(name)));
    gathered_[name] = whole;
    return whole;
  }
  /// A trn.AllGather node `name` making `from`, laid out as `layout`, whole as `to`.
  [[nodiscard]] Node allGather(std::string name, const std::string& from, const std::string& to,
                               const RankLayout& layout) const {
    Node n;
    n.name = std::move(name);
    n.domain = kTrnDomain;
    n.opType = kAllGatherOp;
    n.inputs = {from};
    n.outputs = {to};
    n.attributes = {{"axis", std::int64_t{layout.axis}},
                    {"outer", layout.outer},
                    {"ranks", std::int64_t{ranks_}}};
    return n;
  }
  /// Appends `node` with its inputs read as `wants` (shape arguments untouched) and its outputs
  /// laid out as `outs`.
  void emit(Node node, const std::vector<std::optional<RankLayout>>& wants,
            const std::vector<RankLayout>& outs) {
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.hasInput(i) && i < wants.size() && wants[i]) {
        node.inputs[i] = take(node.inputs[i], *wants[i]);
      }
    }
    for (std::size_t o = 0; o < node.outputs.size() && o < outs.size(); ++o) {
      if (!node.outputs[o].empty() && outs[o].kind != RankLayout::Kind::kReplicated) {
        g_.layouts[node.outputs[o]] = outs[o];
      }
    }
    g_.nodes.push_back(std::move(node));
  }
  /// The data inputs of `node` (not shape arguments), each wanted in `layout`.
  [[nodiscard]] std::vector<std::optional<RankLayout>> dataInputs(const Node& node,
                                                                  const RankLayout& layout) const {
    std::vector<std::optional<RankLayout>> wants(node.inputs.size());
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.hasInput(i) && !isShapeArgument(node.opType, i)) {
        wants[i] = layout;
      }
    }
    return wants;
  }
  /// A node without a rule (or whose inputs' layouts its rule does not cover): its split inputs
  /// gathered, its results replicated.
  void gatherAll(Node node) {
    const auto wants = dataInputs(node, RankLayout::replicated());
    emit(std::move(node), wants, {});
  }
  /// `node`, whose first input is split as `in`, keeping the split as `out`; the other data
  /// inputs replicated.
  void carry(Node node, const RankLayout& in, const RankLayout& out) {
    auto wants = dataInputs(node, RankLayout::replicated());
    wants[0] = in;
    const std::vector<RankLayout> outs(node.outputs.size(), out);
    emit(std::move(node), wants, outs);
  }
  /// A row-parallel product: `node` computes a partial sum, an all-reduce makes it whole.
  void rowParallel(Node node, const std::vector<std::optional<RankLayout>>& wants) {
    const std::string result = node.outputs.at(0);
    const std::string partial = result + "/partial";
    Value v = *g_.value(result);
    v.name = partial;
    g_.values[partial] = v;
    node.outputs[0] = partial;
    Node reduce;
    reduce.name = node.name + "/all_reduce";
    reduce.domain = kTrnDomain;
    reduce.opType = kAllReduceOp;
    reduce.inputs = {partial};
    reduce.outputs = {result};
    emit(std::move(node), wants, {RankLayout::partial()});
    g_.nodes.push_back(std::move(reduce));
  }
  [[nodiscard]] Status error(const std::string& message) const {
    return invalidArgument(fmt::format("{}: {}: tensor parallelism over {} ranks: {}", g_.source,
                                       describeNode(g_, *node_), ranks_, message));
  }
  /// The split of the node's data inputs, if any: the first split one's layout and index.
  [[nodiscard]] std::optional<std::pair<std::size_t, RankLayout>> firstSplit(
      const Node& node) const {
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.hasInput(i) && !isShapeArgument(node.opType, i) && !open_.contains(node.inputs[i]) &&
          g_.layoutOf(node.inputs[i]).isSplit()) {
        return std::pair(i, g_.layoutOf(node.inputs[i]));
      }
    }
    return std::nullopt;
  }

  /// The equal parts a Split along the last axis, the only reader of `value`, cuts it into (a
  /// fused QKV product's result), else 1: a column-parallel product splits each part's columns.
  [[nodiscard]] std::int64_t partsOf(std::string value) const {
    const Node* reader = nullptr;
    for (;;) {  // through element-wise nodes of the same shape (the product's bias)
      reader = nullptr;
      for (const Node& n : *original_) {
        if (std::find(n.inputs.begin(), n.inputs.end(), value) != n.inputs.end()) {
          if (reader != nullptr) {
            return 1;
          }
          reader = &n;
        }
      }
      if (reader == nullptr || !reader->domain.empty() ||
          std::find(g_.outputs.begin(), g_.outputs.end(), value) != g_.outputs.end()) {
        return 1;
      }
      if (!elementwiseOps().contains(reader->opType) ||
          sizesOf(reader->outputs.at(0)) != sizesOf(value)) {
        break;
      }
      value = reader->outputs.at(0);
    }
    if (reader->opType != "Split") {
      return 1;
    }
    const Sizes sizes = sizesOf(value);
    if (normalAxis(reader->intAttribute("axis").value_or(0), sizes.size()) !=
        static_cast<std::int64_t>(sizes.size()) - 1) {
      return 1;
    }
    for (const std::string& o : reader->outputs) {
      if (o.empty() || sizesOf(o) != sizesOf(reader->outputs[0])) {
        return 1;
      }
    }
    return static_cast<std::int64_t>(reader->outputs.size());
  }

  Status shardNode(Node node);
  void shardElementwise(Node node);
  Status shardMatMul(Node node);
  Status shardGemm(Node node);
  Status shardLinear(Node node);
  void shardRowwise(Node node, std::size_t rowAxes);
  Status shardAttention(Node node);
  Status shardMovement(Node node, const RankLayout& in);
  void gatherOutputs();

  Graph& g_;
  int ranks_;
  const Node* node_ = nullptr;
  const std::vector<Node>* original_ = nullptr;  ///< the nodes as they were, for lookahead
  std::set<std::string> open_;  ///< weights and graph inputs no use has fixed a layout for
  std::map<std::string, std::string> gathered_;
};

Status Sharder::shardNode(Node node) {
  const std::string key = node.domain.empty() ? node.opType : node.domain + "." + node.opType;
  if (key == "MatMul") {
    return shardMatMul(std::move(node));
  }
  if (key == "Gemm") {
    return shardGemm(std::move(node));
  }
  if (key == fmt::format("{}.{}", kTrnDomain, kFlashAttentionOp)) {
    return shardAttention(std::move(node));
  }
  if (key == fmt::format("{}.{}", kTrnDomain, kLinearOp)) {
    return shardLinear(std::move(node));
  }
  if (key == fmt::format("{}.{}", kTrnDomain, kRmsNormOp)) {  // along the last axis
    shardRowwise(std::move(node), 1);
    return Status();
  }
  if (key == fmt::format("{}.{}", kTrnDomain, kRopeOp)) {  // along the last two, [S, D]
    shardRowwise(std::move(node), 2);
    return Status();
  }
  if (elementwiseOps().contains(key)) {
    shardElementwise(std::move(node));
    return Status();
  }
  const auto split = firstSplit(node);
  if (!split || split->first != 0) {
    gatherAll(std::move(node));
    return Status();
  }
  return shardMovement(std::move(node), split->second);
}

void Sharder::shardElementwise(Node node) {
  const auto split = firstSplit(node);
  if (!split) {
    gatherAll(std::move(node));
    return;
  }
  const Sizes out = sizesOf(node.outputs.at(0));
  const auto rank = static_cast<std::int64_t>(out.size());
  const Sizes first = sizesOf(node.inputs[split->first]);
  const std::int64_t axis = split->second.axis + rank - static_cast<std::int64_t>(first.size());
  std::vector<std::optional<RankLayout>> wants(node.inputs.size());
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    if (!node.hasInput(i)) {
      continue;
    }
    const Sizes sizes = sizesOf(node.inputs[i]);
    const std::int64_t a = axis - (rank - static_cast<std::int64_t>(sizes.size()));
    const RankLayout want = a < 0 || sizes[static_cast<std::size_t>(a)] == 1
                                ? RankLayout::replicated()
                                : RankLayout::split(static_cast<int>(a), split->second.outer);
    if (!canTake(node.inputs[i], want)) {
      gatherAll(std::move(node));
      return;
    }
    wants[i] = want;
  }
  const std::vector<RankLayout> outs(
      node.outputs.size(), RankLayout::split(static_cast<int>(axis), split->second.outer));
  emit(std::move(node), wants, outs);
}

Status Sharder::shardMatMul(Node node) {
  const std::string& a = node.inputs.at(0);
  const std::string& b = node.inputs.at(1);
  const Sizes as = sizesOf(a);
  const Sizes bs = sizesOf(b);
  const RankLayout la = open_.contains(a) ? RankLayout::replicated() : g_.layoutOf(a);
  const bool weight = bs.size() == 2 && open_.contains(b) && as.size() >= 2;
  const int last = static_cast<int>(as.size()) - 1;
  if (weight && la == RankLayout::split(last)) {  // row-parallel
    if (canTake(b, RankLayout::split(0))) {
      rowParallel(std::move(node), {la, RankLayout::split(0)});
      return Status();
    }
  } else if (weight && la.kind == RankLayout::Kind::kReplicated) {  // column-parallel
    const std::int64_t parts = partsOf(node.outputs.at(0));
    if (bs[1] % (parts * ranks_) != 0) {
      return error(fmt::format(
          "the product's {} output columns (weight '{}'{}) do not divide over the ranks "
          "(a column-parallel product splits them)",
          bs[1], b, parts > 1 ? fmt::format(", in {} parts", parts) : ""));
    }
    emit(std::move(node), {la, RankLayout::split(1, parts)}, {RankLayout::split(last, parts)});
    return Status();
  } else if (bs.size() == 2 && la.isSplit() && la.axis < last &&
             canTake(b, RankLayout::replicated())) {  // rows of the input split
    emit(std::move(node), {la, RankLayout::replicated()}, {la});
    return Status();
  } else if (as.size() == bs.size() && as.size() >= 3 && la.isSplit() &&
             la.axis < static_cast<int>(as.size()) - 2 && canTake(b, la)) {  // batched, by heads
    emit(std::move(node), {la, la}, {la});
    return Status();
  }
  gatherAll(std::move(node));
  return Status();
}

Status Sharder::shardGemm(Node node) {
  const std::string& a = node.inputs.at(0);
  const std::string& b = node.inputs.at(1);
  const RankLayout la = open_.contains(a) ? RankLayout::replicated() : g_.layoutOf(a);
  const bool transB = node.intAttribute("transB").value_or(0) != 0;
  const int kAxis = transB ? 1 : 0;
  const int nAxis = transB ? 0 : 1;
  const bool weight = open_.contains(b) && node.intAttribute("transA").value_or(0) == 0;
  const bool bias = node.hasInput(2);
  const std::string c = bias ? node.inputs[2] : "";
  if (weight && la == RankLayout::split(1) && canTake(b, RankLayout::split(kAxis)) &&
      (!bias || canTake(c, RankLayout::firstRank()))) {
    std::vector<std::optional<RankLayout>> wants = {la, RankLayout::split(kAxis)};
    if (bias) {
      wants.emplace_back(RankLayout::firstRank());
    }
    rowParallel(std::move(node), wants);
    return Status();
  }
  if (weight && la.kind == RankLayout::Kind::kReplicated) {
    const Sizes bs = sizesOf(b);
    const std::int64_t parts = partsOf(node.outputs.at(0));
    if (bs.at(static_cast<std::size_t>(nAxis)) % (parts * ranks_) != 0) {
      return error(fmt::format(
          "the product's {} output columns{} do not divide over the ranks (a column-parallel "
          "product splits them)",
          bs[static_cast<std::size_t>(nAxis)],
          parts > 1 ? fmt::format(" in {} parts", parts) : ""));
    }
    std::vector<std::optional<RankLayout>> wants = {la, RankLayout::split(nAxis, parts)};
    if (bias) {
      const Sizes cs = sizesOf(c);
      const bool perColumn = !cs.empty() && cs.back() == bs[static_cast<std::size_t>(nAxis)];
      wants.emplace_back(perColumn ? RankLayout::split(static_cast<int>(cs.size()) - 1, parts)
                                   : RankLayout::replicated());
      if (!canTake(c, *wants.back())) {
        gatherAll(std::move(node));
        return Status();
      }
    }
    emit(std::move(node), wants, {RankLayout::split(1, parts)});
    return Status();
  }
  gatherAll(std::move(node));
  return Status();
}

Status Sharder::shardLinear(Node node) {
  // trn.Linear (fuse_linear.h): x [..., K] against W [K, N], plus b [N], then an activation;
  // or times m [..., N].
  const std::string& x = node.inputs.at(0);
  const std::string& w = node.inputs.at(1);
  const bool bias = node.hasInput(2);
  const RankLayout lx = open_.contains(x) ? RankLayout::replicated() : g_.layoutOf(x);
  const int last = static_cast<int>(sizesOf(x).size()) - 1;
  const Attribute* activation = node.attribute("activation");
  const std::string* function =
      activation != nullptr ? std::get_if<std::string>(&activation->value) : nullptr;
  const bool multiplier = node.hasInput(3);
  // Row-parallel only without an activation or a multiplier: they would apply to each rank's
  // partial sum.
  if (lx == RankLayout::split(last) && (function == nullptr || function->empty()) && !multiplier &&
      open_.contains(w) && canTake(w, RankLayout::split(0)) &&
      (!bias || canTake(node.inputs[2], RankLayout::firstRank()))) {
    std::vector<std::optional<RankLayout>> wants = {lx, RankLayout::split(0)};
    if (bias) {
      wants.emplace_back(RankLayout::firstRank());
    }
    rowParallel(std::move(node), wants);
    return Status();
  }
  if (lx.kind == RankLayout::Kind::kReplicated && open_.contains(w)) {  // column-parallel
    const std::int64_t columns = sizesOf(w).at(1);
    const std::int64_t parts = partsOf(node.outputs.at(0));
    if (columns % (parts * ranks_) != 0) {
      return error(fmt::format(
          "the product's {} output columns (weight '{}'{}) do not divide over the ranks "
          "(a column-parallel product splits them)",
          columns, w, parts > 1 ? fmt::format(", in {} parts", parts) : ""));
    }
    std::vector<std::optional<RankLayout>> wants(node.inputs.size());
    wants[0] = lx;
    wants[1] = RankLayout::split(1, parts);
    if (bias) {
      wants[2] = RankLayout::split(0, parts);
    }
    if (multiplier) {  // split as the result is
      wants[3] = RankLayout::split(last, parts);
    }
    for (std::size_t i = 2; i < wants.size(); ++i) {
      if (wants[i] && !canTake(node.inputs[i], *wants[i])) {
        gatherAll(std::move(node));
        return Status();
      }
    }
    emit(std::move(node), wants, {RankLayout::split(last, parts)});
    return Status();
  }
  gatherAll(std::move(node));
  return Status();
}

void Sharder::shardRowwise(Node node, std::size_t rowAxes) {
  // An operator that works along the last `rowAxes` axes of its first input, the others
  // replicated (a norm's weight, rope's tables): a split of an outer axis carries through.
  const auto split = firstSplit(node);
  const auto rank = static_cast<int>(sizesOf(node.inputs.at(0)).size());
  if (!split || split->first != 0 || split->second.axis >= rank - static_cast<int>(rowAxes)) {
    gatherAll(std::move(node));
    return;
  }
  const RankLayout layout = split->second;
  carry(std::move(node), layout, layout);
}

Status Sharder::shardAttention(Node node) {
  const auto split = firstSplit(node);
  if (!split) {
    gatherAll(std::move(node));
    return Status();
  }
  const RankLayout heads = RankLayout::split(1);
  const std::int64_t queryHeads = sizesOf(node.inputs.at(0)).at(1);
  const std::int64_t kvHeads = sizesOf(node.inputs.at(1)).at(1);
  if (queryHeads % ranks_ != 0) {
    return error(fmt::format("its {} heads do not divide over the ranks", queryHeads));
  }
  if (kvHeads % ranks_ != 0) {
    return error(fmt::format(
        "its {} key/value heads (grouped-query attention) do not divide over the ranks", kvHeads));
  }
  if (!canTake(node.inputs[0], heads) || !canTake(node.inputs[1], heads) ||
      !canTake(node.inputs[2], heads)) {
    gatherAll(std::move(node));
    return Status();
  }
  std::vector<std::optional<RankLayout>> wants = {heads, heads, heads};
  if (node.hasInput(3)) {
    wants.emplace_back(RankLayout::replicated());
  }
  emit(std::move(node), wants, {heads});
  return Status();
}

Status Sharder::shardMovement(Node node, const RankLayout& in) {
  const Sizes inSizes = sizesOf(node.inputs[0]);
  const Sizes out = sizesOf(node.outputs.at(0));
  const std::string& op = node.opType;
  const std::int64_t axis = in.axis;
  if (!node.domain.empty()) {
    gatherAll(std::move(node));
    return Status();
  }
  if (reshapeOps().contains(op)) {
    const std::optional<RankLayout> to = reshapeSplit(inSizes, out, in, ranks_);
    if (!to) {
      return error(fmt::format(
          "the split of axis {} of [{}] does not fall on one axis of the result [{}] (a head "
          "count that does not divide over the ranks?)",
          axis, fmt::join(inSizes, ", "), fmt::join(out, ", ")));
    }
    carry(std::move(node), in, *to);
    return Status();
  }
  if (op == "Transpose") {
    std::vector<std::int64_t> perm =
        node.intsAttribute("perm").value_or(std::vector<std::int64_t>{});
    if (perm.empty()) {
      for (auto d = static_cast<std::int64_t>(inSizes.size()); d-- > 0;) {
        perm.push_back(d);
      }
    }
    const auto j = std::find(perm.begin(), perm.end(), axis) - perm.begin();
    carry(std::move(node), in, RankLayout::split(static_cast<int>(j), in.outer));
    return Status();
  }
  if (op == "Expand") {
    const std::int64_t j = axis + static_cast<std::int64_t>(out.size() - inSizes.size());
    carry(std::move(node), in, RankLayout::split(static_cast<int>(j), in.outer));
    return Status();
  }
  std::set<std::int64_t> along;  // the axes the operator works along
  const std::int64_t rank = static_cast<std::int64_t>(inSizes.size());
  if (op == "Softmax" || op == "LogSoftmax" || op == "LayerNormalization") {
    const std::int64_t first =
        normalAxis(node.intAttribute("axis").value_or(
                       op == "LayerNormalization" || g_.opsetVersion >= 13 ? -1 : 1),
                   inSizes.size());
    for (std::int64_t d = first; d < rank; ++d) {
      along.insert(d);
    }
    if (op == "LayerNormalization" && node.outputs.size() > 1) {
      gatherAll(std::move(node));
      return Status();
    }
  } else if (op == "Concat" || op == "Split" || op == "Gather") {
    along.insert(normalAxis(node.intAttribute("axis").value_or(0), inSizes.size()));
  } else if (op == "Slice") {
    auto axes = node.hasInput(3) ? g_.knownIntegers.find(node.inputs[3]) : g_.knownIntegers.end();
    for (std::int64_t d = 0; d < rank; ++d) {
      if (axes == g_.knownIntegers.end() ||
          std::any_of(axes->second.begin(), axes->second.end(),
                      [&](std::int64_t x) { return normalAxis(x, inSizes.size()) == d; })) {
        along.insert(d);
      }
    }
  } else if (op.starts_with("Reduce")) {
    const std::optional<std::vector<std::int64_t>> axes = g_.reductionAxes(node);
    if (!axes || axes->empty() || node.intAttribute("keepdims").value_or(1) == 0) {
      gatherAll(std::move(node));
      return Status();
    }
    for (const std::int64_t x : *axes) {
      along.insert(normalAxis(x, inSizes.size()));
    }
  } else {
    gatherAll(std::move(node));
    return Status();
  }
  if (op == "Split" && along.contains(axis) &&
      in.outer % static_cast<std::int64_t>(node.outputs.size()) == 0 &&
      std::all_of(node.outputs.begin(), node.outputs.end(), [&](const std::string& o) {
        return !o.empty() && sizesOf(o) == sizesOf(node.outputs[0]);
      })) {
    // A fused product's columns split in as many equal parts as it has (QKV): each part's
    // columns are split over the ranks in turn.
    carry(std::move(node), in,
          RankLayout::split(in.axis, in.outer / static_cast<std::int64_t>(node.outputs.size())));
    return Status();
  }
  if (along.contains(axis)) {
    gatherAll(std::move(node));
    return Status();
  }
  if (op == "Gather") {
    // Known indices of one or more dimensions replace the gathered axis.
    const auto indicesRank = static_cast<std::int64_t>(sizesOf(node.inputs.at(1)).size());
    const std::int64_t gatherAxis = *along.begin();
    const std::int64_t j = axis < gatherAxis ? axis : axis + indicesRank - 1;
    carry(std::move(node), in, RankLayout::split(static_cast<int>(j), in.outer));
    return Status();
  }
  if (op == "Concat") {
    for (std::size_t i = 1; i < node.inputs.size(); ++i) {
      if (!canTake(node.inputs[i], in)) {
        gatherAll(std::move(node));
        return Status();
      }
    }
    const auto wants = dataInputs(node, in);
    emit(std::move(node), wants, {in});
    return Status();
  }
  carry(std::move(node), in, in);
  return Status();
}

void Sharder::gatherOutputs() {
  for (const std::string& out : g_.outputs) {
    const RankLayout layout = g_.layoutOf(out);
    if (!layout.isSplit()) {
      continue;
    }
    const std::string local = out + "/local";
    for (Node& node : g_.nodes) {
      std::replace(node.inputs.begin(), node.inputs.end(), out, local);
      std::replace(node.outputs.begin(), node.outputs.end(), out, local);
    }
    Value v = *g_.value(out);
    v.name = local;
    g_.values[local] = v;
    g_.layouts[local] = layout;
    g_.layouts.erase(out);
    g_.nodes.push_back(allGather(out + "/all_gather", local, out, layout));
  }
}

}  // namespace

Status shardGraph(Graph& graph, int ranks) {
  if (ranks < 1) {
    return invalidArgument(
        fmt::format("--tp {}: the tensor-parallel degree must be at least 1", ranks));
  }
  if (ranks == 1) {
    return Status();
  }
  return Sharder(graph, ranks).run();
}

Tensor rankTensor(const Tensor& whole, const RankLayout& layout, int rank, int ranks) {
  Tensor share = whole;
  const Sizes sizes = whole.shape.sizes();
  share.bytes = std::make_shared<const std::vector<std::byte>>(
      rankShare(whole.data(), sizes, static_cast<std::size_t>(elementByteSize(whole.type)), layout,
                rank, ranks));
  share.shape = Shape::of(localSizes(sizes, layout, ranks));
  return share;
}

Graph rankGraph(const Graph& sharded, int rank) {
  Graph local = sharded;
  for (const auto& [name, layout] : sharded.layouts) {
    if (Value* v = local.value(name); v != nullptr && v->shape) {
      v->shape = Shape::of(localSizes(v->shape->sizes(), layout, sharded.ranks));
    }
    auto init = local.initializers.find(name);
    if (init != local.initializers.end()) {
      init->second = rankTensor(init->second, layout, rank, sharded.ranks);
    }
  }
  return local;
}

}  // namespace trn::graph
