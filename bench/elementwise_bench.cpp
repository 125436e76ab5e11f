// The functional element-wise path: the ALU and the activation functions over a 2048-element row
// dispatched once per element (as every instruction did before) against once per row
// (applyAluElementwise, applyActivationRow), in the same run; then whole tensor_tensor,
// tensor_scalar and activation instructions on a functional-only core over [128, 2048] fp32
// tiles (reads, compute, writes). Items are elements.
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

using trn::isa::ActivationFunction;

ActivationFunction functionOf(const benchmark::State& state) {
  return static_cast<ActivationFunction>(state.range(0));
}

void BM_ActivationPerElementDispatch(benchmark::State& state) {
  const std::vector<float> input = randomValues(kRow, 3);
  std::vector<float> out(kRow);
  const ActivationFunction f = functionOf(state);
  for (auto _ : state) {
    for (std::size_t i = 0; i < kRow; ++i) {
      const float scaled = input[i] * 0.5f;
      out[i] = trn::isa::applyActivation(f, scaled + 0.25f);
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kRow));
}

void BM_ActivationPerRowDispatch(benchmark::State& state) {
  const std::vector<float> input = randomValues(kRow, 3);
  std::vector<float> out(kRow);
  const ActivationFunction f = functionOf(state);
  for (auto _ : state) {
    trn::isa::applyActivationRow(f, input, out, 0.5f, 0.25f);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kRow));
}

// copy (a plain affine stage), relu, exp and gelu: the functions kernels use most.
BENCHMARK(BM_ActivationPerElementDispatch)
    ->Arg(static_cast<int>(ActivationFunction::kCopy))
    ->Arg(static_cast<int>(ActivationFunction::kRelu))
    ->Arg(static_cast<int>(ActivationFunction::kExp))
    ->Arg(static_cast<int>(ActivationFunction::kGelu));
BENCHMARK(BM_ActivationPerRowDispatch)
    ->Arg(static_cast<int>(ActivationFunction::kCopy))
    ->Arg(static_cast<int>(ActivationFunction::kRelu))
    ->Arg(static_cast<int>(ActivationFunction::kExp))
    ->Arg(static_cast<int>(ActivationFunction::kGelu));

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

void BM_ActivationInstruction(benchmark::State& state) {
  const std::string function = state.range(0) == 0 ? "copy" : "gelu";
  const std::string line = fmt::format(
      "act: activation dst=sbuf[0:128]:fp32[[1,2048]] data=sbuf[0:128]:fp32[[1,2048]] op={} "
      "scale=2.0 bias=0.5",
      function);
  runInstructions(state, line, 16);
}
BENCHMARK(BM_ActivationInstruction)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
