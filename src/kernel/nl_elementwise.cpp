// nl-level element-wise functions (nl.h): binary operators on the vector engine (power on
// GpSimd), unary functions on the scalar engine, and where.
#include <fmt/format.h>

#include "nl_util.h"
#include "trn/kernel/nisa.h"
#include "trn/kernel/nl.h"

namespace trn::kernel::nl {
namespace {

using isa::ActivationFunction;
using isa::AluOp;

/// x <op> y with x and y each a tile or a scalar (at least one a tile): tensor_tensor for tiles
/// of one shape, tensor_scalar when one side is a scalar or a [P, 1] column.
Tensor binary(std::string_view fn, AluOp op, const Operand& x, const Operand& y,
              const OptDType& dtype, Loc loc) {
  const Tensor* a = x.tensor();
  const Tensor* b = y.tensor();
  const Tensor& any = a != nullptr ? *a : *b;
  if (a != nullptr) {
    detail::requireOnChip(*a, fn, "a", loc);
  }
  if (b != nullptr) {
    detail::requireOnChip(*b, fn, "b", loc);
  }
  // GpSimd cannot reach PSUM: power copies PSUM operands to SBUF first.
  const std::optional<isa::Engine> engine =
      op == AluOp::kPow ? std::optional(isa::Engine::kPool) : std::nullopt;
  auto reachable = [&](const Tensor& t) {
    return op == AluOp::kPow && t.memory() == isa::Memory::kPsum ? copy(t, std::nullopt, loc) : t;
  };
  if (a != nullptr && b != nullptr) {
    const bool aColumn = detail::isColumn(*a) && !detail::isColumn(*b);
    const bool bColumn = detail::isColumn(*b) && !detail::isColumn(*a);
    if (a->partitions() != b->partitions() || (!aColumn && !bColumn && a->shape() != b->shape())) {
      detail::fail(any, fn,
                   fmt::format("operands a ({}) and b ({}) differ in shape; they need one shape, "
                               "or one of them must be a [P, 1] column of the other's partitions",
                               a->describe(), b->describe()),
                   loc);
    }
    const DType type = dtype.value_or(detail::promote(a->dtype(), b->dtype()));
    if (!aColumn && !bColumn) {
      Tensor out = detail::newTile(*a, a->shape(), type, fn, loc);
      nisa::tensorTensor(out, reachable(*a), reachable(*b), op, std::nullopt, loc);
      return out;
    }
    const Tensor& data = aColumn ? *b : *a;
    const Tensor column = detail::fp32Column(reachable(aColumn ? *a : *b), loc);
    Tensor out = detail::newTile(data, data.shape(), type, fn, loc);
    nisa::tensorScalar(out, reachable(data), op, column, /*reverse0=*/aColumn, AluOp::kBypass, 0.0f,
                       false, engine, loc);
    return out;
  }
  const Tensor& data = a != nullptr ? *a : *b;
  const float scalar = a != nullptr ? y.immediate() : x.immediate();
  Tensor out = detail::newTile(data, data.shape(), dtype.value_or(data.dtype()), fn, loc);
  nisa::tensorScalar(out, reachable(data), op, scalar, /*reverse0=*/a == nullptr, AluOp::kBypass,
                     0.0f, false, engine, loc);
  return out;
}

/// op(x) on the scalar engine.
Tensor unary(std::string_view fn, ActivationFunction function, const Tensor& x,
             const OptDType& dtype, Loc loc) {
  detail::requireOnChip(x, fn, "x", loc);
  Tensor out = detail::newTile(x, x.shape(), detail::resultDType(x.dtype(), dtype), fn, loc);
  nisa::activation(out, x, function, 0.0f, 1.0f, AluOp::kAdd, std::nullopt, isa::ReduceCmd::kIdle,
                   loc);
  return out;
}

bool isUnsigned(DType t) {
  return t == DType::kUint8 || t == DType::kUint16 || t == DType::kUint32;
}

}  // namespace

// ---- Binary -----------------------------------------------------------------------------------

Tensor add(const Tensor& a, const Operand& b, OptDType dtype, Loc loc) {
  return binary("add", AluOp::kAdd, a, b, dtype, loc);
}
Tensor add(float a, const Tensor& b, OptDType dtype, Loc loc) {
  return binary("add", AluOp::kAdd, a, b, dtype, loc);
}
Tensor subtract(const Tensor& a, const Operand& b, OptDType dtype, Loc loc) {
  return binary("subtract", AluOp::kSubtract, a, b, dtype, loc);
}
Tensor subtract(float a, const Tensor& b, OptDType dtype, Loc loc) {
  return binary("subtract", AluOp::kSubtract, a, b, dtype, loc);
}
Tensor multiply(const Tensor& a, const Operand& b, OptDType dtype, Loc loc) {
  return binary("multiply", AluOp::kMultiply, a, b, dtype, loc);
}
Tensor multiply(float a, const Tensor& b, OptDType dtype, Loc loc) {
  return binary("multiply", AluOp::kMultiply, a, b, dtype, loc);
}
Tensor divide(const Tensor& a, const Operand& b, OptDType dtype, Loc loc) {
  return binary("divide", AluOp::kDivide, a, b, dtype, loc);
}
Tensor divide(float a, const Tensor& b, OptDType dtype, Loc loc) {
  return binary("divide", AluOp::kDivide, a, b, dtype, loc);
}
Tensor maximum(const Tensor& a, const Operand& b, OptDType dtype, Loc loc) {
  return binary("maximum", AluOp::kMax, a, b, dtype, loc);
}
Tensor maximum(float a, const Tensor& b, OptDType dtype, Loc loc) {
  return binary("maximum", AluOp::kMax, a, b, dtype, loc);
}
Tensor minimum(const Tensor& a, const Operand& b, OptDType dtype, Loc loc) {
  return binary("minimum", AluOp::kMin, a, b, dtype, loc);
}
Tensor minimum(float a, const Tensor& b, OptDType dtype, Loc loc) {
  return binary("minimum", AluOp::kMin, a, b, dtype, loc);
}
Tensor power(const Tensor& a, const Operand& b, OptDType dtype, Loc loc) {
  return binary("power", AluOp::kPow, a, b, dtype, loc);
}
Tensor power(float a, const Tensor& b, OptDType dtype, Loc loc) {
  return binary("power", AluOp::kPow, a, b, dtype, loc);
}
Tensor equal(const Tensor& a, const Operand& b, OptDType dtype, Loc loc) {
  return binary("equal", AluOp::kEqual, a, b, dtype, loc);
}
Tensor equal(float a, const Tensor& b, OptDType dtype, Loc loc) {
  return binary("equal", AluOp::kEqual, a, b, dtype, loc);
}
Tensor notEqual(const Tensor& a, const Operand& b, OptDType dtype, Loc loc) {
  return binary("not_equal", AluOp::kNotEqual, a, b, dtype, loc);
}
Tensor notEqual(float a, const Tensor& b, OptDType dtype, Loc loc) {
  return binary("not_equal", AluOp::kNotEqual, a, b, dtype, loc);
}
Tensor less(const Tensor& a, const Operand& b, OptDType dtype, Loc loc) {
  return binary("less", AluOp::kLess, a, b, dtype, loc);
}
Tensor less(float a, const Tensor& b, OptDType dtype, Loc loc) {
  return binary("less", AluOp::kLess, a, b, dtype, loc);
}
Tensor lessEqual(const Tensor& a, const Operand& b, OptDType dtype, Loc loc) {
  return binary("less_equal", AluOp::kLessEqual, a, b, dtype, loc);
}
Tensor lessEqual(float a, const Tensor& b, OptDType dtype, Loc loc) {
  return binary("less_equal", AluOp::kLessEqual, a, b, dtype, loc);
}
Tensor greater(const Tensor& a, const Operand& b, OptDType dtype, Loc loc) {
  return binary("greater", AluOp::kGreater, a, b, dtype, loc);
}
Tensor greater(float a, const Tensor& b, OptDType dtype, Loc loc) {
  return binary("greater", AluOp::kGreater, a, b, dtype, loc);
}
Tensor greaterEqual(const Tensor& a, const Operand& b, OptDType dtype, Loc loc) {
  return binary("greater_equal", AluOp::kGreaterEqual, a, b, dtype, loc);
}
Tensor greaterEqual(float a, const Tensor& b, OptDType dtype, Loc loc) {
  return binary("greater_equal", AluOp::kGreaterEqual, a, b, dtype, loc);
}

Tensor where(const Tensor& cond, const Operand& a, const Operand& b, OptDType dtype, Loc loc) {
  detail::requireOnChip(cond, "where", "cond", loc);
  for (const auto& [name, operand] : {std::pair{"a", &a}, std::pair{"b", &b}}) {
    if (const Tensor* t = operand->tensor()) {
      detail::requireOnChip(*t, "where", name, loc);
      if (t->shape() != cond.shape()) {
        detail::fail(cond, "where",
                     fmt::format("operand {} ({}) must have the shape of cond ({})", name,
                                 t->describe(), cond.describe()),
                     loc);
      }
    }
  }
  DType type = DType::kFp32;
  if (a.tensor() != nullptr && b.tensor() != nullptr) {
    type = detail::promote(a.tensor()->dtype(), b.tensor()->dtype());
  } else if (a.tensor() != nullptr || b.tensor() != nullptr) {
    type = (a.tensor() != nullptr ? a.tensor() : b.tensor())->dtype();
  }
  type = dtype.value_or(type);
  // The predicate of tensor_copy_predicated is an unsigned integer tile: cond != 0.
  Tensor predicate = cond;
  if (!isUnsigned(cond.dtype())) {
    predicate = detail::newTile(cond, cond.shape(), DType::kUint8, "where_mask", loc);
    nisa::tensorScalar(predicate, cond, AluOp::kNotEqual, 0.0f, false, AluOp::kBypass, 0.0f, false,
                       std::nullopt, loc);
  }
  Tensor out = detail::newTile(cond, cond.shape(), type, "where", loc);
  if (const Tensor* t = b.tensor()) {
    nisa::tensorCopy(out, *t, std::nullopt, loc);
  } else {
    nisa::memset(out, b.immediate(), std::nullopt, loc);
  }
  if (const Tensor* t = a.tensor()) {
    const Tensor src = t->dtype() == type ? *t : copy(*t, type, loc);
    nisa::tensorCopyPredicated(out, src, predicate, false, loc);
  } else {
    nisa::tensorCopyPredicated(out, a.immediate(), predicate, false, loc);
  }
  return out;
}

// ---- Unary ------------------------------------------------------------------------------------

Tensor negative(const Tensor& x, OptDType dtype, Loc loc) {
  detail::requireOnChip(x, "negative", "x", loc);
  Tensor out =
      detail::newTile(x, x.shape(), detail::resultDType(x.dtype(), dtype), "negative", loc);
  nisa::tensorScalar(out, x, AluOp::kMultiply, -1.0f, false, AluOp::kBypass, 0.0f, false,
                     std::nullopt, loc);
  return out;
}

Tensor reciprocal(const Tensor& x, OptDType dtype, Loc loc) {
  detail::requireOnChip(x, "reciprocal", "x", loc);
  Tensor out =
      detail::newTile(x, x.shape(), detail::resultDType(x.dtype(), dtype), "reciprocal", loc);
  nisa::reciprocal(out, x, loc);
  return out;
}

Tensor abs(const Tensor& x, OptDType dtype, Loc loc) {
  return unary("abs", ActivationFunction::kAbs, x, dtype, loc);
}
Tensor square(const Tensor& x, OptDType dtype, Loc loc) {
  return unary("square", ActivationFunction::kSquare, x, dtype, loc);
}
Tensor exp(const Tensor& x, OptDType dtype, Loc loc) {
  return unary("exp", ActivationFunction::kExp, x, dtype, loc);
}
Tensor log(const Tensor& x, OptDType dtype, Loc loc) {
  return unary("log", ActivationFunction::kLog, x, dtype, loc);
}
Tensor sqrt(const Tensor& x, OptDType dtype, Loc loc) {
  return unary("sqrt", ActivationFunction::kSqrt, x, dtype, loc);
}
Tensor rsqrt(const Tensor& x, OptDType dtype, Loc loc) {
  return unary("rsqrt", ActivationFunction::kRsqrt, x, dtype, loc);
}
Tensor tanh(const Tensor& x, OptDType dtype, Loc loc) {
  return unary("tanh", ActivationFunction::kTanh, x, dtype, loc);
}
Tensor sigmoid(const Tensor& x, OptDType dtype, Loc loc) {
  return unary("sigmoid", ActivationFunction::kSigmoid, x, dtype, loc);
}
Tensor relu(const Tensor& x, OptDType dtype, Loc loc) {
  return unary("relu", ActivationFunction::kRelu, x, dtype, loc);
}
Tensor gelu(const Tensor& x, OptDType dtype, Loc loc) {
  return unary("gelu", ActivationFunction::kGelu, x, dtype, loc);
}
Tensor silu(const Tensor& x, OptDType dtype, Loc loc) {
  return unary("silu", ActivationFunction::kSilu, x, dtype, loc);
}
Tensor sin(const Tensor& x, OptDType dtype, Loc loc) {
  return unary("sin", ActivationFunction::kSin, x, dtype, loc);
}
Tensor erf(const Tensor& x, OptDType dtype, Loc loc) {
  return unary("erf", ActivationFunction::kErf, x, dtype, loc);
}
Tensor softplus(const Tensor& x, OptDType dtype, Loc loc) {
  return unary("softplus", ActivationFunction::kSoftplus, x, dtype, loc);
}

}  // namespace trn::kernel::nl
