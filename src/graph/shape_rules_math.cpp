// Shape rules for element-wise operators, Where, Cast, MatMul, Gemm, Softmax,
// LayerNormalization and the reductions.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "shape_rules.h"

namespace trn::graph::detail {
namespace {

bool isFloat(ElementType t) {
  return t == ElementType::kFp32 || t == ElementType::kFp16 || t == ElementType::kBf16 ||
         t == ElementType::kFp64;
}

Status sameType(ShapeContext& ctx, std::size_t a, std::size_t b) {
  if (ctx.type(a) != ctx.type(b)) {
    return ctx.error(fmt::format("inputs {} and {} have different element types ({} and {})", a, b,
                                 elementTypeName(ctx.type(a)), elementTypeName(ctx.type(b))));
  }
  return Status();
}

/// The known values of inputs `inputs` read at every position of `out` with numpy
/// broadcasting (one vector per input), or nullopt when one is unknown or not an integer/bool
/// tensor. Shapes computed in the graph (Shape, Equal, Where, Mul...) are evaluated this way.
std::optional<std::vector<std::vector<std::int64_t>>> knownBroadcast(
    const ShapeContext& ctx, const Sizes& out, const std::vector<std::size_t>& inputs) {
  const std::optional<std::int64_t> count = product(out, 0, out.size());
  if (!count || *count > kMaxTrackedElements) {
    return std::nullopt;
  }
  std::vector<std::vector<std::int64_t>> read;
  for (const std::size_t i : inputs) {
    const std::vector<std::int64_t>* values = ctx.constant(i);
    const ElementType t = ctx.type(i);
    if (values == nullptr || !(isInteger(t) || t == ElementType::kBool)) {
      return std::nullopt;
    }
    const Sizes sizes = ctx.sizes(i);
    if (static_cast<std::int64_t>(values->size()) != product(sizes, 0, sizes.size())) {
      return std::nullopt;
    }
    // Row-major strides of the input aligned at the right of `out`, 0 where it broadcasts.
    Sizes strides(out.size(), 0);
    std::int64_t stride = 1;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      const std::size_t from = sizes.size() - 1 - k;
      const std::size_t to = out.size() - 1 - k;
      strides[to] = sizes[from] == 1 ? 0 : stride;
      stride *= sizes[from];
    }
    std::vector<std::int64_t> at(static_cast<std::size_t>(*count));
    Sizes index(out.size(), 0);
    for (std::int64_t n = 0; n < *count; ++n) {
      std::int64_t offset = 0;
      for (std::size_t d = 0; d < out.size(); ++d) {
        offset += index[d] * strides[d];
      }
      at[static_cast<std::size_t>(n)] = (*values)[static_cast<std::size_t>(offset)];
      for (std::size_t d = out.size(); d-- > 0;) {
        if (++index[d] < out[d]) {
          break;
        }
        index[d] = 0;
      }
    }
    read.push_back(std::move(at));
  }
  return read;
}

/// One element of a binary operator on known integers, or nullopt (overflow, division by zero,
/// an operator not evaluated).
std::optional<std::int64_t> evaluateBinary(const std::string& op, std::int64_t x, std::int64_t y) {
  std::int64_t r = 0;
  if (op == "Add") {
    return __builtin_add_overflow(x, y, &r) ? std::nullopt : std::optional(r);
  }
  if (op == "Sub") {
    return __builtin_sub_overflow(x, y, &r) ? std::nullopt : std::optional(r);
  }
  if (op == "Mul") {
    return __builtin_mul_overflow(x, y, &r) ? std::nullopt : std::optional(r);
  }
  if (op == "Div") {
    return y == 0 || (x == INT64_MIN && y == -1) ? std::nullopt : std::optional(x / y);
  }
  if (op == "Equal") {
    return std::int64_t{x == y};
  }
  if (op == "Less") {
    return std::int64_t{x < y};
  }
  if (op == "Greater") {
    return std::int64_t{x > y};
  }
  if (op == "LessOrEqual") {
    return std::int64_t{x <= y};
  }
  if (op == "GreaterOrEqual") {
    return std::int64_t{x >= y};
  }
  return std::nullopt;
}

/// Integer arithmetic and comparisons on known values, for shapes computed in the graph.
void foldBinary(ShapeContext& ctx, const Sizes& out) {
  const auto known = knownBroadcast(ctx, out, {0, 1});
  if (!known) {
    return;
  }
  std::vector<std::int64_t> values;
  for (std::size_t k = 0; k < (*known)[0].size(); ++k) {
    const std::optional<std::int64_t> r =
        evaluateBinary(ctx.node().opType, (*known)[0][k], (*known)[1][k]);
    if (!r) {
      return;
    }
    values.push_back(*r);
  }
  ctx.setConstant(0, std::move(values));
}

Status arithmetic(ShapeContext& ctx) {
  TRN_RETURN_IF_ERROR(ctx.require(0, "A"));
  TRN_RETURN_IF_ERROR(ctx.require(1, "B"));
  if (ctx.node().opType != "Pow") {
    TRN_RETURN_IF_ERROR(sameType(ctx, 0, 1));
  }
  TRN_ASSIGN_OR_RETURN(Sizes out, ctx.broadcast(ctx.sizes(0), ctx.sizes(1)));
  TRN_RETURN_IF_ERROR(ctx.setOutput(0, ctx.type(0), out));
  foldBinary(ctx, out);
  return Status();
}

Status comparison(ShapeContext& ctx) {
  TRN_RETURN_IF_ERROR(ctx.require(0, "A"));
  TRN_RETURN_IF_ERROR(ctx.require(1, "B"));
  TRN_RETURN_IF_ERROR(sameType(ctx, 0, 1));
  TRN_ASSIGN_OR_RETURN(Sizes out, ctx.broadcast(ctx.sizes(0), ctx.sizes(1)));
  TRN_RETURN_IF_ERROR(ctx.setOutput(0, ElementType::kBool, out));
  foldBinary(ctx, out);
  return Status();
}

/// Same shape and type as the input; Softmax-like operators check their axis.
Status unary(ShapeContext& ctx) {
  TRN_RETURN_IF_ERROR(ctx.require(0, "X"));
  const std::string& op = ctx.node().opType;
  const Sizes in = ctx.sizes(0);
  if (op == "Softmax" || op == "LogSoftmax") {
    const std::int64_t fallback = ctx.opset() >= 13 ? -1 : 1;
    TRN_RETURN_IF_ERROR(ctx.axis(ctx.node().intAttribute("axis").value_or(fallback),
                                 static_cast<std::int64_t>(in.size()), "axis")
                            .status());
  }
  // Relu, Neg and Abs take signed integers too; Identity and Dropout any type.
  const bool signedOk = op == "Relu" || op == "Neg" || op == "Abs";
  const ElementType t = ctx.type(0);
  const bool signedInt = t == ElementType::kInt8 || t == ElementType::kInt16 ||
                         t == ElementType::kInt32 || t == ElementType::kInt64;
  if (op != "Identity" && op != "Dropout" && op != "Not" && !isFloat(t) &&
      !(signedOk && signedInt)) {
    return ctx.error(
        fmt::format("{} needs a floating-point input, not {}", op, elementTypeName(ctx.type(0))));
  }
  if (op == "Not" && ctx.type(0) != ElementType::kBool) {
    return ctx.error("Not needs a bool input");
  }
  TRN_RETURN_IF_ERROR(ctx.setOutput(0, ctx.type(0), in));
  if (op == "Dropout") {
    TRN_RETURN_IF_ERROR(ctx.setOutput(1, ElementType::kBool, in));
  }
  if (op == "Identity" && ctx.constant(0) != nullptr) {
    ctx.setConstant(0, *ctx.constant(0));
  }
  return Status();
}

Status where(ShapeContext& ctx) {
  TRN_RETURN_IF_ERROR(ctx.require(0, "condition"));
  TRN_RETURN_IF_ERROR(ctx.require(1, "X"));
  TRN_RETURN_IF_ERROR(ctx.require(2, "Y"));
  if (ctx.type(0) != ElementType::kBool) {
    return ctx.error(
        fmt::format("the condition must be bool, not {}", elementTypeName(ctx.type(0))));
  }
  TRN_RETURN_IF_ERROR(sameType(ctx, 1, 2));
  TRN_ASSIGN_OR_RETURN(Sizes xy, ctx.broadcast(ctx.sizes(1), ctx.sizes(2)));
  TRN_ASSIGN_OR_RETURN(Sizes out, ctx.broadcast(ctx.sizes(0), xy));
  TRN_RETURN_IF_ERROR(ctx.setOutput(0, ctx.type(1), out));
  if (const auto known = knownBroadcast(ctx, out, {0, 1, 2})) {
    std::vector<std::int64_t> values;
    for (std::size_t k = 0; k < (*known)[0].size(); ++k) {
      values.push_back((*known)[0][k] != 0 ? (*known)[1][k] : (*known)[2][k]);
    }
    ctx.setConstant(0, std::move(values));
  }
  return Status();
}

Status cast(ShapeContext& ctx) {
  TRN_RETURN_IF_ERROR(ctx.require(0, "input"));
  const std::optional<std::int64_t> to = ctx.node().intAttribute("to");
  const std::optional<ElementType> type =
      to ? fromOnnxDataType(static_cast<int>(*to)) : std::nullopt;
  if (!type) {
    return ctx.error("the attribute 'to' is missing or names an unsupported type");
  }
  TRN_RETURN_IF_ERROR(ctx.setOutput(0, *type, ctx.sizes(0)));
  if (ctx.constant(0) != nullptr && isInteger(*type)) {
    ctx.setConstant(0, *ctx.constant(0));
  }
  return Status();
}

Status matmul(ShapeContext& ctx) {
  TRN_RETURN_IF_ERROR(ctx.require(0, "A"));
  TRN_RETURN_IF_ERROR(ctx.require(1, "B"));
  TRN_RETURN_IF_ERROR(sameType(ctx, 0, 1));
  Sizes a = ctx.sizes(0);
  Sizes b = ctx.sizes(1);
  if (a.empty() || b.empty()) {
    return ctx.error("MatMul needs inputs of rank 1 or more");
  }
  const bool vectorA = a.size() == 1;
  const bool vectorB = b.size() == 1;
  if (vectorA) {
    a.insert(a.begin(), 1);
  }
  if (vectorB) {
    b.push_back(1);
  }
  const std::int64_t k = a.back();
  const std::int64_t kb = b[b.size() - 2];
  if (k != kb) {
    return ctx.error(
        fmt::format("the inner dimensions differ: A {} has {} columns but B {} has "
                    "{} rows",
                    Shape::of(ctx.sizes(0)).toString(), k, Shape::of(ctx.sizes(1)).toString(), kb));
  }
  TRN_ASSIGN_OR_RETURN(Sizes out,
                       ctx.broadcast(Sizes(a.begin(), a.end() - 2), Sizes(b.begin(), b.end() - 2)));
  if (!vectorA) {
    out.push_back(a[a.size() - 2]);
  }
  if (!vectorB) {
    out.push_back(b.back());
  }
  return ctx.setOutput(0, ctx.type(0), out);
}

Status gemm(ShapeContext& ctx) {
  TRN_RETURN_IF_ERROR(ctx.require(0, "A"));
  TRN_RETURN_IF_ERROR(ctx.require(1, "B"));
  TRN_RETURN_IF_ERROR(sameType(ctx, 0, 1));
  const Sizes a = ctx.sizes(0);
  const Sizes b = ctx.sizes(1);
  if (a.size() != 2 || b.size() != 2) {
    return ctx.error("Gemm needs 2-D A and B");
  }
  const bool transA = ctx.node().intAttribute("transA").value_or(0) != 0;
  const bool transB = ctx.node().intAttribute("transB").value_or(0) != 0;
  const std::int64_t m = transA ? a[1] : a[0];
  const std::int64_t k = transA ? a[0] : a[1];
  const std::int64_t kb = transB ? b[1] : b[0];
  const std::int64_t n = transB ? b[0] : b[1];
  if (k != kb) {
    return ctx.error(
        fmt::format("the inner dimensions differ: op(A) is [{}, {}] and op(B) is "
                    "[{}, {}]",
                    m, k, kb, n));
  }
  const Sizes out = {m, n};
  if (ctx.has(2)) {
    TRN_ASSIGN_OR_RETURN(Sizes c, ctx.broadcast(ctx.sizes(2), out));
    if (c != out) {
      return ctx.error(fmt::format("C {} does not broadcast to [{}, {}]",
                                   Shape::of(ctx.sizes(2)).toString(), m, n));
    }
  }
  return ctx.setOutput(0, ctx.type(0), out);
}

Status layerNorm(ShapeContext& ctx) {
  TRN_RETURN_IF_ERROR(ctx.require(0, "X"));
  TRN_RETURN_IF_ERROR(ctx.require(1, "Scale"));
  const Sizes x = ctx.sizes(0);
  const auto rank = static_cast<std::int64_t>(x.size());
  TRN_ASSIGN_OR_RETURN(std::int64_t axis,
                       ctx.axis(ctx.node().intAttribute("axis").value_or(-1), rank, "axis"));
  const Sizes normalized(x.begin() + axis, x.end());
  for (std::size_t i : {std::size_t{1}, std::size_t{2}}) {
    if (!ctx.has(i)) {
      continue;
    }
    TRN_ASSIGN_OR_RETURN(Sizes b, ctx.broadcast(ctx.sizes(i), normalized));
    if (b != normalized) {
      return ctx.error(fmt::format("{} {} does not broadcast to the normalised shape {}",
                                   i == 1 ? "Scale" : "B", Shape::of(ctx.sizes(i)).toString(),
                                   Shape::of(normalized).toString()));
    }
  }
  TRN_RETURN_IF_ERROR(ctx.setOutput(0, ctx.type(0), x));
  Sizes stats(x.begin(), x.begin() + axis);
  stats.resize(x.size(), 1);
  const auto stash =
      fromOnnxDataType(static_cast<int>(ctx.node().intAttribute("stash_type").value_or(1)));
  TRN_RETURN_IF_ERROR(ctx.setOutput(1, stash.value_or(ElementType::kFp32), stats));
  return ctx.setOutput(2, stash.value_or(ElementType::kFp32), stats);
}

Status reduce(ShapeContext& ctx) {
  TRN_RETURN_IF_ERROR(ctx.require(0, "data"));
  const Sizes in = ctx.sizes(0);
  const auto rank = static_cast<std::int64_t>(in.size());
  std::vector<std::int64_t> axes;
  if (std::optional<std::vector<std::int64_t>> attr = ctx.node().intsAttribute("axes")) {
    axes = *attr;
  } else if (ctx.has(1)) {
    TRN_ASSIGN_OR_RETURN(axes, ctx.requireConstant(1, "axes"));
  }
  const bool keepDims = ctx.node().intAttribute("keepdims").value_or(1) != 0;
  if (axes.empty() && ctx.node().intAttribute("noop_with_empty_axes").value_or(0) != 0) {
    return ctx.setOutput(0, ctx.type(0), in);
  }
  std::set<std::int64_t> reduced;
  for (std::int64_t a : axes) {
    TRN_ASSIGN_OR_RETURN(std::int64_t axis, ctx.axis(a, rank, "axis"));
    if (!reduced.insert(axis).second) {
      return ctx.error(fmt::format("axis {} is listed twice", a));
    }
  }
  Sizes out;
  for (std::int64_t k = 0; k < rank; ++k) {
    const bool gone = axes.empty() || reduced.contains(k);
    if (!gone) {
      out.push_back(in[static_cast<std::size_t>(k)]);
    } else if (keepDims) {
      out.push_back(1);
    }
  }
  return ctx.setOutput(0, ctx.type(0), out);
}

}  // namespace

void addElementwiseRules(ShapeRules& rules) {
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow"}) {
    rules[op] = arithmetic;
  }
  for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) {
    rules[op] = comparison;
  }
  for (const char* op :
       {"Sqrt", "Exp", "Log", "Tanh", "Erf", "Sigmoid", "Relu", "Gelu", "Neg", "Abs", "Reciprocal",
        "Softmax", "LogSoftmax", "Identity", "Dropout", "Not"}) {
    rules[op] = unary;
  }
  rules["Where"] = where;
  rules["Cast"] = cast;
  rules["MatMul"] = matmul;
  rules["Gemm"] = gemm;
  rules["LayerNormalization"] = layerNorm;
  for (const char* op : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"}) {
    rules[op] = reduce;
  }
}

}  // namespace trn::graph::detail
