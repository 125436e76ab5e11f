// Lowerings of the element-wise operators: numpy broadcasting through stride-0 operands of the
// tile loop, one-element constants as immediates, each operator one nl function per tile.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "fusion.h"
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

/// An element-wise node as a function of tiles: the node inputs it reads as tiles (the others
/// are one-element constants, taken as immediates) and its result tile computed from them.
struct TileForm {
  std::vector<std::size_t> tiled;
  TileFn compute;
};
using FormFn = TileForm (*)(const LoweringContext&);

using BinaryTiles = Tensor (*)(const Tensor&, const nl::Operand&, DType);
using BinaryLeft = Tensor (*)(float, const Tensor&, DType);

template <BinaryTiles kOp, BinaryLeft kLeft>
TileForm binary(const LoweringContext& ctx) {
  const DType dtype = ctx.outputDType(0);
  const std::optional<float> a = ctx.scalarConstant(0);
  const std::optional<float> b = ctx.scalarConstant(1);
  TileForm form;
  if (!a) {
    form.tiled.push_back(0);
  }
  if (!b || a) {
    form.tiled.push_back(1);
  }
  form.compute = [a, b, dtype](const std::vector<Tensor>& t) {
    if (a) {
      return kLeft(*a, t[0], dtype);
    }
    return b ? kOp(t[0], *b, dtype) : kOp(t[0], t[1], dtype);
  };
  return form;
}

using UnaryTiles = Tensor (*)(const Tensor&, DType);

template <UnaryTiles kOp>
TileForm unary(const LoweringContext& ctx) {
  const DType dtype = ctx.outputDType(0);
  return {{0}, [dtype](const std::vector<Tensor>& t) { return kOp(t[0], dtype); }};
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
TileForm where(const LoweringContext& ctx) {
  const DType dtype = ctx.outputDType(0);
  const std::optional<float> x = ctx.scalarConstant(1);
  const std::optional<float> y = ctx.scalarConstant(2);
  TileForm form{{0}, nullptr};
  if (!x) {
    form.tiled.push_back(1);
  }
  if (!y) {
    form.tiled.push_back(2);
  }
  form.compute = [x, y, dtype](const std::vector<Tensor>& t) {
    const nl::Operand a = x ? nl::Operand(*x) : nl::Operand(t[1]);
    const nl::Operand b = y ? nl::Operand(*y) : nl::Operand(t[x ? 1 : 2]);
    return nl::where(t[0], a, b, dtype);
  };
  return form;
}

TileForm gelu(const LoweringContext& ctx) {
  const Attribute* approximate = ctx.node().attribute("approximate");
  if (approximate != nullptr && std::get_if<std::string>(&approximate->value) != nullptr &&
      std::get<std::string>(approximate->value) != "none") {
    ctx.unsupported("only the exact (erf) Gelu is lowered; approximate='tanh' is not");
  }
  return unary<geluExact>(ctx);
}

const std::map<std::string, FormFn>& forms() {
  static const std::map<std::string, FormFn> table = {
      {"Add", binary<add, addLeft>},
      {"Sub", binary<sub, subLeft>},
      {"Mul", binary<mul, mulLeft>},
      {"Div", binary<div, divLeft>},
      {"Pow", binary<pow, powLeft>},
      {"Sqrt", unary<sqrt>},
      {"Exp", unary<exp>},
      {"Log", unary<log>},
      {"Tanh", unary<tanh>},
      {"Erf", unary<erf>},
      {"Sigmoid", unary<sigmoid>},
      {"Relu", unary<relu>},
      {"Neg", unary<neg>},
      {"Abs", unary<abs>},
      {"Reciprocal", unary<reciprocal>},
      {"Cast", unary<cast>},
      {"Gelu", gelu},
      {"Equal", binary<equal, equalLeft>},
      {"Less", binary<less, lessLeft>},
      {"LessOrEqual", binary<lessEqual, lessEqualLeft>},
      {"Greater", binary<greater, greaterLeft>},
      {"GreaterOrEqual", binary<greaterEqual, greaterEqualLeft>},
      {"Not", unary<logicalNot>},
      {"Where", where},
  };
  return table;
}

/// The current node's fusion group (fusion.h) as one tile loop over its last node's output:
/// every input a node of the group reads from outside it is loaded once per tile (broadcast to
/// the output's shape), each node computes its tile from those and its predecessors' tiles, and
/// the last node's tile is stored.
void emitGroup(LoweringContext& ctx) {
  const std::vector<std::size_t> group = ctx.fusedGroup();
  const Node& last = ctx.node();
  const std::int64_t lastIndex = ctx.nodeIndex();
  const Graph& graph = ctx.graph();
  std::vector<TileForm> nodeForms;
  for (const std::size_t m : group) {
    ctx.setNode(graph.nodes[m], static_cast<std::int64_t>(m));
    nodeForms.push_back(forms().at(graph.nodes[m].opType)(ctx));
  }
  ctx.setNode(last, lastIndex);
  const DeviceValue out = ctx.declareOutput(0);
  std::vector<std::string> loaded;  // the values read from outside the group, in load order
  std::vector<StridedOperand> operands;
  std::set<std::string> computed;
  for (std::size_t k = 0; k < group.size(); ++k) {
    const Node& node = graph.nodes[group[k]];
    for (const std::size_t i : nodeForms[k].tiled) {
      const std::string& value = node.inputs.at(i);
      if (computed.contains(value) ||
          std::find(loaded.begin(), loaded.end(), value) != loaded.end()) {
        continue;
      }
      const DeviceValue* device = ctx.find(value);
      if (device == nullptr) {
        ctx.fail(
            fmt::format("input '{}' of fused node '{}' is not on the device", value, node.name));
      }
      loaded.push_back(value);
      operands.push_back(broadcastOperand(*device, out.sizes));
    }
    computed.insert(node.outputs[0]);
  }
  emitTileLoop(ctx, wholeOperand(out), operands, out.sizes, [&](const std::vector<Tensor>& t) {
    std::map<std::string, Tensor> tiles;
    for (std::size_t i = 0; i < loaded.size(); ++i) {
      tiles.emplace(loaded[i], t[i]);
    }
    for (std::size_t k = 0; k < group.size(); ++k) {
      const Node& node = graph.nodes[group[k]];
      std::vector<Tensor> args;
      for (const std::size_t i : nodeForms[k].tiled) {
        args.push_back(tiles.at(node.inputs[i]));
      }
      tiles.insert_or_assign(node.outputs[0], nodeForms[k].compute(args));
    }
    return tiles.at(last.outputs[0]);
  });
}

}  // namespace

bool isFusibleElementwise(const std::string& opType) { return forms().contains(opType); }

void addElementwiseLowerings(OpLowerings& table) {
  for (const auto& [op, form] : forms()) {
    table[op] = {emitGroup, "tile loop"};
  }
}

}  // namespace trn::graph::detail
