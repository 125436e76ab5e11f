// Free-dimension transpose (see transpose.h).
#include "trn/kernels/transpose.h"

#include "tile_util.h"
#include "trn/kernel/nisa.h"

namespace trn::kernels {

using detail::clip;
using detail::kPartitions;
using kernel::all;
using kernel::ds;
using kernel::Tensor;
namespace nisa = kernel::nisa;

namespace {

/// Bytes of one row's block per tile: two rings of input and output tiles stay well inside a
/// partition's SBUF, and the copy's strides fit the access pattern's 16-bit fields.
constexpr std::int64_t kBlockBytes = 32 * 1024;

}  // namespace

Tensor transpose2d(kernel::Kernel& k, Tensor x) {
  detail::requireRank(k, x, 3, "transpose2d", "x [P, F1, F2]");
  const std::int64_t p = x.shape(0);
  const std::int64_t f1 = x.shape(1);
  const std::int64_t f2 = x.shape(2);
  Tensor out = k.output("out", {p, f2, f1}, x.dtype());
  const std::int64_t blockElems = kBlockBytes / byteSize(x.dtype());
  const std::int64_t b2 = std::min(f2, blockElems);
  const std::int64_t b1 = std::min(f1, std::max<std::int64_t>(1, blockElems / b2));
  for (std::int64_t r = 0; r < p; r += kPartitions) {
    const std::int64_t rows = clip(kPartitions, r, p);
    for (std::int64_t i0 = 0; i0 < f1; i0 += b1) {
      const std::int64_t n1 = clip(b1, i0, f1);
      for (std::int64_t j0 = 0; j0 < f2; j0 += b2) {
        const std::int64_t n2 = clip(b2, j0, f2);
        Tensor in = k.sbuf({rows, n1, n2}, x.dtype(), "in_tile");
        nisa::dmaCopy(in, x(ds(r, rows), ds(i0, n1), ds(j0, n2)));
        // The destination is written in order; the source is read column by column.
        Tensor t = k.sbuf({rows, n2, n1}, x.dtype(), "out_tile");
        nisa::tensorCopy(t, in.permute({0, 2, 1}));
        nisa::dmaCopy(out(ds(r, rows), ds(j0, n2), ds(i0, n1)), t);
      }
    }
  }
  return out;
}

std::vector<HostTensor> transpose2dReference(std::span<const HostTensor> in) {
  const HostTensor& x = in[0];
  const std::int64_t p = x.dim(0);
  const std::int64_t f1 = x.dim(1);
  const std::int64_t f2 = x.dim(2);
  HostTensor out = HostTensor::zeros({p, f2, f1});
  for (std::int64_t r = 0; r < p; ++r) {
    for (std::int64_t i = 0; i < f1; ++i) {
      for (std::int64_t j = 0; j < f2; ++j) {
        out[(r * f2 + j) * f1 + i] = x[(r * f1 + i) * f2 + j];
      }
    }
  }
  return {out};
}

}  // namespace trn::kernels
