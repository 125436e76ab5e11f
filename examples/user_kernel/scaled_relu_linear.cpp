#include "scaled_relu_linear.h"

#include <algorithm>
#include <cmath>
#include <source_location>

#include "trn/kernel/nisa.h"
#include "trn/kernel/nl.h"

namespace user_kernel {

namespace nl = trn::kernel::nl;
namespace nisa = trn::kernel::nisa;
using trn::DType;
using trn::kernel::ds;
using trn::kernel::Kernel;
using trn::kernel::Tensor;

namespace {

Tensor body(Kernel& k, Tensor x, Tensor w) {
  const std::int64_t m = x.shape(0);
  const std::int64_t kTotal = x.shape(1);
  const std::int64_t n = w.shape(1);
  if (x.rank() != 2 || w.rank() != 2 || w.shape(0) != kTotal || n > 512) {
    k.fail("scaled_relu_linear takes x [M, K] and w [K, N] with N <= 512",
           std::source_location::current());
  }
  Tensor out = k.output("out", {m, n}, DType::kFp32);
  for (std::int64_t r = 0; r < m; r += 128) {
    const std::int64_t rows = std::min<std::int64_t>(128, m - r);
    Tensor acc = k.psum({rows, n}, DType::kFp32, "acc");
    for (std::int64_t c = 0; c < kTotal; c += 128) {
      const std::int64_t depth = std::min<std::int64_t>(128, kTotal - c);
      const Tensor xTile = nl::load(x(ds(r, rows), ds(c, depth)));  // [rows, depth]: [M, K]
      const Tensor wTile = nl::load(w(ds(c, depth)));               // [depth, N]
      nl::matmulAccumulate(acc, xTile, wTile, /*accumulate=*/c > 0);
    }
    Tensor result = k.sbuf({rows, n}, DType::kFp32, "result");
    nisa::activation(result, acc, nisa::ActivationFunction::kRelu, /*bias=*/0.0f,
                     /*scale=*/kScale);
    nl::store(out(ds(r, rows)), result);
  }
  return out;
}

}  // namespace

trn::kernel::KernelDef scaledReluLinear() {
  return trn::kernel::makeKernel("scaled_relu_linear", body);
}

std::vector<double> scaledReluLinearReference(const std::vector<double>& x,
                                              const std::vector<double>& w, long m, long k, long n,
                                              std::vector<double>* bound) {
  std::vector<double> out(static_cast<std::size_t>(m * n));
  if (bound != nullptr) {
    bound->assign(out.size(), 0.0);
  }
  const double unit = std::ldexp(1.0, -24);  // fp32 unit roundoff
  for (long i = 0; i < m; ++i) {
    for (long j = 0; j < n; ++j) {
      double sum = 0;
      double magnitude = 0;
      for (long c = 0; c < k; ++c) {
        const double product =
            x[static_cast<std::size_t>(i * k + c)] * w[static_cast<std::size_t>(c * n + j)];
        sum += product;
        magnitude += std::fabs(product);
      }
      const double value = std::max(0.0, static_cast<double>(kScale) * sum);
      out[static_cast<std::size_t>(i * n + j)] = value;
      if (bound != nullptr) {
        (*bound)[static_cast<std::size_t>(i * n + j)] =
            static_cast<double>(kScale) * static_cast<double>(k) * unit * magnitude + unit * value +
            1e-30;
      }
    }
  }
  return out;
}

}  // namespace user_kernel
