// Simulation throughput of the NeuronCore model on a large, realistic program: a generated
// software-pipelined kernel (runtime/program_generator.h: DMA loads on all 16 queues, bf16
// matmuls into PSUM, GELU, Vector and GpSimd work, stores) of 1,000,000 instructions in
// timing-only mode (with and without race detection), and of 100,000 instructions in all three
// modes for the ratio between them (functional mode computes every matmul, so it is slow). Items
// are simulated instructions, so items/s is simulated instructions per second of host time;
// `sim_us` is the simulated time of one run. Creating the core (verification, copying the program,
// allocating memories) is not timed. BM_ChipTimingOnly runs the chip's eight cores together, each
// its own 1/8 of the instructions, the two cores of a pair reading input tensors in their own HBM
// stack and each writing tensors of its own, in one device memory, race detection (within and
// between cores) on: items/s is then aggregate simulated instructions per host second, on one
// thread.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "program_generator.h"
#include "trn/core/device_memory.h"
#include "trn/core/neuron_core.h"
#include "trn/runtime/host_io.h"
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
  state.counters["bytes_per_instr"] = static_cast<double>(w.program.residentBytes()) /
                                      static_cast<double>(w.program.instructionCount());
}

void BM_TimingOnly(benchmark::State& state) { runProgram(state, RunMode::kTimingOnly); }
void BM_TimingOnlyWithoutRaceDetection(benchmark::State& state) {
  runProgram(state, RunMode::kTimingOnly, false);
}
void BM_FunctionalTiming(benchmark::State& state) { runProgram(state, RunMode::kFunctionalTiming); }
void BM_FunctionalOnly(benchmark::State& state) { runProgram(state, RunMode::kFunctionalOnly); }

/// Eight cores of one chip in timing-only mode, state.range(0) instructions in all.
void runChip(benchmark::State& state, bool detectRaces) {
  const Workload& w = workload(state.range(0) / 8);
  if (!w.error.empty()) {
    state.SkipWithError(w.error.c_str());
    return;
  }
  const auto program = std::make_shared<const trn::isa::Program>(w.program);
  const int cores = static_cast<int>(w.chip->chip.neuronCores);
  std::uint64_t executed = 0;
  std::int64_t simulatedPs = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto device = trn::core::DeviceMemory::create(w.chip->hbm.stackCapacity.count(),
                                                  w.chip->hbm.stacks, false, false);
    if (!device.ok()) {
      state.SkipWithError(device.status().toString().c_str());
      break;
    }
    // The two cores of a pair share the input tensors, which lie in the pair's HBM stack (each
    // logical core has its own copy, as a deployment of four LNC=2 cores has); each core's
    // other tensors are its own.
    std::map<std::int64_t, std::vector<std::int64_t>> sharedInStack;
    std::vector<std::unique_ptr<trn::core::NeuronCore>> owned;
    std::vector<trn::core::NeuronCore*> running;
    std::string error;
    for (int c = 0; c < cores && error.empty(); ++c) {
      trn::core::CoreOptions options;
      options.limits = w.limits;
      options.mode = RunMode::kTimingOnly;
      options.chip = w.chip;
      options.physicalCore = c;
      options.logicalCore = c;
      options.device = *device;
      options.detectRaces = detectRaces;
      const std::int64_t stack = w.chip->hbm.stackOfCore[static_cast<std::size_t>(c)];
      const bool firstOfStack = !sharedInStack.contains(stack);
      std::vector<std::int64_t>& shared = sharedInStack[stack];
      for (std::size_t t = 0; t < program->tensors.size() && error.empty(); ++t) {
        const trn::isa::TensorDecl& decl = program->tensors[t];
        const bool input = decl.kind == trn::isa::TensorKind::kInput;
        if (input && !firstOfStack) {
          options.tensorAddresses.push_back(shared[t]);
          continue;
        }
        auto address = (*device)->allocate(decl.byteSize(), stack, decl.name);
        if (!address.ok()) {
          error = address.status().toString();
          break;
        }
        options.tensorAddresses.push_back(*address);
        if (firstOfStack) {
          shared.push_back(*address);
        }
      }
      auto core = trn::core::NeuronCore::create(program, options);
      if (!core.ok()) {
        error = core.status().toString();
        break;
      }
      running.push_back(core->get());
      owned.push_back(std::move(*core));
    }
    state.ResumeTiming();
    if (!error.empty()) {
      state.SkipWithError(error.c_str());
      break;
    }
    trn::Result<std::vector<trn::core::RunStats>> stats = trn::core::runTogether(running);
    state.PauseTiming();
    if (!stats.ok()) {
      error = stats.status().toString();
    } else {
      for (const trn::core::RunStats& s : *stats) {
        executed += s.instructions;
        simulatedPs = std::max(simulatedPs, s.total.count());
      }
    }
    owned.clear();
    state.ResumeTiming();
    if (!error.empty()) {
      state.SkipWithError(error.c_str());
      break;
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(executed));
  state.counters["sim_us"] = static_cast<double>(simulatedPs) * 1e-6;
}

void BM_ChipTimingOnly(benchmark::State& state) { runChip(state, true); }
void BM_ChipTimingOnlyWithoutRaceDetection(benchmark::State& state) { runChip(state, false); }

BENCHMARK(BM_ChipTimingOnly)->Arg(kInstructions)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_ChipTimingOnlyWithoutRaceDetection)
    ->Arg(kInstructions)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
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
