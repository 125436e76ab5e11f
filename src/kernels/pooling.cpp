// 2-D average pooling (see pooling.h).
#include "trn/kernels/pooling.h"

#include <string>

#include "tile_util.h"
#include "trn/kernel/nisa.h"

namespace trn::kernels {

using detail::clip;
using detail::kPartitions;
using isa::AluOp;
using kernel::all;
using kernel::ds;
using kernel::Tensor;
namespace nisa = kernel::nisa;

namespace {

/// Input bytes per channel in one tile (a band of whole pool rows).
constexpr std::int64_t kBandBytes = 32 * 1024;

}  // namespace

Tensor avgPool2d(kernel::Kernel& k, Tensor x, std::int64_t pool) {
  detail::requireRank(k, x, 3, "avgpool2d", "x [C, H, W]");
  detail::requireFloat(k, x, "avgpool2d", "x");
  const std::int64_t c = x.shape(0);
  const std::int64_t h = x.shape(1);
  const std::int64_t w = x.shape(2);
  if (pool < 1 || h % pool != 0 || w % pool != 0) {
    k.fail("avgpool2d: H = " + std::to_string(h) + " and W = " + std::to_string(w) +
               " must be multiples of the pool size " + std::to_string(pool),
           std::source_location::current());
  }
  const std::int64_t ho = h / pool;
  const std::int64_t wo = w / pool;
  Tensor out = k.output("out", {c, ho, wo}, x.dtype());
  const std::int64_t rowBytes = pool * w * byteSize(x.dtype());
  const std::int64_t band = std::min(ho, std::max<std::int64_t>(1, kBandBytes / rowBytes));
  for (std::int64_t c0 = 0; c0 < c; c0 += kPartitions) {
    const std::int64_t cs = clip(kPartitions, c0, c);
    for (std::int64_t i0 = 0; i0 < ho; i0 += band) {
      const std::int64_t hb = clip(band, i0, ho);
      Tensor in = k.sbuf({cs, hb * pool, w}, x.dtype(), "in_tile");
      nisa::dmaCopy(in, x(ds(c0, cs), ds(i0 * pool, hb * pool)));
      // [cs, hb, pool, wo, pool] -> [cs, hb, wo, pool, pool]: each window is the two innermost
      // dimensions, and one reduce over them sums every window of the band.
      const Tensor windows = in.reshape({cs, hb, pool, wo, pool}).permute({0, 1, 3, 2, 4});
      Tensor sums = k.sbuf({cs, hb, wo}, DType::kFp32, "window_sums");
      nisa::tensorReduce(sums, windows, AluOp::kAdd, 3);
      Tensor t = k.sbuf({cs, hb, wo}, x.dtype(), "out_tile");
      nisa::tensorScalar(t, sums, AluOp::kDivide, static_cast<float>(pool * pool));
      nisa::dmaCopy(out(ds(c0, cs), ds(i0, hb)), t);
    }
  }
  return out;
}

std::vector<HostTensor> avgPool2dReference(std::span<const HostTensor> in, std::int64_t pool) {
  const HostTensor& x = in[0];
  const std::int64_t c = x.dim(0);
  const std::int64_t h = x.dim(1);
  const std::int64_t w = x.dim(2);
  const std::int64_t ho = h / pool;
  const std::int64_t wo = w / pool;
  HostTensor out = HostTensor::zeros({c, ho, wo});
  for (std::int64_t ch = 0; ch < c; ++ch) {
    for (std::int64_t i = 0; i < h; ++i) {
      for (std::int64_t j = 0; j < w; ++j) {
        out[(ch * ho + i / pool) * wo + j / pool] += x[(ch * h + i) * w + j];
      }
    }
  }
  for (double& v : out.values) {
    v /= static_cast<double>(pool * pool);
  }
  return {out};
}

}  // namespace trn::kernels
