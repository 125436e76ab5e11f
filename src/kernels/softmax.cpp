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

namespace {

/// Row tiles loaded ahead of the one computed.
constexpr std::int64_t kPrefetch = 2;

}  // namespace

Tensor softmax(kernel::Kernel& k, Tensor x) {
  detail::requireRank(k, x, 2, "softmax", "x");
  detail::requireFloat(k, x, "softmax", "x");
  const std::int64_t n = x.shape(0);
  const std::int64_t d = x.shape(1);
  Tensor out = k.output("out", {n, d}, x.dtype());
  // Rows are independent: each SPMD program instance takes a block of whole 128-row tiles.
  const detail::ProgramShare share = detail::programShare(k, n, kPartitions);
  if (share.empty()) {
    return out;
  }
  // The row max of 16-bit inputs is one of them, so it is exact in their dtype, and a reduce
  // whose operands are all bf16 streams two elements per cycle.
  const DType maxType = x.dtype() == DType::kFp32 ? DType::kFp32 : x.dtype();
  detail::TilePrefetcher tiles(
      (share.count + kPartitions - 1) / kPartitions, kPrefetch,
      [&](std::int64_t i, std::source_location site) {
        const std::int64_t r = share.begin + i * kPartitions;
        Tensor xt = k.sbuf({clip(kPartitions, r, n), d}, x.dtype(), "x_tile", std::nullopt, site);
        nisa::dmaCopy(xt, x(ds(r, xt.partitions())), std::nullopt, std::nullopt,
                      isa::DmaOobMode::kError, std::nullopt, site);
        return xt;
      });
  for (std::int64_t r = share.begin; r < share.end(); r += kPartitions) {
    const std::int64_t rows = clip(kPartitions, r, n);
    const Tensor xt = tiles.take();
    Tensor negMax = k.sbuf({rows, 1}, maxType, "neg_max");
    nisa::tensorReduce(negMax, xt, AluOp::kMax, 1, /*negate=*/true);
    Tensor e = k.sbuf({rows, d}, DType::kFp32, "exp");
    Tensor sum = k.sbuf({rows, 1}, DType::kFp32, "sum");
    nisa::activationReduce(e, sum, xt, ActivationFunction::kExp, negMax);
    Tensor inv = k.sbuf({rows, 1}, DType::kFp32, "inv_sum");
    nisa::reciprocal(inv, sum);
    Tensor ot = k.sbuf({rows, d}, x.dtype(), "out_tile");
    nisa::tensorScalar(ot, e, AluOp::kMultiply, inv, false, AluOp::kBypass, 0.0f, false,
                       isa::Engine::kPool);
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
