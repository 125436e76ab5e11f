// Host time to time a 1 GiB bf16 all-reduce over every chip of the shipped systems, by each
// algorithm that applies and with the model's choice (as `trnsim collectives bench` runs it):
// 16 chips (trn2.48xlarge), 64 (UltraServer), 512 (32 instances over EFA) and 4,096
// (64 UltraServers over EFA), and 64 ranks on trn2.48xlarge (4 logical cores per chip, LNC=2).
// items/s is plan operations per host second; sim_us the simulated
// time of the collective.
#include <benchmark/benchmark.h>

#include <numeric>
#include <string>

#include "trn/fabric/collective.h"
#include "trn/spec/loader.h"
#include "trn/spec/system_loader.h"

namespace {

constexpr std::int64_t kBytes = std::int64_t{1} << 30;

/// `ranks` 0: one per chip; more than the chips: logical cores (Topology::forRanks).
void runAllReduce(benchmark::State& state, const char* systemName, std::int64_t ranks = 0) {
  const trn::Result<trn::spec::SystemSpec> system = trn::spec::loadSystem(systemName);
  if (!system.ok()) {
    state.SkipWithError(system.status().toString().c_str());
    return;
  }
  const trn::Result<trn::spec::ChipSpec> chip = trn::spec::loadChip(system->chip);
  if (!chip.ok()) {
    state.SkipWithError(chip.status().toString().c_str());
    return;
  }
  const trn::Result<trn::fabric::Topology> topology =
      trn::fabric::Topology::forRanks(*system, *chip, ranks);
  if (!topology.ok()) {
    state.SkipWithError(topology.status().toString().c_str());
    return;
  }
  trn::fabric::CollectiveRequest request;
  request.group.resize(static_cast<std::size_t>(topology->chips()));
  std::iota(request.group.begin(), request.group.end(), 0);
  request.bytes = kBytes;
  std::int64_t simulated = 0;
  std::uint64_t events = 0;
  std::string algorithm;
  for (auto _ : state) {
    const trn::Result<trn::fabric::CollectiveResult> result =
        trn::fabric::runCollective(*topology, request);
    if (!result.ok()) {
      state.SkipWithError(result.status().toString().c_str());
      return;
    }
    simulated = result->picoseconds;
    events += result->timing.events;
    algorithm = trn::fabric::algorithmName(result->algorithm);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(events));
  state.counters["sim_us"] = static_cast<double>(simulated) * 1e-6;
  state.counters["ranks"] = static_cast<double>(topology->chips());
  state.SetLabel(algorithm);
}

void BM_AllReduce1GiB_Trn2Instance(benchmark::State& s) { runAllReduce(s, "trn2.48xlarge"); }
void BM_AllReduce1GiB_Trn2Instance64Ranks(benchmark::State& s) {
  runAllReduce(s, "trn2.48xlarge", 64);
}
void BM_AllReduce1GiB_UltraServer(benchmark::State& s) { runAllReduce(s, "trn2-ultraserver"); }
void BM_AllReduce1GiB_512Chips(benchmark::State& s) { runAllReduce(s, "trn2-cluster"); }
void BM_AllReduce1GiB_4096Chips(benchmark::State& s) {
  runAllReduce(s, "trn2-ultraserver-cluster");
}

BENCHMARK(BM_AllReduce1GiB_Trn2Instance)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_AllReduce1GiB_Trn2Instance64Ranks)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_AllReduce1GiB_UltraServer)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_AllReduce1GiB_512Chips)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_AllReduce1GiB_4096Chips)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
