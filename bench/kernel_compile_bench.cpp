// Tracing and compiling speed of the kernel language: a tiled matmul kernel written with the
// isa-level API (per tile: two loads, a bf16 matmul into PSUM, a PSUM->SBUF copy with GELU on the
// scalar engine, a store) sized to 100,000 instructions, traced and run through every backend
// pass (allocation, dependency analysis, DMA placement, synchronisation, lowering with the final
// program verification). Items are instructions, so items/s is compiled instructions per second.
// The per-pass verifier is off, as in release builds by default. Then the library's `linear` and
// `matmul_blocked` kernels from 1024^3 to 8192^3, whose compile times must grow linearly with
// their instructions.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "trn/kernel/compiler.h"
#include "trn/kernel/nisa.h"
#include "tiled_matmul_kernel.h"
#include "trn/kernels/registry.h"

namespace {

using namespace trn::kernel;  // NOLINT(google-build-using-namespace)

using trn::bench::tiledMatmul;
constexpr std::int64_t kInstructionsPerTile = trn::bench::kTiledMatmulInstructionsPerTile;

void BM_CompileKernel(benchmark::State& state) {
  const std::int64_t instructions = state.range(0);
  const std::int64_t tiles = instructions / kInstructionsPerTile;
  const std::vector<TensorSpec> inputs = {{"x", {128, tiles * 512}, trn::DType::kBf16},
                                          {"w", {128, 8 * 128}, trn::DType::kBf16}};
  const KernelDef kernel = makeKernel("tiled_matmul", tiledMatmul);
  CompileOptions options;
  options.verifyEachPass = false;
  for (auto _ : state) {
    auto compiled = compile(kernel, inputs, trn::isa::CoreLimits{}, options);
    if (!compiled.ok()) {
      state.SkipWithError(compiled.status().toString().c_str());
      return;
    }
    benchmark::DoNotOptimize(compiled->program);
  }
  state.SetItemsProcessed(state.iterations() * tiles * kInstructionsPerTile);
}
BENCHMARK(BM_CompileKernel)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

/// Compiles the library kernel `name`, whose two inputs are n x n bf16, at n = state.range(0).
void compileSquare(benchmark::State& state, const char* name) {
  const std::int64_t n = state.range(0);
  const trn::kernels::KernelEntry* entry = trn::kernels::findKernel(name);
  std::vector<TensorSpec> inputs = entry->defaultInputs;
  for (TensorSpec& spec : inputs) {
    spec.shape = {n, n};
  }
  CompileOptions options;
  options.verifyEachPass = false;
  std::int64_t instructions = 0;
  for (auto _ : state) {
    auto compiled = compile(entry->def, inputs, trn::isa::CoreLimits{}, options);
    if (!compiled.ok()) {
      state.SkipWithError(compiled.status().toString().c_str());
      return;
    }
    instructions = static_cast<std::int64_t>(compiled->program.instructionCount());
    benchmark::DoNotOptimize(compiled->program);
  }
  state.counters["instructions"] = static_cast<double>(instructions);
  state.SetItemsProcessed(state.iterations() * instructions);
}

/// The library's `linear` kernel at n x n @ n x n in bf16: it re-reads x and w from HBM for every
/// output tile, the pattern whose dependency analysis must stay linear in instructions.
void BM_CompileLinear(benchmark::State& state) { compileSquare(state, "linear"); }
BENCHMARK(BM_CompileLinear)->Arg(1024)->Arg(2048)->Arg(4096)->Arg(8192)->Unit(benchmark::kMillisecond);

/// The NKI tutorial's blocked matmul (lhsT^T @ rhs, n^3 in bf16): 104,448 instructions at 8192^3.
void BM_CompileMatmulBlocked(benchmark::State& state) { compileSquare(state, "matmul_blocked"); }
BENCHMARK(BM_CompileMatmulBlocked)
    ->Arg(1024)
    ->Arg(2048)
    ->Arg(4096)
    ->Arg(8192)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
