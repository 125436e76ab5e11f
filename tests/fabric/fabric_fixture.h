// Small systems built in code for the fabric tests, with round numbers so that times can be
// derived by hand: links of 100 GB/s per direction (0.1 byte/ps) and 1 us per hop, HBM of
// 10 TB/s (10 bytes/ps) unless a test says otherwise.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "trn/fabric/topology.h"
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

}  // namespace trn::fabric::testing
