// nl-level composite functions (nl.h): softmax, RMS norm and layer norm along the free dimension.
#include <fmt/format.h>

#include "nl_util.h"
#include "trn/kernel/nisa.h"
#include "trn/kernel/nl.h"

namespace trn::kernel::nl {
namespace {

using isa::ActivationFunction;
using isa::AluOp;

/// `param` as a [P, F] operand for x: itself when it already is one, its partition broadcast when
/// it is a [1, F] row.
Tensor perPartition(std::string_view fn, std::string_view name, const Tensor& x,
                    const Tensor& param, Loc loc) {
  detail::requireOnChip(param, fn, name, loc);
  if (param.freeSize() != x.freeSize() ||
      (param.partitions() != 1 && param.partitions() != x.partitions())) {
    detail::fail(
        x, fn,
        fmt::format("{} ({}) must be [1, {}] or [{}, {}] for x ({})", name, param.describe(),
                    x.freeSize(), x.partitions(), x.freeSize(), x.describe()),
        loc);
  }
  if (param.partitions() == x.partitions()) {
    return param;
  }
  return broadcastPartitions(param, x.partitions(), loc);
}

/// rsqrt(total * scale + eps) per partition, on the scalar engine.
Tensor rsqrtOf(const Tensor& total, float scale, float eps, Loc loc) {
  Tensor out = detail::newTile(total, total.shape(), DType::kFp32, "rstd", loc);
  nisa::activation(out, total, ActivationFunction::kRsqrt, eps, scale, AluOp::kAdd, std::nullopt,
                   isa::ReduceCmd::kIdle, loc);
  return out;
}

}  // namespace

Tensor softmax(const Tensor& x, OptDType dtype, Loc loc) {
  detail::requireOnChip(x, "softmax", "x", loc);
  if (x.rank() < 2) {
    detail::fail(x, "softmax", fmt::format("x ({}) has no free dimension", x.describe()), loc);
  }
  const std::int64_t p = x.partitions();
  Tensor negMax = detail::newTile(x, {p, 1}, DType::kFp32, "softmax_max", loc);
  nisa::tensorReduce(negMax, x, AluOp::kMax, 1, /*negate=*/true, loc);
  Tensor e = detail::newTile(x, x.shape(), DType::kFp32, "softmax_exp", loc);
  Tensor total = detail::newTile(x, {p, 1}, DType::kFp32, "softmax_sum", loc);
  nisa::activationReduce(e, total, x, ActivationFunction::kExp, negMax, 1.0f, AluOp::kAdd, loc);
  Tensor inverse = detail::newTile(x, {p, 1}, DType::kFp32, "softmax_inv", loc);
  nisa::reciprocal(inverse, total, loc);
  Tensor out = detail::newTile(x, x.shape(), detail::resultDType(x.dtype(), dtype), "softmax", loc);
  nisa::tensorScalar(out, e, AluOp::kMultiply, inverse, false, AluOp::kBypass, 0.0f, false,
                     std::nullopt, loc);
  return out;
}

Tensor rmsNorm(const Tensor& x, const Tensor& weight, float eps, OptDType dtype, Loc loc) {
  detail::requireOnChip(x, "rmsNorm", "x", loc);
  const Tensor w = perPartition("rmsNorm", "weight", x, weight, loc);
  const std::int64_t p = x.partitions();
  Tensor squares = detail::newTile(x, x.shape(), DType::kFp32, "rms_squares", loc);
  Tensor total = detail::newTile(x, {p, 1}, DType::kFp32, "rms_sum", loc);
  nisa::activationReduce(squares, total, x, ActivationFunction::kSquare, 0.0f, 1.0f, AluOp::kAdd,
                         loc);
  const Tensor rstd = rsqrtOf(total, 1.0f / static_cast<float>(x.freeSize()), eps, loc);
  Tensor out = detail::newTile(x, x.shape(), detail::resultDType(x.dtype(), dtype), "rms", loc);
  nisa::scalarTensorTensor(out, x, AluOp::kMultiply, rstd, AluOp::kMultiply, w, false, false, loc);
  return out;
}

Tensor layerNorm(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                 OptDType dtype, Loc loc) {
  detail::requireOnChip(x, "layerNorm", "x", loc);
  const Tensor g = perPartition("layerNorm", "gamma", x, gamma, loc);
  const Tensor b = perPartition("layerNorm", "beta", x, beta, loc);
  const std::int64_t p = x.partitions();
  const auto n = static_cast<float>(x.freeSize());
  Tensor negMean = detail::newTile(x, {p, 1}, DType::kFp32, "ln_mean", loc);
  nisa::tensorReduce(negMean, x, AluOp::kAdd, 1, /*negate=*/true, loc);
  nisa::tensorScalar(negMean, negMean, AluOp::kDivide, n, false, AluOp::kBypass, 0.0f, false,
                     std::nullopt, loc);
  Tensor squares = detail::newTile(x, x.shape(), DType::kFp32, "ln_squares", loc);
  Tensor total = detail::newTile(x, {p, 1}, DType::kFp32, "ln_sum", loc);
  nisa::activationReduce(squares, total, x, ActivationFunction::kSquare, negMean, 1.0f, AluOp::kAdd,
                         loc);
  const Tensor rstd = rsqrtOf(total, 1.0f / n, eps, loc);
  Tensor normed = detail::newTile(x, x.shape(), DType::kFp32, "ln_normed", loc);
  nisa::tensorScalar(normed, x, AluOp::kAdd, negMean, false, AluOp::kMultiply, rstd, false,
                     std::nullopt, loc);
  Tensor scaled = detail::newTile(x, x.shape(), DType::kFp32, "ln_scaled", loc);
  nisa::tensorTensor(scaled, normed, g, AluOp::kMultiply, std::nullopt, loc);
  Tensor out = detail::newTile(x, x.shape(), detail::resultDType(x.dtype(), dtype), "ln", loc);
  nisa::tensorTensor(out, scaled, b, AluOp::kAdd, std::nullopt, loc);
  return out;
}

}  // namespace trn::kernel::nl
