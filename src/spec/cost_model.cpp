#include "trn/spec/cost_model.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace trn::spec {
namespace {

struct VariableInfo {
  CostVariable variable;
  std::string_view name;
  std::string_view doc;
};

constexpr std::array<VariableInfo, static_cast<std::size_t>(CostVariable::kCount)> kVariables = {{
    {CostVariable::kN, "n", "elements per partition of the main input (free size)"},
    {CostVariable::kP, "p", "partitions used"},
    {CostVariable::kNStationary, "n_stationary", "free size of the matmul stationary operand"},
    {CostVariable::kNMoving, "n_moving", "free size of the matmul moving operand"},
    {CostVariable::kK, "k", "topk K, or elements per index for local_gather"},
    {CostVariable::kIndices, "indices", "number of valid indices (local_gather)"},
    {CostVariable::kDtypeBytes, "dtype_bytes", "bytes per element of the main input"},
}};

constexpr std::size_t kMaxNesting = 64;
constexpr std::size_t kMaxNodes = 4096;

using Node = CostExpression::Node;
using Op = Node::Op;

bool isNameStart(char c) { return std::islower(static_cast<unsigned char>(c)) || c == '_'; }
bool isNameChar(char c) {
  return isNameStart(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '.';
}

/// Recursive-descent parser producing nodes in post-order (children before parents).
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<std::vector<Node>> run() {
    skipSpace();
    if (pos_ == text_.size()) {
      return fail("the formula is empty");
    }
    TRN_RETURN_IF_ERROR(parseSum());
    skipSpace();
    if (pos_ != text_.size()) {
      return fail(fmt::format("unexpected '{}'", text_[pos_]));
    }
    return std::move(nodes_);
  }

 private:
  using Index = Result<std::size_t>;

  Status fail(std::string_view what) const {
    return invalidArgument(
        fmt::format("formula '{}': {} at character {}", text_, what, pos_ + 1));
  }

  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
  }

  bool accept(char c) {
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  Index push(Node node) {
    if (nodes_.size() >= kMaxNodes) {
      return fail("the formula is too long");
    }
    nodes_.push_back(std::move(node));
    return nodes_.size() - 1;
  }

  Index binary(Op op, std::size_t lhs, std::size_t rhs) {
    Node node;
    node.op = op;
    node.args = {lhs, rhs};
    return push(std::move(node));
  }

  Index parseSum() {
    TRN_ASSIGN_OR_RETURN(std::size_t lhs, parseProduct());
    while (true) {
      if (accept('+')) {
        TRN_ASSIGN_OR_RETURN(std::size_t rhs, parseProduct());
        TRN_ASSIGN_OR_RETURN(lhs, binary(Op::kAdd, lhs, rhs));
      } else if (accept('-')) {
        TRN_ASSIGN_OR_RETURN(std::size_t rhs, parseProduct());
        TRN_ASSIGN_OR_RETURN(lhs, binary(Op::kSubtract, lhs, rhs));
      } else {
        return lhs;
      }
    }
  }

  Index parseProduct() {
    TRN_ASSIGN_OR_RETURN(std::size_t lhs, parseUnary());
    while (true) {
      if (accept('*')) {
        TRN_ASSIGN_OR_RETURN(std::size_t rhs, parseUnary());
        TRN_ASSIGN_OR_RETURN(lhs, binary(Op::kMultiply, lhs, rhs));
      } else if (accept('/')) {
        TRN_ASSIGN_OR_RETURN(std::size_t rhs, parseUnary());
        TRN_ASSIGN_OR_RETURN(lhs, binary(Op::kDivide, lhs, rhs));
      } else {
        return lhs;
      }
    }
  }

  Index parseUnary() {
    if (accept('-')) {
      if (++depth_ > kMaxNesting) {
        return fail("nesting is too deep");
      }
      Index operandIndex = parseUnary();
      --depth_;
      TRN_ASSIGN_OR_RETURN(std::size_t operand, std::move(operandIndex));
      Node node;
      node.op = Op::kNegate;
      node.args = {operand};
      return push(std::move(node));
    }
    return parsePrimary();
  }

  Index parsePrimary() {
    if (++depth_ > kMaxNesting) {
      return fail("nesting is too deep");
    }
    Index result = parsePrimaryUnguarded();
    --depth_;
    return result;
  }

  Index parsePrimaryUnguarded() {
    skipSpace();
    if (pos_ == text_.size()) {
      return fail("expected a number, name or '(' but the formula ended");
    }
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      TRN_ASSIGN_OR_RETURN(std::size_t inner, parseSum());
      if (!accept(')')) {
        return fail("expected ')'");
      }
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      const std::size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.')) {
        ++pos_;
      }
      Result<Ratio> value = Ratio::parse(text_.substr(start, pos_ - start));
      if (!value.ok()) {
        pos_ = start;
        return fail("malformed number");
      }
      Node node;
      node.value = *value;
      return push(std::move(node));
    }
    if (isNameStart(c)) {
      const std::size_t start = pos_;
      while (pos_ < text_.size() && isNameChar(text_[pos_])) {
        ++pos_;
      }
      const std::string_view name = text_.substr(start, pos_ - start);
      if (accept('(')) {
        return parseCall(name, start);
      }
      Node node;
      if (const auto variable = parseCostVariable(name)) {
        node.op = Op::kVariable;
        node.variable = *variable;
      } else {
        node.op = Op::kName;
        node.name = std::string(name);
      }
      return push(std::move(node));
    }
    return fail(fmt::format("unexpected '{}'", c));
  }

  Index parseCall(std::string_view function, std::size_t start) {
    Node node;
    std::size_t minArgs = 1;
    std::size_t maxArgs = 1;
    if (function == "max" || function == "min") {
      node.op = function == "max" ? Op::kMax : Op::kMin;
      minArgs = 2;
      maxArgs = kMaxNodes;
    } else if (function == "ceil" || function == "floor") {
      node.op = function == "ceil" ? Op::kCeil : Op::kFloor;
    } else {
      pos_ = start;
      return fail(fmt::format("unknown function '{}' (functions are max, min, ceil, floor)",
                              function));
    }
    do {
      TRN_ASSIGN_OR_RETURN(std::size_t arg, parseSum());
      node.args.push_back(arg);
    } while (accept(','));
    if (!accept(')')) {
      return fail("expected ',' or ')'");
    }
    if (node.args.size() < minArgs || node.args.size() > maxArgs) {
      return fail(fmt::format("{}() takes {} argument{}", function,
                              minArgs == maxArgs ? "1" : "at least 2", minArgs == 1 ? "" : "s"));
    }
    return push(std::move(node));
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t depth_ = 0;
  std::vector<Node> nodes_;
};

