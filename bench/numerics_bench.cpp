// Throughput of the bulk dtype conversions on arrays far larger than the caches (16M fp32 =
// 64 MiB), next to memcpy of the same 64 MiB in the same run. Every benchmark reports
// bytes_per_second over the fp32 side of the conversion only (4 bytes per element: the input of
// a narrowing, the output of a widening), measured on wall-clock time, so the figures compare
// directly with memcpy's (which counts its 64 MiB source once, not source plus destination).
// Stochastic rounding includes generating one Philox4x32-10 block per four elements.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "trn/base/rng.h"
#include "trn/numerics/convert.h"

namespace trn {
namespace {

constexpr std::size_t kElements = std::size_t{16} << 20;
constexpr std::int64_t kFp32Bytes = static_cast<std::int64_t>(kElements * sizeof(float));

/// Log-uniform magnitudes from 2^-12 to 2^9 with random signs: every path of the fp8 and fp16
/// kernels (subnormal, normal, overflow) is taken, as in real activations and gradients.
const std::vector<float>& inputs() {
  static const std::vector<float> values = [] {
    std::vector<float> v(kElements);
    const CounterRng rng(2026, 11);
    for (std::size_t i = 0; i < kElements; ++i) {
      const std::uint32_t word = rng.at(i);
      const float magnitude = std::ldexp(1.0f + static_cast<float>(word & 0xFFFF) / 65536.0f,
                                         static_cast<int>((word >> 16) % 22) - 12);
      v[i] = (word >> 31) != 0 ? -magnitude : magnitude;
    }
    return v;
  }();
  return values;
}

void finish(benchmark::State& state) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * kFp32Bytes);
  state.SetLabel(std::string(simdTargetName()));
}

void memcpy64MiB(benchmark::State& state) {
  const std::vector<float>& src = inputs();
  std::vector<float> dst(kElements);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), kElements * sizeof(float));
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  finish(state);
}

void narrow(benchmark::State& state, DType type, RoundingMode mode) {
  const std::vector<float>& src = inputs();
  std::vector<std::byte> dst(kElements * static_cast<std::size_t>(byteSize(type)));
  ConvertOptions options;
  options.rounding = mode;
  options.seed = 1;
  for (auto _ : state) {
    convertFromFloat(src, type, dst, options);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  finish(state);
}

void widen(benchmark::State& state, DType type) {
  std::vector<std::byte> src(kElements * static_cast<std::size_t>(byteSize(type)));
  convertFromFloat(inputs(), type, src);
  std::vector<float> dst(kElements);
  for (auto _ : state) {
    convertToFloat(src, type, dst);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  finish(state);
}

/// The scalar definition called per element, for comparison with the SIMD kernel.
void scalarBf16(benchmark::State& state) {
  const std::vector<float>& src = inputs();
  std::vector<std::uint16_t> dst(kElements);
  for (auto _ : state) {
    for (std::size_t i = 0; i < kElements; ++i) {
      dst[i] = static_cast<std::uint16_t>(encodeFloat(src[i], DType::kBf16));
    }
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  finish(state);
}

/// Milliseconds, wall-clock time (the conversions are single-threaded and memory-bound).
void configure(benchmark::internal::Benchmark* b) {
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK(memcpy64MiB)->Name("memcpy_64MiB")->Apply(configure);
BENCHMARK_CAPTURE(narrow, fp32_to_bf16_rne, DType::kBf16, RoundingMode::kNearestEven)
    ->Apply(configure);
BENCHMARK_CAPTURE(narrow, fp32_to_fp8_e4m3_rne, DType::kFp8E4m3, RoundingMode::kNearestEven)
    ->Apply(configure);
BENCHMARK_CAPTURE(narrow, fp32_to_fp16_rne, DType::kFp16, RoundingMode::kNearestEven)
    ->Apply(configure);
BENCHMARK_CAPTURE(narrow, fp32_to_fp8_e5m2_rne, DType::kFp8E5m2, RoundingMode::kNearestEven)
    ->Apply(configure);
BENCHMARK_CAPTURE(narrow, fp32_to_bf16_stochastic, DType::kBf16, RoundingMode::kStochastic)
    ->Apply(configure);
BENCHMARK(scalarBf16)->Name("scalar_loop/fp32_to_bf16_rne")->Apply(configure);
BENCHMARK_CAPTURE(widen, bf16_to_fp32, DType::kBf16)->Apply(configure);
BENCHMARK_CAPTURE(widen, fp16_to_fp32, DType::kFp16)->Apply(configure);
BENCHMARK_CAPTURE(widen, fp8_e4m3_to_fp32, DType::kFp8E4m3)->Apply(configure);

}  // namespace
}  // namespace trn

BENCHMARK_MAIN();
