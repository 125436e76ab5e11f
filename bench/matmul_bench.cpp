// TensorE matmul emulation throughput next to single-threaded OpenBLAS sgemm on the same shapes,
// in the same run: one 128x128 (stationary) by 128x512 (moving) tile, and a 1024^3 product built
// from such tiles with PSUM accumulation over the contraction, as a kernel would issue them.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <fmt/format.h>

#include <bit>
#include <cstdint>
#include <random>
#include <vector>

#include "trn/core/neuron_core.h"
#include "trn/isa/matmul_kernel.h"
#include "trn/isa/program_text.h"

extern "C" void openblas_set_num_threads(int threads);
extern "C" char* openblas_get_corename();

namespace {

using trn::isa::MatrixView;
using trn::isa::PsumWrite;

/// Random values representable in bf16, as a bf16 kernel's operands are after widening.
std::vector<float> randomBf16Values(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) {
    x = std::bit_cast<float>(std::bit_cast<std::uint32_t>(dist(rng)) & 0xffff0000u);
  }
  return v;
}

void setFlops(benchmark::State& state, double flopsPerIteration) {
  state.counters["GFLOP/s"] = benchmark::Counter(flopsPerIteration * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(std::string("openblas core ") + openblas_get_corename());
}

constexpr std::size_t kTileK = 128;
constexpr std::size_t kTileM = 128;
constexpr std::size_t kTileN = 512;

void BM_TileEmulation(benchmark::State& state) {
  const auto stationary = randomBf16Values(kTileK * kTileM, 1);
  const auto moving = randomBf16Values(kTileK * kTileN, 2);
  std::vector<float> out(kTileM * kTileN);
  for (auto _ : state) {
    trn::isa::matmulTile({stationary.data(), kTileK, kTileM, kTileM},
                          {moving.data(), kTileK, kTileN, kTileN},
                          {out.data(), kTileM, kTileN, kTileN}, PsumWrite::kOverwrite);
    benchmark::DoNotOptimize(out.data());
  }
  setFlops(state, 2.0 * kTileK * kTileM * kTileN);
}
BENCHMARK(BM_TileEmulation);

void BM_TileOpenBlas(benchmark::State& state) {
  openblas_set_num_threads(1);
  const auto stationary = randomBf16Values(kTileK * kTileM, 1);
  const auto moving = randomBf16Values(kTileK * kTileN, 2);
  std::vector<float> out(kTileM * kTileN);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, kTileM, kTileN, kTileK, 1.0f,
                stationary.data(), kTileM, moving.data(), kTileN, 0.0f, out.data(), kTileN);
    benchmark::DoNotOptimize(out.data());
  }
  setFlops(state, 2.0 * kTileK * kTileM * kTileN);
}
BENCHMARK(BM_TileOpenBlas);

/// The whole nc_matmul instruction on the functional core: bf16 operands read from SBUF and
/// widened, the tile product, and the fp32 PSUM accumulation, 16 instructions per run. SBUF is
/// left zero-filled; the fused multiply-adds take the same time for any finite values.
void BM_NcMatmulInstruction(benchmark::State& state) {
  constexpr int kInstructions = 16;
  std::string text;
  for (int i = 0; i < kInstructions; ++i) {
    text += fmt::format(
        "pe: nc_matmul dst=psum[0:128]:fp32[[1,512]] stationary=sbuf[0:128]:bf16[[1,128]] "
        "moving=sbuf[0:128]+256:bf16[[1,512]] accumulate={}\n",
        i > 0);
  }
  auto program = trn::isa::parseProgramText(text, "bench.tasm");
  auto core = trn::core::NeuronCore::create(std::move(program).value(), {});
  if (!core.ok()) {
    state.SkipWithError(core.status().toString().c_str());
    return;
  }
  for (auto _ : state) {
    auto stats = (*core)->run();
    benchmark::DoNotOptimize(stats);
  }
  setFlops(state, 2.0 * kTileK * kTileM * kTileN * kInstructions);
}
BENCHMARK(BM_NcMatmulInstruction);

constexpr std::size_t kSize = 1024;

/// out (M x N) = lhsT^T * rhs with lhsT K x M and rhs K x N, issued as 128x128x512 tiles: the
/// first K tile of each output block overwrites PSUM, later ones accumulate.
void tiledProduct(const std::vector<float>& lhsT, const std::vector<float>& rhs,
                  std::vector<float>& out) {
  for (std::size_t m = 0; m < kSize; m += kTileM) {
    for (std::size_t n = 0; n < kSize; n += kTileN) {
      for (std::size_t k = 0; k < kSize; k += kTileK) {
        trn::isa::matmulTile({lhsT.data() + k * kSize + m, kTileK, kTileM, kSize},
                              {rhs.data() + k * kSize + n, kTileK, kTileN, kSize},
                              {out.data() + m * kSize + n, kTileM, kTileN, kSize},
                              k == 0 ? PsumWrite::kOverwrite : PsumWrite::kAccumulate);
      }
    }
  }
}

void BM_Product1024Emulation(benchmark::State& state) {
  const auto lhsT = randomBf16Values(kSize * kSize, 3);
  const auto rhs = randomBf16Values(kSize * kSize, 4);
  std::vector<float> out(kSize * kSize);
  std::vector<float> again(kSize * kSize);
  tiledProduct(lhsT, rhs, again);
  for (auto _ : state) {
    tiledProduct(lhsT, rhs, out);
    benchmark::DoNotOptimize(out.data());
  }
  if (out != again) {
    state.SkipWithError("results differ between runs");
  }
  setFlops(state, 2.0 * kSize * kSize * kSize);
}
BENCHMARK(BM_Product1024Emulation)->Unit(benchmark::kMillisecond);

void BM_Product1024OpenBlas(benchmark::State& state) {
  openblas_set_num_threads(1);
  const auto lhsT = randomBf16Values(kSize * kSize, 3);
  const auto rhs = randomBf16Values(kSize * kSize, 4);
  std::vector<float> out(kSize * kSize);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, kSize, kSize, kSize, 1.0f, lhsT.data(),
                kSize, rhs.data(), kSize, 0.0f, out.data(), kSize);
    benchmark::DoNotOptimize(out.data());
  }
  setFlops(state, 2.0 * kSize * kSize * kSize);
}
BENCHMARK(BM_Product1024OpenBlas)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
