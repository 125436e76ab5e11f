// Lowerings of the element-wise operators: numpy broadcasting through stride-0 operands of the
// tile loop, one-element constants as immediates, each operator one nl function per tile.
#include <fmt/format.h>

#include "lowering_context.h"
#include "trn/kernel/nl.h"

namespace trn::graph::detail {
namespace {

namespace nl = kernel::nl;
using kernel::Tensor;

StridedOperand broadcastOperand(const DeviceValue& value, const Sizes& out) {
  return StridedOperand{value.flat, 0, broadcastStrides(value.sizes, out)};
}

StridedOperand wholeOperand(const DeviceValue& value) {
  return StridedOperand{value.flat, 0, contiguousStrides(value.sizes)};
}

using BinaryTiles = Tensor (*)(const Tensor&, const nl::Operand&, DType);
using BinaryLeft = Tensor (*)(float, const Tensor&, DType);

template <BinaryTiles kOp, BinaryLeft kLeft>
void binary(LoweringContext& ctx) {
  const DType dtype = ctx.outputDType(0);
  const std::optional<float> a = ctx.scalarConstant(0);
  const std::optional<float> b = ctx.scalarConstant(1);
  const DeviceValue out = ctx.declareOutput(0);
  std::vector<StridedOperand> inputs;
  if (!a) {
    inputs.push_back(broadcastOperand(ctx.input(0), out.sizes));
  }
  if (!b || a) {
    inputs.push_back(broadcastOperand(ctx.input(1), out.sizes));
  }
  emitTileLoop(ctx, wholeOperand(out), inputs, out.sizes, [&](const std::vector<Tensor>& t) {
    if (a) {
      return kLeft(*a, t[0], dtype);
    }
    return b ? kOp(t[0], *b, dtype) : kOp(t[0], t[1], dtype);
  });
}

using UnaryTiles = Tensor (*)(const Tensor&, DType);

template <UnaryTiles kOp>
void unary(LoweringContext& ctx) {
  const DType dtype = ctx.outputDType(0);
  const DeviceValue out = ctx.declareOutput(0);
  emitTileLoop(ctx, wholeOperand(out), {wholeOperand(ctx.input(0))}, out.sizes,
               [&](const std::vector<Tensor>& t) { return kOp(t[0], dtype); });
}

// The nl functions as plain function pointers (theirs have default source locations).
#define TRN_BINARY(name, fn)                                                              \
  Tensor name(const Tensor& a, const nl::Operand& b, DType d) { return nl::fn(a, b, d); } \
  Tensor name##Left(float a, const Tensor& b, DType d) { return nl::fn(a, b, d); }
TRN_BINARY(add, add)
TRN_BINARY(sub, subtract)
TRN_BINARY(mul, multiply)
TRN_BINARY(div, divide)
TRN_BINARY(pow, power)
TRN_BINARY(equal, equal)
TRN_BINARY(less, less)
TRN_BINARY(lessEqual, lessEqual)
TRN_BINARY(greater, greater)
TRN_BINARY(greaterEqual, greaterEqual)
#undef TRN_BINARY

#define TRN_UNARY(name, fn) \
  Tensor name(const Tensor& x, DType d) { return nl::fn(x, d); }
TRN_UNARY(sqrt, sqrt)
TRN_UNARY(exp, exp)
TRN_UNARY(log, log)
TRN_UNARY(tanh, tanh)
TRN_UNARY(erf, erf)
TRN_UNARY(sigmoid, sigmoid)
TRN_UNARY(relu, relu)
TRN_UNARY(neg, negative)
TRN_UNARY(abs, abs)
TRN_UNARY(reciprocal, reciprocal)
TRN_UNARY(cast, copy)
TRN_UNARY(geluExact, gelu)
#undef TRN_UNARY

/// Not of a bool (a byte of 0 or 1): 1 where it is 0.
Tensor logicalNot(const Tensor& x, DType d) { return nl::equal(x, 0.0f, d); }

/// Where(condition, X, Y): X and Y may be one-element constants (masked_fill's fill value), taken
/// as immediates.
void where(LoweringContext& ctx) {
  const DType dtype = ctx.outputDType(0);
  const std::optional<float> x = ctx.scalarConstant(1);
  const std::optional<float> y = ctx.scalarConstant(2);
  const DeviceValue out = ctx.declareOutput(0);
  std::vector<StridedOperand> inputs = {broadcastOperand(ctx.input(0), out.sizes)};
  if (!x) {
    inputs.push_back(broadcastOperand(ctx.input(1), out.sizes));
  }
  if (!y) {
    inputs.push_back(broadcastOperand(ctx.input(2), out.sizes));
  }
  emitTileLoop(ctx, wholeOperand(out), inputs, out.sizes, [&](const std::vector<Tensor>& t) {
    const nl::Operand a = x ? nl::Operand(*x) : nl::Operand(t[1]);
    const nl::Operand b = y ? nl::Operand(*y) : nl::Operand(t[x ? 1 : 2]);
    return nl::where(t[0], a, b, dtype);
  });
}

void gelu(LoweringContext& ctx) {
  const Attribute* approximate = ctx.node().attribute("approximate");
  if (approximate != nullptr && std::get_if<std::string>(&approximate->value) != nullptr &&
      std::get<std::string>(approximate->value) != "none") {
    ctx.unsupported("only the exact (erf) Gelu is lowered; approximate='tanh' is not");
  }
  unary<geluExact>(ctx);
}

}  // namespace

void addElementwiseLowerings(OpLowerings& table) {
  const char* how = "tile loop";
  table["Add"] = {binary<add, addLeft>, how};
  table["Sub"] = {binary<sub, subLeft>, how};
  table["Mul"] = {binary<mul, mulLeft>, how};
  table["Div"] = {binary<div, divLeft>, how};
  table["Pow"] = {binary<pow, powLeft>, how};
  table["Sqrt"] = {unary<sqrt>, how};
  table["Exp"] = {unary<exp>, how};
  table["Log"] = {unary<log>, how};
  table["Tanh"] = {unary<tanh>, how};
  table["Erf"] = {unary<erf>, how};
  table["Sigmoid"] = {unary<sigmoid>, how};
  table["Relu"] = {unary<relu>, how};
  table["Neg"] = {unary<neg>, how};
  table["Abs"] = {unary<abs>, how};
  table["Reciprocal"] = {unary<reciprocal>, how};
  table["Cast"] = {unary<cast>, how};
  table["Gelu"] = {gelu, how};
  table["Equal"] = {binary<equal, equalLeft>, how};
  table["Less"] = {binary<less, lessLeft>, how};
  table["LessOrEqual"] = {binary<lessEqual, lessEqualLeft>, how};
  table["Greater"] = {binary<greater, greaterLeft>, how};
  table["GreaterOrEqual"] = {binary<greaterEqual, greaterEqualLeft>, how};
  table["Not"] = {unary<logicalNot>, how};
  table["Where"] = {where, how};
}

}  // namespace trn::graph::detail
