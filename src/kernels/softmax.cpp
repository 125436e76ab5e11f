// Row softmax (see softmax.h).
#include "trn/kernels/softmax.h"

#include <cmath>

#include "tile_util.h"
#include "trn/kernel/nisa.h"

namespace trn::kernels {

using detail::clip;
using detail::kPartitions;
using isa::ActivationFunction;
using isa::AluOp;
using kernel::ds;
using kernel::Tensor;
namespace nisa = kernel::nisa;

Tensor softmax(kernel::Kernel& k, Tensor x) {
  detail::requireRank(k, x, 2, "softmax", "x");
  detail::requireFloat(k, x, "softmax", "x");
  const std::int64_t n = x.shape(0);
  const std::int64_t d = x.shape(1);
  Tensor out = k.output("out", {n, d}, x.dtype());
  for (std::int64_t r = 0; r < n; r += kPartitions) {
    const std::int64_t rows = clip(kPartitions, r, n);
    Tensor xt = k.sbuf({rows, d}, x.dtype(), "x_tile");
    nisa::dmaCopy(xt, x(ds(r, rows)));
    Tensor negMax = k.sbuf({rows, 1}, DType::kFp32, "neg_max");
    nisa::tensorReduce(negMax, xt, AluOp::kMax, 1, /*negate=*/true);
    Tensor e = k.sbuf({rows, d}, DType::kFp32, "exp");
    Tensor sum = k.sbuf({rows, 1}, DType::kFp32, "sum");
    nisa::activationReduce(e, sum, xt, ActivationFunction::kExp, negMax);
    Tensor inv = k.sbuf({rows, 1}, DType::kFp32, "inv_sum");
    nisa::reciprocal(inv, sum);
    Tensor ot = k.sbuf({rows, d}, x.dtype(), "out_tile");
    nisa::activation(ot, e, ActivationFunction::kCopy, 0.0f, inv);
    nisa::dmaCopy(out(ds(r, rows)), ot);
  }
  return out;
}

std::vector<HostTensor> softmaxReference(std::span<const HostTensor> in) {
  const HostTensor& x = in[0];
  const std::int64_t n = x.dim(0);
  const std::int64_t d = x.dim(1);
  HostTensor out = HostTensor::zeros(x.shape);
  for (std::int64_t i = 0; i < n; ++i) {
    double max = -INFINITY;
    for (std::int64_t j = 0; j < d; ++j) {
      max = std::max(max, x[i * d + j]);
    }
    double sum = 0;
    for (std::int64_t j = 0; j < d; ++j) {
      out[i * d + j] = std::exp(x[i * d + j] - max);
      sum += out[i * d + j];
    }
    for (std::int64_t j = 0; j < d; ++j) {
      out[i * d + j] /= sum;
    }
  }
  return {out};
}

}  // namespace trn::kernels