bool contains(const auto& list, const auto& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace

std::string_view costVariableName(CostVariable variable) {
  return kVariables.at(static_cast<std::size_t>(variable)).name;
}

std::string_view costVariableDoc(CostVariable variable) {
  return kVariables.at(static_cast<std::size_t>(variable)).doc;
}

std::optional<CostVariable> parseCostVariable(std::string_view name) {
  for (const VariableInfo& info : kVariables) {
    if (info.name == name) {
      return info.variable;
    }
  }
  return std::nullopt;
}

CostVariables& CostVariables::set(CostVariable variable, std::int64_t value) {
  values_.at(static_cast<std::size_t>(variable)) = value;
  return *this;
}

std::int64_t CostVariables::get(CostVariable variable) const {
  return values_.at(static_cast<std::size_t>(variable));
}

Result<CostExpression> CostExpression::parse(std::string_view text) {
  TRN_ASSIGN_OR_RETURN(std::vector<Node> nodes, Parser(text).run());
  CostExpression expression;
  expression.text_ = std::string(text);
  expression.nodes_ = std::move(nodes);
  return expression;
}

Status CostExpression::bind(const std::function<std::optional<Ratio>(std::string_view)>& lookup) {
  std::vector<std::string> unknown;
  for (Node& node : nodes_) {
    if (node.op != Op::kName) {
      continue;
    }
    if (const auto value = lookup(node.name)) {
      node.value = *value;
      node.bound = true;
    } else if (!contains(unknown, node.name)) {
      unknown.push_back(node.name);
    }
  }
  if (unknown.empty()) {
    return {};
  }
  std::string variables;
  for (const VariableInfo& info : kVariables) {
    variables += fmt::format("{}{}", variables.empty() ? "" : ", ", info.name);
  }
  return invalidArgument(fmt::format(
      "formula '{}' uses unknown name{} '{}'; a formula may use the variables {} and numeric "
      "values of the description by key path (e.g. costs.min_ii)",
      text_, unknown.size() > 1 ? "s" : "", fmt::join(unknown, "', '"), variables));
}

Result<Ratio> CostExpression::evaluate(const CostVariables& variables) const {
  if (nodes_.empty()) {
    return failedPrecondition("empty cost formula");
  }
  Result<Ratio> value = evaluateNode(nodes_.size() - 1, variables);
  if (!value.ok()) {
    return value.status().withContext(fmt::format("formula '{}'", text_));
  }
  return value;
}

Result<Ratio> CostExpression::evaluateNode(std::size_t index,
                                           const CostVariables& variables) const {
  const Node& node = nodes_[index];
  switch (node.op) {
    case Op::kNumber:
      return node.value;
    case Op::kVariable:
      return Ratio(variables.get(node.variable));
    case Op::kName:
      if (!node.bound) {
        return failedPrecondition(fmt::format("'{}' is not bound to a value", node.name));
      }
      return node.value;
    case Op::kNegate: {
      TRN_ASSIGN_OR_RETURN(Ratio operand, evaluateNode(node.args[0], variables));
      return subtract(Ratio(0), operand);
    }
    case Op::kCeil:
    case Op::kFloor: {
      TRN_ASSIGN_OR_RETURN(Ratio operand, evaluateNode(node.args[0], variables));
      return Ratio(node.op == Op::kCeil ? operand.ceil() : operand.floor());
    }
    case Op::kMax:
    case Op::kMin: {
      TRN_ASSIGN_OR_RETURN(Ratio best, evaluateNode(node.args[0], variables));
      for (std::size_t i = 1; i < node.args.size(); ++i) {
        TRN_ASSIGN_OR_RETURN(Ratio next, evaluateNode(node.args[i], variables));
        best = node.op == Op::kMax ? std::max(best, next) : std::min(best, next);
      }
      return best;
    }
    case Op::kAdd:
    case Op::kSubtract:
    case Op::kMultiply:
    case Op::kDivide: {
      TRN_ASSIGN_OR_RETURN(Ratio lhs, evaluateNode(node.args[0], variables));
      TRN_ASSIGN_OR_RETURN(Ratio rhs, evaluateNode(node.args[1], variables));
      switch (node.op) {
        case Op::kAdd: return add(lhs, rhs);
        case Op::kSubtract: return subtract(lhs, rhs);
        case Op::kMultiply: return multiply(lhs, rhs);
        default: return divide(lhs, rhs);
      }
    }
  }
  TRN_UNREACHABLE() << "bad cost expression op";
  return Ratio();
}

bool CostConditions::empty() const {
  return !engine && !dtypes && !ops && !opSequence && !psumInputs && !allSbuf && !unitStride &&
         !fillZero && !nEven;
}

bool matches(const CostConditions& c, const CostQuery& q) {
  const auto allIn = [](const auto& values, const auto& allowed) {
    return std::all_of(values.begin(), values.end(),
                       [&](const auto& v) { return contains(allowed, v); });
  };
  return (!c.engine || *c.engine == q.engine) && (!c.dtypes || allIn(q.dtypes, *c.dtypes)) &&
         (!c.ops || allIn(q.ops, *c.ops)) && (!c.opSequence || *c.opSequence == q.ops) &&
         (!c.psumInputs || *c.psumInputs == q.psumInputs) &&
         (!c.allSbuf || *c.allSbuf == q.allSbuf) &&
         (!c.unitStride || *c.unitStride == q.unitStride) &&
         (!c.fillZero || *c.fillZero == q.fillZero) &&
         (!c.nEven || *c.nEven == (q.variables.get(CostVariable::kN) % 2 == 0));
}

const CostVariant* CostClass::select(const CostQuery& query) const {
  const CostVariant* fallback = nullptr;
  for (const CostVariant& variant : variants) {
    if (variant.when.empty()) {
      fallback = fallback == nullptr ? &variant : fallback;
    } else if (matches(variant.when, query)) {
      return &variant;
    }
  }
  return fallback;
}

Result<CostEstimate> CostClass::estimate(const CostQuery& query) const {
  const CostVariant* variant = select(query);
  if (variant == nullptr) {
    return failedPrecondition(fmt::format("cost class '{}' has no fallback variant", name));
  }
  Result<Ratio> cycles = variant->cycles.evaluate(query.variables);
  if (!cycles.ok()) {
    return cycles.status().withContext(fmt::format("cost class '{}' variant '{}'", name,
                                                   variant->name));
  }
  return CostEstimate{variant->name, *cycles, std::max<std::int64_t>(0, cycles->ceil())};
}

const CostClass* CostModel::find(std::string_view name) const {
  for (const CostClass& c : classes) {
    if (c.name == name) {
      return &c;
    }
  }
  return nullptr;
}

const std::vector<std::string_view>& requiredCostClasses() {
  static const std::vector<std::string_view> kRequired = {
      "activation",         "activation_reduce",  "tensor_scalar",        "tensor_copy",
      "memset",             "tensor_tensor",      "scalar_tensor_tensor", "tensor_reduce",
      "tensor_tensor_scan", "tensor_scalar_reduce", "reciprocal",         "bn_stats",
      "bn_aggr",            "tensor_copy_dynamic", "iota_affine_select",  "local_gather",
      "topk",               "max8",               "transpose",            "matmul",
  };
  return kRequired;
}

}  // namespace trn::spec
