// Functional execution of a logical core on the host's cores: a kernel launched at LNC=2 on trn2
// (its two SPMD programs on physical cores 0 and 1), its data computed on one host thread for
// both cores or on a thread per core (RunOptions::parallel: a timing-only pass of the pair first,
// then each core's data on its own thread). Both give the same outputs bit for bit, which the
// benchmark checks. Items are simulated instructions; the ratio of the two times is the speed-up
// on this machine. Compiling the kernel is not timed.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "trn/kernels/reference.h"
#include "trn/kernels/registry.h"
#include "trn/runtime/session.h"

namespace {

struct Launch {
  std::unique_ptr<trn::runtime::Session> session;
  trn::runtime::CompiledLaunch launch;
  std::vector<trn::runtime::NpyArray> inputs;
  std::string error;
};

/// `name` compiled for LNC=2 at its default shapes, with seeded inputs.
const Launch& launchOf(const std::string& name) {
  static std::map<std::string, Launch> cache;
  auto [it, fresh] = cache.try_emplace(name);
  Launch& l = it->second;
  if (!fresh) {
    return l;
  }
  trn::Result<trn::runtime::Session> session = trn::runtime::Session::open("trn2");
  const trn::kernels::KernelEntry* entry = trn::kernels::findKernel(name);
  if (!session.ok() || entry == nullptr) {
    l.error = "no trn2 or no kernel " + name;
    return l;
  }
  l.session = std::make_unique<trn::runtime::Session>(std::move(*session));
  trn::runtime::RunOptions options;
  options.lnc = 2;
  trn::Result<trn::runtime::CompiledLaunch> compiled =
      l.session->compileLaunch(entry->def, entry->defaultInputs, options);
  if (!compiled.ok()) {
    l.error = compiled.status().toString();
    return l;
  }
  l.launch = std::move(*compiled);
  for (const trn::kernels::HostTensor& t : trn::kernels::randomInputs(entry->defaultInputs, 1)) {
    std::vector<float> values(t.values.begin(), t.values.end());
    l.inputs.push_back(trn::runtime::floatArray(t.shape, values));
  }
  return l;
}

void runPair(benchmark::State& state, const std::string& name, bool parallel) {
  const Launch& l = launchOf(name);
  if (!l.error.empty()) {
    state.SkipWithError(l.error.c_str());
    return;
  }
  trn::runtime::RunOptions options;
  options.lnc = 2;
  options.mode = trn::core::RunMode::kFunctionalOnly;
  options.parallel = parallel;
  std::uint64_t instructions = 0;
  static std::map<std::string, std::vector<std::byte>> firstOutput;
  for (auto _ : state) {
    trn::Result<trn::runtime::RunResult> r = l.session->runLaunch(l.launch, l.inputs, options);
    if (!r.ok()) {
      state.SkipWithError(r.status().toString().c_str());
      return;
    }
    instructions += r->stats.instructions;
    auto [it, fresh] = firstOutput.try_emplace(name, r->outputs.front().data);
    if (!fresh && it->second != r->outputs.front().data) {
      state.SkipWithError("a thread per core changed the outputs");
      return;
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(instructions));
}

void BM_PairOneThread(benchmark::State& state, const char* name) { runPair(state, name, false); }
void BM_PairThreadPerCore(benchmark::State& state, const char* name) { runPair(state, name, true); }

BENCHMARK_CAPTURE(BM_PairOneThread, linear, "linear")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_PairThreadPerCore, linear, "linear")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_PairOneThread, flash_attention, "flash_attention")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_PairThreadPerCore, flash_attention, "flash_attention")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
