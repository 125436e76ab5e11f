#include "trn/kernels/elementwise.h"

#include <algorithm>

#include "trn/kernel/nisa.h"

namespace trn::kernels {

using kernel::ds;
using kernel::Tensor;

Tensor tensorAdd(kernel::Kernel& k, Tensor a, Tensor b) {
  if (a.shape() != b.shape() || a.rank() != 2) {
    k.fail("tensor_add takes two 2-D tensors of one shape", std::source_location::current());
  }
  Tensor out = k.output("out", a.shape(), a.dtype());
  for (std::int64_t r = 0; r < a.shape(0); r += 128) {
    const std::int64_t rows = std::min<std::int64_t>(128, a.shape(0) - r);
    Tensor x = k.sbuf({rows, a.shape(1)}, a.dtype(), "a_tile");
    Tensor y = k.sbuf({rows, a.shape(1)}, b.dtype(), "b_tile");
    kernel::nisa::dmaCopy(x, a(ds(r, rows)));
    kernel::nisa::dmaCopy(y, b(ds(r, rows)));
    kernel::nisa::tensorTensor(x, x, y, isa::AluOp::kAdd);
    kernel::nisa::dmaCopy(out(ds(r, rows)), x);
  }
  return out;
}

}  // namespace trn::kernels
