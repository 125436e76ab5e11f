#include "trn/kernels/elementwise.h"

#include <algorithm>

#include "trn/kernel/nisa.h"

namespace trn::kernels {

using kernel::ds;
using kernel::Tensor;

/// Columns per tile: the a and b tiles, double-buffered, take at most 4 x 32 KiB of a partition
/// (fp32), so rows of any length fit SBUF; shorter rows are one tile wide.
constexpr std::int64_t kMaxColumns = 8192;

Tensor tensorAdd(kernel::Kernel& k, Tensor a, Tensor b) {
  if (a.shape() != b.shape() || a.rank() != 2) {
    k.fail("tensor_add takes two 2-D tensors of one shape", std::source_location::current());
  }
  Tensor out = k.output("out", a.shape(), a.dtype());
  const std::int64_t n = a.shape(0);
  const std::int64_t d = a.shape(1);
  for (std::int64_t r = 0; r < n; r += 128) {
    const std::int64_t rows = std::min<std::int64_t>(128, n - r);
    for (std::int64_t c = 0; c < d; c += kMaxColumns) {
      const std::int64_t cols = std::min(kMaxColumns, d - c);
      Tensor x = k.sbuf({rows, cols}, a.dtype(), "a_tile");
      Tensor y = k.sbuf({rows, cols}, b.dtype(), "b_tile");
      kernel::nisa::dmaCopy(x, a(ds(r, rows), ds(c, cols)));
      kernel::nisa::dmaCopy(y, b(ds(r, rows), ds(c, cols)));
      kernel::nisa::tensorTensor(x, x, y, isa::AluOp::kAdd);
      kernel::nisa::dmaCopy(out(ds(r, rows), ds(c, cols)), x);
    }
  }
  return out;
}

}  // namespace trn::kernels
