// Small systems built in code for the fabric tests, with round numbers so that times can be
// derived by hand: links of 100 GB/s per direction (0.1 byte/ps) and 1 us per hop, HBM of
// 10 TB/s (10 bytes/ps) unless a test says otherwise.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "trn/fabric/collective.h"
#include "trn/fabric/functional_collective.h"
#include "trn/fabric/topology.h"
#include "trn/numerics/convert.h"
#include "trn/spec/chip_spec.h"
#include "trn/spec/loader.h"
#include "trn/spec/system_loader.h"
#include "trn/spec/system_spec.h"

namespace trn::fabric::testing {

inline constexpr std::int64_t kMicrosecond = 1'000'000;  // ps

inline spec::SystemSpec grid(std::vector<spec::Dimension> dims,
                             std::vector<spec::LinkSpec> links = {}) {
  spec::SystemSpec s;
  s.name = "test";
  s.chip = "test";
  if (links.empty()) {
    links.push_back(
        {"link", BytesPerSecond(100'000'000'000), Picoseconds(kMicrosecond), Picoseconds(0)});
  }
  s.links = std::move(links);
  s.dimensions = std::move(dims);
  return s;
}

inline spec::ChipSpec chipWithHbm(std::int64_t bytesPerSecond = 10'000'000'000'000) {
  spec::ChipSpec chip;
  chip.hbm.bandwidth = BytesPerSecond(bytesPerSecond);
  return chip;
}

/// chipWithHbm with one HBM stack of 1 GiB: room for the ranks' buffers of a functional run.
inline spec::ChipSpec chipWithMemory() {
  spec::ChipSpec chip = chipWithHbm();
  chip.hbm.stacks = 1;
  chip.hbm.stackCapacity = Bytes(std::int64_t{1} << 30);
  return chip;
}

/// A chip whose collective traffic is issued by `collectiveCores` collective cores, each
/// driving an even share of one core's DMA engines: `engines` engines of `engineBytesPerSecond`
/// (a stream of engines x bandwidth / collectiveCores), reductions at 50 % of that.
inline spec::ChipSpec chipWithCollectiveCores(std::int64_t collectiveCores, std::int64_t engines,
                                              std::int64_t engineBytesPerSecond) {
  spec::ChipSpec chip = chipWithHbm();
  chip.chip.collectiveCores = collectiveCores;
  chip.chip.neuronCores = 1;
  chip.core.dma.enginesPerCore = engines;
  chip.core.dma.engineBandwidth = BytesPerSecond(engineBytesPerSecond);
  chip.core.dma.computeEfficiency = *Ratio::make(1, 2);
  return chip;
}

/// 4 physical cores, configurable as 4 (LNC=1) or 2 (LNC=2) logical cores; 2 DMA engines of
/// 50 GB/s per core (a logical core at LNC=2 moves 0.2 byte/ps on-chip), a DMA fixed cost of
/// 1 us; 2 HBM stacks of 5 byte/ps, cores 0-1 on stack 0 and 2-3 on stack 1.
inline spec::ChipSpec logicalChip() {
  spec::ChipSpec chip = chipWithHbm();
  chip.name = "test";
  chip.chip.neuronCores = 4;
  chip.chip.logicalCores.sizes = {1, 2};
  chip.core.dma.enginesPerCore = 2;
  chip.core.dma.engineBandwidth = BytesPerSecond(50'000'000'000);
  chip.core.dma.fixedCost = Picoseconds(kMicrosecond);
  chip.hbm.stacks = 2;
  chip.hbm.stackCapacity = Bytes(std::int64_t{1} << 30);
  chip.hbm.stackOfCore = {0, 0, 1, 1};
  return chip;
}

inline Topology topologyOf(const spec::SystemSpec& system,
                           const spec::ChipSpec& chip = chipWithHbm()) {
  Result<Topology> t = Topology::create(system, chip);
  EXPECT_TRUE(t.ok()) << t.status().toString();
  return std::move(*t);
}

/// The fabric of the system `name` of configs/systems for `ranks` ranks (Topology::forRanks).
inline Topology systemTopology(const std::string& name, std::int64_t ranks) {
  const Result<spec::SystemSpec> system = spec::loadSystem(name);
  EXPECT_TRUE(system.ok()) << system.status().toString();
  const Result<spec::ChipSpec> chip = spec::loadChip(system->chip);
  EXPECT_TRUE(chip.ok()) << chip.status().toString();
  Result<Topology> t = Topology::forRanks(*system, *chip, ranks);
  EXPECT_TRUE(t.ok()) << t.status().toString();
  return std::move(*t);
}

inline spec::Dimension ring(std::string name, std::int64_t size, std::string link = "link") {
  return {std::move(name), size, spec::DimensionKind::kRing, std::move(link)};
}

/// `count` values of `dtype` per rank, uniform in [-1, 1), from `seed`.
inline std::vector<std::vector<std::byte>> uniformInputs(std::size_t ranks, std::int64_t count,
                                                         DType dtype, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);
  const auto size = static_cast<std::size_t>(byteSize(dtype));
  std::vector<std::vector<std::byte>> inputs(
      ranks, std::vector<std::byte>(static_cast<std::size_t>(count) * size, std::byte{0}));
  for (auto& in : inputs) {
    for (std::size_t e = 0; e < static_cast<std::size_t>(count); ++e) {
      const std::uint32_t bits = encodeFloat(uniform(rng), dtype);
      std::memcpy(in.data() + e * size, &bits, size);
    }
  }
  return inputs;
}

/// Element `e` of `bytes`, elements of `dtype`.
inline float elementAt(const std::vector<std::byte>& bytes, std::int64_t e, DType dtype) {
  std::uint32_t bits = 0;
  const auto size = static_cast<std::size_t>(byteSize(dtype));
  std::memcpy(&bits, bytes.data() + static_cast<std::size_t>(e) * size, size);
  return static_cast<float>(decodeFloat(bits, dtype));
}

/// Two test chips (logicalChip) on a ring, `ranks` logical-core ranks in all.
inline Topology twoLogicalChips(std::int64_t ranks) {
  Result<Topology> t = Topology::forRanks(grid({ring("x", 2)}), logicalChip(), ranks);
  EXPECT_TRUE(t.ok()) << t.status().toString();
  return std::move(*t);
}

/// The time of `request` by `algorithm`, or -1 (a failure) when it cannot be timed.
inline std::int64_t timeOf(const Topology& t, const CollectiveRequest& request,
                           Algorithm algorithm) {
  const Result<CollectiveResult> result = runCollective(t, request, algorithm);
  EXPECT_TRUE(result.ok()) << result.status().toString();
  return result.ok() ? result->picoseconds : -1;
}

/// Every rank's output is `expected`, element for element.
inline void expectEveryRankHolds(const std::vector<std::vector<std::byte>>& outputs,
                                 const std::vector<float>& expected, DType dtype) {
  for (std::size_t rank = 0; rank < outputs.size(); ++rank) {
    for (std::size_t e = 0; e < expected.size(); ++e) {
      ASSERT_EQ(elementAt(outputs[rank], static_cast<std::int64_t>(e), dtype), expected[e])
          << "rank " << rank << " element " << e;
    }
  }
}

/// `op` over `group` with `chunk` elements of `dtype` per rank.
inline CollectiveRequest requestOver(CollectiveOp op, std::vector<std::int64_t> group,
                                     std::int64_t chunk, DType dtype) {
  CollectiveRequest r;
  r.op = op;
  r.elementBytes = byteSize(dtype);
  r.bytes = static_cast<std::int64_t>(group.size()) * chunk * r.elementBytes;
  r.group = std::move(group);
  return r;
}

/// Places first, first + 1, ... (count of them).
inline std::vector<std::int64_t> consecutive(std::int64_t first, std::int64_t count) {
  std::vector<std::int64_t> g(static_cast<std::size_t>(count));
  std::iota(g.begin(), g.end(), first);
  return g;
}

/// configs/chips/trn2.yaml.
inline spec::ChipSpec trn2Chip() {
  Result<spec::ChipSpec> c = spec::loadChip("trn2");
  EXPECT_TRUE(c.ok()) << c.status().toString();
  return *c;
}

/// Runs `algorithm` on data over the logical cores (LNC=2) of 1 to 4 chips of a trn2.48xlarge
/// (places from 0, and two chips far apart with their ranks shuffled): all-reduce, reduce-scatter
/// and all-gather, fp32 and bf16, sum and `other`, `chunk` elements per rank. Each plan's order
/// is checked and every output compared with float64: data movement, max and min exactly, sums
/// within `roundings(ranks)` roundings to the type (relative to the sum of magnitudes).
inline void expectMatchesFloat64OverLogicalCores(Algorithm algorithm, ReduceOp other,
                                                 std::int64_t chunk,
                                                 double (*roundings)(std::size_t ranks)) {
  const Topology t = systemTopology("trn2.48xlarge", 64);
  const spec::ChipSpec chip = trn2Chip();
  std::vector<std::vector<std::int64_t>> groups = {consecutive(0, 4), consecutive(0, 8),
                                                   consecutive(0, 12), consecutive(0, 16)};
  groups.push_back({37, 20, 22, 36, 21, 39, 23, 38});
  int runs = 0;
  for (const std::vector<std::int64_t>& group : groups) {
    for (const CollectiveOp op :
         {CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter, CollectiveOp::kAllGather}) {
      for (const DType dtype : {DType::kFp32, DType::kBf16}) {
        for (const ReduceOp reduce : {ReduceOp::kSum, other}) {
          const CollectiveRequest r = requestOver(op, group, chunk, dtype);
          SCOPED_TRACE(fmt::format("{} ranks from place {}: {} {} {}", group.size(), group[0],
                                   opName(op), dtypeName(dtype), reduceOpName(reduce)));
          ASSERT_EQ(unsupportedReason(t, r, algorithm), "");
          const Result<Plan> plan = buildPlan(t, r, algorithm);
          ASSERT_TRUE(plan.ok()) << plan.status().toString();
          const Status ordered = checkPlanOrder(*plan);
          ASSERT_TRUE(ordered.ok()) << ordered.toString();
          const auto in = uniformInputs(group.size(), inputBytes(r) / r.elementBytes, dtype, 11);
          const Result<DataCollectiveResult> got =
              runCollectiveOnData(t, chip, r, dtype, reduce, in, algorithm);
          ASSERT_TRUE(got.ok()) << got.status().toString();
          EXPECT_EQ(got->timing.algorithm, algorithm);
          const Result<ReferenceCheck> check =
              checkAgainstFloat64(r, dtype, reduce, in, got->outputs);
          ASSERT_TRUE(check.ok()) << check.status().toString();
          EXPECT_EQ(check->mismatches, 0);
          const double unit = dtype == DType::kBf16 ? 1.0 / 256 : 1.0 / (1 << 24);
          EXPECT_LE(check->maxRelative, roundings(group.size()) * unit);
          ++runs;
        }
      }
    }
  }
  EXPECT_EQ(runs, 5 * 3 * 2 * 2);
}

}  // namespace trn::fabric::testing
