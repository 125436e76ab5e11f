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

inline Topology topologyOf(const spec::SystemSpec& system,
                           const spec::ChipSpec& chip = chipWithHbm()) {
  Result<Topology> t = Topology::create(system, chip);
  EXPECT_TRUE(t.ok()) << t.status().toString();
  return std::move(*t);
}

inline spec::Dimension ring(std::string name, std::int64_t size, std::string link = "link") {
  return {std::move(name), size, spec::DimensionKind::kRing, std::move(link)};
}

}  // namespace trn::fabric::testing
