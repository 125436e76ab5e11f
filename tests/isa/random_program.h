// Random instructions of every type, for format and packing round trips: RandomFields fills any
// field type with values a valid program may hold, randomProgram builds a program of them.
#pragma once

#include <array>
#include <cmath>
#include <optional>
#include <random>

#include "trn/isa/index_pattern.h"
#include "trn/isa/program.h"
#include "trn/isa/replica_groups.h"

namespace trn::isa::test_programs {

/// Random field values of every field type.
class RandomFields {
 public:
  explicit RandomFields(std::uint32_t seed) : rng_(seed) {}

  std::int64_t integer(std::int64_t low, std::int64_t high) {
    return std::uniform_int_distribution<std::int64_t>(low, high)(rng_);
  }

  void fill(bool& v) { v = integer(0, 1) == 1; }
  void fill(std::int64_t& v) { v = integer(-100000, 100000); }
  void fill(float& v) {
    const float specials[] = {0.0f, -0.0f, 1.5f, -3.25e-7f, 65504.0f, 1e30f, INFINITY, -INFINITY};
    v = integer(0, 3) == 0 ? specials[integer(0, 7)]
                           : std::uniform_real_distribution<float>(-1e6f, 1e6f)(rng_);
  }
  template <TabledEnum E>
  void fill(E& v) {
    const auto& entries = EnumTable<E>::kEntries;
    v = entries[static_cast<std::size_t>(integer(0, static_cast<std::int64_t>(entries.size()) - 1))]
            .first;
  }
  void fill(AccessPattern& ap) {
    ap.memory = static_cast<Memory>(integer(0, 2));
    ap.dtype = static_cast<DType>(integer(0, kNumDTypes - 1));
    ap.offset = integer(0, 4096) * byteSize(ap.dtype);
    ap.numDims = static_cast<std::int32_t>(integer(1, kMaxFreeDims));
    ap.dims = {};
    for (int d = 0; d < ap.numDims; ++d) {
      ap.dims[static_cast<std::size_t>(d)] = {integer(-64, 512), integer(1, 64)};
    }
    if (ap.memory == Memory::kHbm) {
      ap.tensor = static_cast<std::int32_t>(integer(0, 1));
      ap.partitionStart = 0;
      ap.partitionCount = integer(1, 128);
      ap.partitionStride = integer(0, 100000);
    } else {
      ap.tensor = -1;
      ap.partitionStart = integer(0, 127);
      ap.partitionCount = integer(1, 128 - ap.partitionStart);
      ap.partitionStride = 0;
    }
  }
  void fill(std::optional<AccessPattern>& ap) {
    if (integer(0, 1) == 0) {
      ap.reset();
    } else {
      fill(ap.emplace());
    }
  }
  template <std::size_t N>
  void fill(std::array<std::int64_t, N>& list) {
    for (std::int64_t& v : list) {
      v = integer(-300, 300);
    }
  }
  void fill(IndexPattern& p) {
    p = IndexPattern{};
    p.numDims = static_cast<std::int32_t>(integer(1, kMaxFreeDims));
    for (int d = 0; d < p.numDims; ++d) {
      p.dims[static_cast<std::size_t>(d)] = {integer(-512, 512), integer(1, 64)};
    }
  }
  /// Every rank, or 1 to 4 groups of 1 to 4 distinct ranks.
  void fill(ReplicaGroups& g) {
    g = ReplicaGroups{};
    if (integer(0, 1) == 0) {
      return;
    }
    g.groupSize = static_cast<std::int32_t>(integer(1, 4));
    const auto groups = static_cast<std::int32_t>(integer(1, 4));
    const auto start = static_cast<std::int32_t>(integer(0, 100));
    for (std::int32_t i = 0; i < g.groupSize * groups; ++i) {
      g.ranks[static_cast<std::size_t>(g.count++)] = start + i;
    }
  }
  void fill(ScalarOperand& s) {
    if (integer(0, 1) == 0) {
      float f = 0;
      fill(f);
      s = f;
    } else {
      AccessPattern ap;
      fill(ap);
      s = ap;
    }
  }

  Sync sync() {
    Sync s;
    for (std::int64_t i = integer(0, 2); i > 0; --i) {
      s.waits.push_back({static_cast<std::int32_t>(integer(0, 255)),
                         integer(0, 1) == 0 ? WaitCompare::kGreaterEqual : WaitCompare::kEqual,
                         static_cast<std::int32_t>(integer(-5, 1000))});
    }
    for (std::int64_t i = integer(0, 2); i > 0; --i) {
      s.updates.push_back({static_cast<std::int32_t>(integer(0, 255)),
                           static_cast<SemaphoreUpdateOp>(integer(0, 2)),
                           static_cast<std::int32_t>(integer(-5, 1000))});
    }
    return s;
  }

 private:
  std::mt19937 rng_;
};

/// A program holding `perType` random instances of every instruction type.
inline Program randomProgram(std::uint32_t seed, int perType) {
  RandomFields random(seed);
  Program program;
  program.tensors = {{"a", TensorKind::kInput, DType::kBf16, {128, 1024}},
                     {"out_1", TensorKind::kOutput, DType::kFp32, {4, 8, 16}}};
  forEachInstructionType([&]<typename I>() {
    for (int n = 0; n < perType; ++n) {
      I body;
      forEachFieldValue(body, [&](const auto& /*desc*/, auto& value) { random.fill(value); });
      Instruction instr;
      instr.engine = kAllEngines[static_cast<std::size_t>(random.integer(0, kNumEngines - 1))];
      instr.body = body;
      instr.sync = random.sync();
      if (random.integer(0, 1) == 0) {
        instr.location = {"kernels/attention.cpp",
                          static_cast<std::int32_t>(random.integer(1, 900))};
      }
      program.stream(instr.engine).push_back(std::move(instr));
    }
  });
  return program;
}

}  // namespace trn::isa::test_programs
