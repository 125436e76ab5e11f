// A functional model of one NeuronCore: SBUF, PSUM, the program's HBM tensors, five in-order
// sequencers with their registers, and the semaphores that order them. Running a Program executes
// each engine's stream in program order, starting an instruction only when its semaphore waits
// hold and applying its updates when it completes, so a race-free program has exactly one result.
// DMA transfers complete when issued (functional time). Numerics follow architecture.md: exact
// matmul products with fp32 accumulation, fp32 engine math, and a cast on every write with the
// selected rounding (nearest-even, or stochastic seeded per instruction and element).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/core/memory.h"
#include "trn/isa/core_limits.h"
#include "trn/isa/program.h"
#include "trn/numerics/convert.h"

namespace trn::core {

/// How a core is configured for a run.
struct CoreOptions {
  isa::CoreLimits limits;
  /// Rounding applied when engines write narrower types (RNE, or stochastic with `seed`).
  RoundingMode rounding = RoundingMode::kNearestEven;
  std::uint64_t seed = 0;
  /// Report any read of SBUF, PSUM or HBM bytes that were never written.
  bool poison = false;
  /// Upper bound on executed instructions (guards against endless dynamic loops).
  std::uint64_t maxInstructions = 1'000'000'000;
};

/// What a run did.
struct RunStats {
  std::uint64_t instructions = 0;
  std::array<std::uint64_t, isa::kNumEngines> perEngine{};
};

class NeuronCore {
 public:
  /// Verifies `program` against `options.limits` and allocates the memories it needs.
  static Result<std::unique_ptr<NeuronCore>> create(isa::Program program, CoreOptions options);

  /// Fills HBM tensor `name` with raw little-endian element bytes of exactly its size.
  Status setTensor(std::string_view name, std::span<const std::byte> data);

  /// The current bytes of HBM tensor `name`.
  [[nodiscard]] Result<std::span<const std::byte>> tensorBytes(std::string_view name) const;

  /// Executes the program to completion. Errors: a deadlock (every unfinished engine waits on a
  /// semaphore that can no longer change; each pending wait is listed), a poison read, a runtime
  /// fault of an instruction, or the instruction limit.
  Result<RunStats> run();

  [[nodiscard]] const isa::Program& program() const { return program_; }

  class Context;  // the ExecContext implementation (neuron_core.cpp)

 private:
  NeuronCore(isa::Program program, CoreOptions options);

  isa::Program program_;
  CoreOptions options_;
  TrackedBytes sbuf_;
  TrackedBytes psum_;
  std::vector<TrackedBytes> hbm_;  ///< one per program tensor
};

}  // namespace trn::core
