// The float64 references the kernel checks compare with: the BLAS-backed product at the demo's
// projection shape next to the plain i-p-j loop nest it replaced, measured in the same run, and
// the causal attention reference at the demo's shape.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "trn/kernels/attention.h"
#include "trn/kernels/reference.h"

namespace {

using trn::kernels::HostTensor;

HostTensor randomTensor(std::vector<std::int64_t> shape, std::uint64_t seed) {
  return trn::kernels::randomInput({"t", std::move(shape), trn::DType::kFp32}, seed);
}

/// The loop nest the references used before BLAS: row i of c accumulates a[i, p] * b[p, :].
HostTensor loopNestMatmul(const HostTensor& a, const HostTensor& b) {
  const std::int64_t m = a.dim(0);
  const std::int64_t k = a.dim(1);
  const std::int64_t n = b.dim(1);
  HostTensor c = HostTensor::zeros({m, n});
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t p = 0; p < k; ++p) {
      const double x = a[i * k + p];
      for (std::int64_t j = 0; j < n; ++j) {
        c[i * n + j] += x * b[p * n + j];
      }
    }
  }
  return c;
}

void setFlops(benchmark::State& state, double flops) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

constexpr std::int64_t kTokens = 512;
constexpr std::int64_t kHidden = 2048;

void BM_ReferenceMatmulBlas(benchmark::State& state) {
  const HostTensor x = randomTensor({kTokens, kHidden}, 1);
  const HostTensor w = randomTensor({kHidden, kHidden}, 2);
  for (auto _ : state) {
    benchmark::DoNotOptimize(trn::kernels::matmul(x, w).values.data());
  }
  setFlops(state, 2.0 * kTokens * kHidden * kHidden);
}
BENCHMARK(BM_ReferenceMatmulBlas)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ReferenceMatmulLoopNest(benchmark::State& state) {
  const HostTensor x = randomTensor({kTokens, kHidden}, 1);
  const HostTensor w = randomTensor({kHidden, kHidden}, 2);
  for (auto _ : state) {
    benchmark::DoNotOptimize(loopNestMatmul(x, w).values.data());
  }
  setFlops(state, 2.0 * kTokens * kHidden * kHidden);
}
BENCHMARK(BM_ReferenceMatmulLoopNest)->Unit(benchmark::kMillisecond)->UseRealTime();

/// Causal attention with 32 query heads over 4 kv heads of 64 at 512 tokens (the demo's layer).
void BM_AttentionReference(benchmark::State& state) {
  const std::vector<HostTensor> in = {randomTensor({32, kTokens, 64}, 1),
                                      randomTensor({4, kTokens, 64}, 2),
                                      randomTensor({4, kTokens, 64}, 3)};
  for (auto _ : state) {
    benchmark::DoNotOptimize(trn::kernels::attentionReference(in, true).front().values.data());
  }
  setFlops(state, 4.0 * 32 * 64 * kTokens * (kTokens + 1) / 2);
}
BENCHMARK(BM_AttentionReference)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
