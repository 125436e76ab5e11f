// nl-level reductions along the free dimensions (nl.h), on the vector engine.
#include <fmt/format.h>

#include "nl_util.h"
#include "trn/kernel/nisa.h"
#include "trn/kernel/nl.h"

namespace trn::kernel::nl {
namespace {

using isa::AluOp;

/// The result shape of reducing x from `axis`, after checking the axis.
std::vector<std::int64_t> reducedShape(std::string_view fn, const Tensor& x, int axis,
                                       bool keepdims, Loc loc) {
  detail::requireOnChip(x, fn, "x", loc);
  if (axis < 1 || axis >= x.rank()) {
    detail::fail(x, fn,
                 fmt::format("axis {} is not a free dimension of {} (1..{}); the partition "
                             "dimension cannot be reduced",
                             axis, x.describe(), x.rank() - 1),
                 loc);
  }
  std::vector<std::int64_t> shape;
  for (int d = 0; d < x.rank(); ++d) {
    if (d < axis) {
      shape.push_back(x.shape(d));
    } else if (keepdims) {
      shape.push_back(1);
    }
  }
  if (shape.size() < 2) {
    shape.push_back(1);
  }
  return shape;
}

std::int64_t reducedCount(const Tensor& x, int axis) {
  std::int64_t n = 1;
  for (int d = axis; d < x.rank(); ++d) {
    n *= x.shape(d);
  }
  return n;
}

Tensor reduce(std::string_view fn, AluOp op, const Tensor& x, int axis, bool keepdims,
              const OptDType& dtype, Loc loc) {
  const std::vector<std::int64_t> shape = reducedShape(fn, x, axis, keepdims, loc);
  Tensor out = detail::newTile(x, shape, detail::resultDType(x.dtype(), dtype), fn, loc);
  nisa::tensorReduce(out, x, op, axis, false, loc);
  return out;
}

}  // namespace

Tensor sum(const Tensor& x, int axis, bool keepdims, OptDType dtype, Loc loc) {
  return reduce("sum", AluOp::kAdd, x, axis, keepdims, dtype, loc);
}

Tensor max(const Tensor& x, int axis, bool keepdims, OptDType dtype, Loc loc) {
  return reduce("max", AluOp::kMax, x, axis, keepdims, dtype, loc);
}

Tensor min(const Tensor& x, int axis, bool keepdims, OptDType dtype, Loc loc) {
  return reduce("min", AluOp::kMin, x, axis, keepdims, dtype, loc);
}

Tensor prod(const Tensor& x, int axis, bool keepdims, OptDType dtype, Loc loc) {
  return reduce("prod", AluOp::kMultiply, x, axis, keepdims, dtype, loc);
}

Tensor mean(const Tensor& x, int axis, bool keepdims, OptDType dtype, Loc loc) {
  const std::vector<std::int64_t> shape = reducedShape("mean", x, axis, keepdims, loc);
  // The sum stays fp32; the division rounds once more, to the result dtype.
  Tensor total = detail::newTile(x, shape, DType::kFp32, "mean_sum", loc);
  nisa::tensorReduce(total, x, AluOp::kAdd, axis, false, loc);
  Tensor out = detail::newTile(x, shape, detail::resultDType(x.dtype(), dtype), "mean", loc);
  nisa::tensorScalar(out, total, AluOp::kDivide, static_cast<float>(reducedCount(x, axis)), false,
                     AluOp::kBypass, 0.0f, false, std::nullopt, loc);
  return out;
}

Tensor var(const Tensor& x, OptDType dtype, Loc loc) {
  const std::vector<std::int64_t> shape = reducedShape("var", x, 1, true, loc);
  const auto n = static_cast<float>(x.freeSize());
  // -mean, then the sum of squares of (x - mean) fused into one activation whose bias is -mean.
  Tensor negMean = detail::newTile(x, shape, DType::kFp32, "var_mean", loc);
  nisa::tensorReduce(negMean, x, AluOp::kAdd, 1, /*negate=*/true, loc);
  nisa::tensorScalar(negMean, negMean, AluOp::kDivide, n, false, AluOp::kBypass, 0.0f, false,
                     std::nullopt, loc);
  Tensor squares = detail::newTile(x, x.shape(), DType::kFp32, "var_squares", loc);
  Tensor total = detail::newTile(x, shape, DType::kFp32, "var_sum", loc);
  nisa::activationReduce(squares, total, x, isa::ActivationFunction::kSquare, negMean, 1.0f,
                         AluOp::kAdd, loc);
  Tensor out = detail::newTile(x, shape, detail::resultDType(x.dtype(), dtype), "var", loc);
  nisa::tensorScalar(out, total, AluOp::kDivide, n, false, AluOp::kBypass, 0.0f, false,
                     std::nullopt, loc);
  return out;
}

}  // namespace trn::kernel::nl
