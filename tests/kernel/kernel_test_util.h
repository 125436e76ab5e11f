// Helpers every kernel test shares: the trn2 chip, a session on it and its core limits, seeded
// random inputs, and where a compiled kernel placed its tiles.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "trn/kernel/compiler.h"
#include "trn/runtime/host_io.h"
#include "trn/runtime/session.h"
#include "trn/spec/loader.h"

namespace trn::kernel::testutil {

/// The trn2 description, loaded once.
inline std::shared_ptr<const spec::ChipSpec> trn2() {
  static const auto chip = [] {
    auto loaded = spec::loadChip("trn2");
    EXPECT_TRUE(loaded.ok()) << loaded.status().toString();
    return std::make_shared<const spec::ChipSpec>(std::move(loaded).value());
  }();
  return chip;
}

/// A session on trn2, opened once.
inline const runtime::Session& trn2Session() {
  static const runtime::Session session(trn2());
  return session;
}

/// The verification limits of one trn2 core.
inline isa::CoreLimits limits() { return runtime::coreLimits(*trn2()); }

/// `n` uniform values in [lo, hi) from a fixed seed.
inline std::vector<float> randomValues(std::size_t n, std::uint32_t seed, float lo = -2.0f,
                                       float hi = 2.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) {
    x = dist(rng);
  }
  return v;
}

/// The distinct byte offsets of each tile name of `compiled`.
inline std::map<std::string, std::set<std::int64_t>> offsetsByName(const CompiledKernel& compiled) {
  std::map<std::string, std::set<std::int64_t>> offsets;
  for (const CompiledTile& tile : compiled.tiles) {
    offsets[tile.name].insert(tile.byte);
  }
  return offsets;
}

}  // namespace trn::kernel::testutil
