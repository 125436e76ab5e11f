// Host time to simulate the reference kernels at the NKI matmul tutorial's size: the ladder
// (tiled, hoisted, blocked, fully optimised) for lhsT [8192, 4096] and rhs [8192, 8192] bf16, on
// the trn1 and trn2 descriptions, timing-only. Each benchmark compiles once (its host time is the
// "compile_s" counter) and times the simulation; the counters also give the simulated time and
// the PE utilisation (docs/fidelity.md compares them with the tutorial's Trn1 measurements).
// BM_GemmCompileAndSimulate/4096 times what ONNXim reports 23.6 s for: a whole 4096^3 bf16 GEMM
// (the library's fully optimised matmul) compiled and simulated timing-only on trn2, both in
// every iteration, through Session::runKernel without a kernel cache.
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <string>

#include "trn/kernels/registry.h"
#include "trn/runtime/session.h"

namespace {

using trn::kernel::TensorSpec;

void BM_MatmulLadderTimingOnly(benchmark::State& state, const std::string& name,
                               const std::string& chipName) {
  auto session = trn::runtime::Session::open(chipName);
  if (!session.ok()) {
    state.SkipWithError(session.status().message().c_str());
    return;
  }
  const trn::spec::ChipSpec* chip = &session->chip();
  const trn::kernels::KernelEntry* entry = trn::kernels::findKernel(name);
  const std::vector<TensorSpec> specs = {{"lhsT", {8192, 4096}, trn::DType::kBf16},
                                         {"rhs", {8192, 8192}, trn::DType::kBf16}};
  const auto compileStart = std::chrono::steady_clock::now();
  auto compiled = session->compile(entry->def, specs);
  const std::chrono::duration<double> compileTime = std::chrono::steady_clock::now() - compileStart;
  if (!compiled.ok()) {
    state.SkipWithError(compiled.status().message().c_str());
    return;
  }
  trn::runtime::RunOptions options;
  options.mode = trn::core::RunMode::kTimingOnly;
  trn::core::RunStats stats;
  for (auto _ : state) {
    auto run = session->runKernel(*compiled, {}, options);
    if (!run.ok()) {
      state.SkipWithError(run.status().message().c_str());
      return;
    }
    stats = std::move(run->stats);
  }
  const double seconds = static_cast<double>(stats.total.count()) * 1e-12;
  const double peak = static_cast<double>(chip->core.pe.rows * chip->core.pe.columns) * 2.0 *
                      static_cast<double>(chip->core.pe.clock.count());
  state.counters["compile_s"] = compileTime.count();
  state.counters["simulated_ms"] = seconds * 1e3;
  state.counters["pe_utilisation_pct"] =
      100.0 * static_cast<double>(stats.flops) / (seconds * peak);
  state.counters["instructions"] = static_cast<double>(stats.instructions);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(stats.instructions));
}

/// ONNXim's host time for a 4096^3 GEMM (its paper, as quoted in issue 19).
constexpr double kOnnximGemm4096Seconds = 23.6;

void BM_GemmCompileAndSimulate(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  auto session = trn::runtime::Session::open("trn2");
  if (!session.ok()) {
    state.SkipWithError(session.status().message().c_str());
    return;
  }
  const trn::kernels::KernelEntry* entry = trn::kernels::findKernel("matmul_optimised");
  const std::vector<TensorSpec> specs = {{"lhsT", {n, n}, trn::DType::kBf16},
                                         {"rhs", {n, n}, trn::DType::kBf16}};
  trn::runtime::RunOptions options;
  options.mode = trn::core::RunMode::kTimingOnly;
  trn::core::RunStats stats;
  std::chrono::duration<double> host{0};
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    auto run = session->runKernel(entry->def, specs, {}, options);
    host += std::chrono::steady_clock::now() - start;
    if (!run.ok()) {
      state.SkipWithError(run.status().message().c_str());
      return;
    }
    stats = std::move(run->stats);
  }
  const double perRun = host.count() / static_cast<double>(state.iterations());
  state.counters["instructions"] = static_cast<double>(stats.instructions);
  state.counters["simulated_ms"] = static_cast<double>(stats.total.count()) * 1e-9;
  state.counters["x_faster_than_onnxim"] = kOnnximGemm4096Seconds / perRun;
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(stats.instructions));
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::RegisterBenchmark("BM_GemmCompileAndSimulate", BM_GemmCompileAndSimulate)
      ->Arg(4096)
      ->Unit(benchmark::kMillisecond);
  for (const char* chip : {"trn1", "trn2"}) {
    for (const char* kernel :
         {"matmul_tiled", "matmul_hoisted", "matmul_blocked", "matmul_optimised"}) {
      benchmark::RegisterBenchmark(
          (std::string("BM_MatmulLadderTimingOnly/") + kernel + "/" + chip).c_str(),
          BM_MatmulLadderTimingOnly, std::string(kernel), std::string(chip))
          ->Unit(benchmark::kSecond)
          ->Iterations(1);
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
