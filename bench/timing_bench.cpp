// Simulation throughput of the NeuronCore model on a large, realistic program: a generated
// software-pipelined kernel (runtime/program_generator.h: DMA loads on all 16 queues, bf16
// matmuls into PSUM, GELU, Vector and GpSimd work, stores) of 1,000,000 instructions in
// timing-only mode (with and without race detection), and of 100,000 instructions in all three
// modes for the ratio between them (functional mode computes every matmul, so it is slow). Items
// are simulated instructions, so items/s is simulated instructions per second of host time;
// `sim_us` is the simulated time of one run. Creating the core (verification, copying the program,
// allocating memories) is not timed.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "trn/core/neuron_core.h"
#include "trn/runtime/host_io.h"
#include "program_generator.h"
#include "trn/runtime/session.h"
#include "trn/spec/loader.h"

namespace {

using trn::core::RunMode;

constexpr std::int64_t kInstructions = 1'000'000;

/// A generated program and the chip it runs on, or why it could not be made.
struct Workload {
  std::shared_ptr<const trn::spec::ChipSpec> chip;
  trn::isa::CoreLimits limits;
  trn::isa::Program program;
  double generateSeconds = 0;
  std::string error;
};

Workload makeWorkload(std::int64_t instructions) {
  Workload w;
  trn::Result<trn::spec::ChipSpec> chip = trn::spec::loadChip("trn2");
  if (!chip.ok()) {
    w.error = chip.status().toString();
    return w;
  }
  w.chip = std::make_shared<const trn::spec::ChipSpec>(std::move(chip).value());
  w.limits = trn::runtime::coreLimits(*w.chip);
  trn::bench::GeneratorOptions options;
  options.instructions = instructions;
  const auto start = std::chrono::steady_clock::now();
  trn::Result<trn::isa::Program> program = trn::bench::generatePipelineProgram(options, w.limits);
  w.generateSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!program.ok()) {
    w.error = program.status().toString();
    return w;
  }
  w.program = std::move(program).value();
  return w;
}

/// The workload of `instructions` instructions, generated on first use.
const Workload& workload(std::int64_t instructions) {
  static std::map<std::int64_t, Workload> cache;
  auto it = cache.find(instructions);
  if (it == cache.end()) {
    it = cache.emplace(instructions, makeWorkload(instructions)).first;
  }
  return it->second;
}

/// Runs the workload of state.range(0) instructions in `mode`, timing only run().
void runProgram(benchmark::State& state, RunMode mode, bool detectRaces = true) {
  const Workload& w = workload(state.range(0));
  if (!w.error.empty()) {
    state.SkipWithError(w.error.c_str());
    return;
  }
  std::uint64_t executed = 0;
  std::int64_t simulatedPs = 0;
  for (auto _ : state) {
    state.PauseTiming();
    trn::core::CoreOptions options;
    options.limits = w.limits;
    options.mode = mode;
    options.chip = w.chip;
    options.detectRaces = detectRaces;
    trn::Result<std::unique_ptr<trn::core::NeuronCore>> core =
        trn::core::NeuronCore::create(w.program, options);
    state.ResumeTiming();
    if (!core.ok()) {
      state.SkipWithError(core.status().toString().c_str());
      break;
    }
    trn::Result<trn::core::RunStats> stats = (*core)->run();
    state.PauseTiming();
    std::string error;
    if (!stats.ok()) {
      error = stats.status().toString();
    } else if (stats->mode != mode) {
      error = fmt::format("the core ran {} instead of {}", trn::core::runModeName(stats->mode),
                          trn::core::runModeName(mode));
    } else {
      executed += stats->instructions;
      simulatedPs = stats->total.count();
    }
    core->reset();  // free the memories outside the timed region
    state.ResumeTiming();
    if (!error.empty()) {
      state.SkipWithError(error.c_str());
      break;
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(executed));
  state.counters["sim_us"] = static_cast<double>(simulatedPs) * 1e-6;
  state.counters["generate_s"] = w.generateSeconds;
}

void BM_TimingOnly(benchmark::State& state) { runProgram(state, RunMode::kTimingOnly); }
void BM_TimingOnlyWithoutRaceDetection(benchmark::State& state) {
  runProgram(state, RunMode::kTimingOnly, false);
}
void BM_FunctionalTiming(benchmark::State& state) { runProgram(state, RunMode::kFunctionalTiming); }
void BM_FunctionalOnly(benchmark::State& state) { runProgram(state, RunMode::kFunctionalOnly); }

BENCHMARK(BM_TimingOnly)
    ->Arg(100'000)
    ->Arg(kInstructions)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK(BM_TimingOnlyWithoutRaceDetection)
    ->Arg(kInstructions)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK(BM_FunctionalTiming)->Arg(100'000)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_FunctionalOnly)->Arg(100'000)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
