// The functional Vector engine's element-wise path: the ALU over a 2048-element row dispatched
// once per element (as every instruction did before) against once per row (applyAluElementwise,
// applyAluWithScalar), in the same run; then whole tensor_tensor and tensor_scalar instructions
// on a functional-only core over [128, 2048] fp32 tiles (reads, ALU, writes). Items are elements.
#include <benchmark/benchmark.h>

#include <fmt/format.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "trn/core/neuron_core.h"
#include "trn/isa/alu.h"
#include "trn/isa/program_text.h"

namespace {

using trn::isa::AluOp;

constexpr std::size_t kRow = 2048;

std::vector<float> randomValues(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (float& x : v) {
    x = dist(rng);
  }
  return v;
}

AluOp opOf(const benchmark::State& state) { return static_cast<AluOp>(state.range(0)); }

void BM_AluPerElementDispatch(benchmark::State& state) {
  std::vector<float> a = randomValues(kRow, 1);
  const std::vector<float> b = randomValues(kRow, 2);
  const AluOp op = opOf(state);
  for (auto _ : state) {
    for (std::size_t i = 0; i < kRow; ++i) {
      a[i] = trn::isa::applyAlu(op, a[i], b[i]);
    }
    benchmark::DoNotOptimize(a.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kRow));
}

void BM_AluPerRowDispatch(benchmark::State& state) {
  std::vector<float> a = randomValues(kRow, 1);
  const std::vector<float> b = randomValues(kRow, 2);
  const AluOp op = opOf(state);
  for (auto _ : state) {
    trn::isa::applyAluElementwise(op, a, b);
    benchmark::DoNotOptimize(a.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kRow));
}

// add, multiply, max: the operators kernels use most.
BENCHMARK(BM_AluPerElementDispatch)
    ->Arg(static_cast<int>(AluOp::kAdd))
    ->Arg(static_cast<int>(AluOp::kMultiply))
    ->Arg(static_cast<int>(AluOp::kMax));
BENCHMARK(BM_AluPerRowDispatch)
    ->Arg(static_cast<int>(AluOp::kAdd))
    ->Arg(static_cast<int>(AluOp::kMultiply))
    ->Arg(static_cast<int>(AluOp::kMax));

/// `instructions` copies of `line` on a functional-only core, run repeatedly.
void runInstructions(benchmark::State& state, const std::string& line, int instructions) {
  std::string text;
  for (int i = 0; i < instructions; ++i) {
    text += line + "\n";
  }
  auto program = trn::isa::parseProgramText(text, "bench.tasm");
  if (!program.ok()) {
    state.SkipWithError(program.status().toString().c_str());
    return;
  }
  trn::core::CoreOptions options;
  options.detectRaces = false;  // one engine: nothing to race
  auto core = trn::core::NeuronCore::create(std::move(program).value(), options);
  if (!core.ok()) {
    state.SkipWithError(core.status().toString().c_str());
    return;
  }
  for (auto _ : state) {
    auto stats = (*core)->run();
    benchmark::DoNotOptimize(stats);
  }
  state.SetItemsProcessed(
      static_cast<std::int64_t>(state.iterations() * instructions * 128 * kRow));
}

void BM_TensorTensorAddInstruction(benchmark::State& state) {
  runInstructions(state,
                  "dve: tensor_tensor dst=sbuf[0:128]:fp32[[1,2048]] "
                  "data0=sbuf[0:128]:fp32[[1,2048]] data1=sbuf[0:128]+8192:fp32[[1,2048]] op=add",
                  16);
}
BENCHMARK(BM_TensorTensorAddInstruction)->Unit(benchmark::kMillisecond);

void BM_TensorScalarInstruction(benchmark::State& state) {
  runInstructions(state,
                  "dve: tensor_scalar dst=sbuf[0:128]:fp32[[1,2048]] "
                  "data=sbuf[0:128]:fp32[[1,2048]] operand0=2.0 op0=multiply operand1=1.0 "
                  "op1=add",
                  16);
}
BENCHMARK(BM_TensorScalarInstruction)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
