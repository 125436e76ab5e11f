// The tile kernel the compile and tracing benchmarks share: out[:, j] = gelu(w^T @ x[:, j]) for
// column blocks of 512, five instructions a tile (two loads, a bf16 matmul into PSUM, GELU from
// PSUM to SBUF, a store). python_trace_bench holds the same kernel written in Python.
#pragma once

#include <cstdint>

#include "trn/kernel/kernel.h"
#include "trn/kernel/nisa.h"

namespace trn::bench {

inline constexpr std::int64_t kTiledMatmulInstructionsPerTile = 5;

inline kernel::Tensor tiledMatmul(kernel::Kernel& k, kernel::Tensor x, kernel::Tensor w) {
  using kernel::all;
  using kernel::ds;
  using kernel::Tensor;
  namespace nisa = kernel::nisa;
  const std::int64_t tiles = x.shape(1) / 512;
  Tensor out = k.output("out", {128, x.shape(1)}, DType::kBf16);
  for (std::int64_t t = 0; t < tiles; ++t) {
    Tensor xs = k.sbuf({128, 512}, DType::kBf16, "x");
    Tensor ws = k.sbuf({128, 128}, DType::kBf16, "w");
    nisa::dmaCopy(xs, x(all, ds(t * 512, 512)));
    nisa::dmaCopy(ws, w(all, ds(t % 8 * 128, 128)));
    Tensor acc = k.psum({128, 512}, DType::kFp32, "acc");
    nisa::ncMatmul(acc, ws, xs);
    Tensor y = k.sbuf({128, 512}, DType::kBf16, "y");
    nisa::activation(y, acc, isa::ActivationFunction::kGelu);
    nisa::dmaCopy(out(all, ds(t * 512, 512)), y);
  }
  return out;
}

}  // namespace trn::bench
