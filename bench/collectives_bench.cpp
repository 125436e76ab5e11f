// Host time to time a 1 GiB bf16 all-reduce over every chip of the shipped systems, by each
// algorithm that applies and with the model's choice (as `trnsim collectives bench` runs it):
// 16 chips (trn2.48xlarge), 64 (UltraServer), 512 (32 instances over EFA) and 4,096
// (64 UltraServers over EFA), and 64 ranks on trn2.48xlarge (4 logical cores per chip, LNC=2);
// and an all-to-all-v of skewed counts (MoE token dispatch) over those 64 ranks.
// items/s is plan operations per host second; sim_us the simulated
// time of the collective.
#include <benchmark/benchmark.h>

#include <numeric>
#include <string>
#include <vector>

#include "trn/fabric/all_to_allv.h"
#include "trn/fabric/collective.h"
#include "trn/spec/loader.h"
#include "trn/spec/system_loader.h"

namespace {

constexpr std::int64_t kBytes = std::int64_t{1} << 30;

/// The fabric of `systemName` for `ranks` ranks (0: one per chip; more than the chips: logical
/// cores, Topology::forRanks), or an error.
trn::Result<trn::fabric::Topology> loadTopology(const char* systemName, std::int64_t ranks) {
  TRN_ASSIGN_OR_RETURN(const trn::spec::SystemSpec system, trn::spec::loadSystem(systemName));
  TRN_ASSIGN_OR_RETURN(const trn::spec::ChipSpec chip, trn::spec::loadChip(system.chip));
  return trn::fabric::Topology::forRanks(system, chip, ranks);
}

/// Times `request` on `topology` (every algorithm that applies, the fastest taken) once per
/// iteration: items are plan events, sim_us the simulated time, the label the algorithm.
void timeCollective(benchmark::State& state, const trn::Result<trn::fabric::Topology>& topology,
                    const trn::fabric::CollectiveRequest& request) {
  if (!topology.ok()) {
    state.SkipWithError(topology.status().toString().c_str());
    return;
  }
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
  state.counters["ranks"] = static_cast<double>(request.group.size());
  state.SetLabel(algorithm);
}

/// A 1 GiB bf16 all-reduce over every rank of `systemName` (`ranks` as loadTopology's).
void runAllReduce(benchmark::State& state, const char* systemName, std::int64_t ranks = 0) {
  const trn::Result<trn::fabric::Topology> topology = loadTopology(systemName, ranks);
  trn::fabric::CollectiveRequest request;
  request.group.resize(static_cast<std::size_t>(topology.ok() ? topology->chips() : 0));
  std::iota(request.group.begin(), request.group.end(), 0);
  request.bytes = kBytes;
  timeCollective(state, topology, request);
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

/// MoE token dispatch: an all-to-all-v over the 64 logical-core ranks of a trn2.48xlarge, each
/// rank sending each a skewed count of bf16 elements (0 to 512 Ki, a quarter of the pairs none),
/// 1.6 GB in all.
void BM_AllToAllV_Trn2Instance64Ranks(benchmark::State& state) {
  constexpr std::int64_t kRanks = 64;
  std::vector<std::vector<std::int64_t>> counts(kRanks, std::vector<std::int64_t>(kRanks));
  std::uint64_t x = 88172645463325252ULL;  // xorshift64: deterministic skew
  std::int64_t total = 0;
  for (auto& row : counts) {
    for (std::int64_t& c : row) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      c = x % 4 == 0 ? 0 : static_cast<std::int64_t>((x >> 8) % (std::int64_t{1} << 19));
      total += c;
    }
  }
  trn::Result<trn::fabric::VariableCounts> v = trn::fabric::packedVariableCounts(counts);
  if (!v.ok()) {
    state.SkipWithError(v.status().toString().c_str());
    return;
  }
  trn::fabric::CollectiveRequest request;
  request.op = trn::fabric::CollectiveOp::kAllToAllV;
  request.group.resize(kRanks);
  std::iota(request.group.begin(), request.group.end(), 0);
  request.bytes = trn::fabric::variableExtent(*v) * request.elementBytes;
  request.variable = std::move(*v);
  timeCollective(state, loadTopology("trn2.48xlarge", kRanks), request);
  state.counters["bytes_moved"] = static_cast<double>(total * request.elementBytes);
}

BENCHMARK(BM_AllReduce1GiB_Trn2Instance)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_AllReduce1GiB_Trn2Instance64Ranks)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_AllReduce1GiB_UltraServer)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_AllReduce1GiB_512Chips)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_AllReduce1GiB_4096Chips)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_AllToAllV_Trn2Instance64Ranks)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
