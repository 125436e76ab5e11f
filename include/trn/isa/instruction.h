// The common parts of every instruction: its static description (InstrInfo), the semaphore
// conditions it waits for and the updates it makes on completion, and the verification context.
// The instructions themselves are declared in isa/instrs/*.h and collected in instruction_set.h.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trn/isa/core_limits.h"
#include "trn/isa/engine.h"
#include "trn/isa/enums.h"

namespace trn::isa {

/// What every instruction type states about itself, once.
struct InstrInfo {
  std::string_view mnemonic;   ///< program-text name, e.g. "nc_matmul"
  std::uint16_t opcode;        ///< binary encoding; unique (checked at compile time)
  EngineSet engines;           ///< sequencers allowed to issue it
  std::string_view costClass;  ///< key into the chip's cost-class table (timing model)
  std::string_view summary;    ///< one-line description for `trnsim isa list`
  /// True when DMA engines move the data (the issuing sequencer only triggers the transfer), so
  /// the engine/memory rules of compute instructions do not apply.
  bool viaDma = false;

  /// True for sequencer-only instructions (nop, registers, branches): they run in every mode and
  /// are costed by the timing model, not by a cost class.
  [[nodiscard]] constexpr bool isControl() const { return costClass == "control"; }
};

/// Wait until semaphore `semaphore` compares true against `value` before starting.
struct SemaphoreWait {
  std::int32_t semaphore = 0;
  WaitCompare compare = WaitCompare::kGreaterEqual;
  std::int32_t value = 0;
  friend bool operator==(const SemaphoreWait&, const SemaphoreWait&) = default;
};

/// Update semaphore `semaphore` when the instruction completes.
struct SemaphoreUpdate {
  std::int32_t semaphore = 0;
  SemaphoreUpdateOp op = SemaphoreUpdateOp::kAdd;
  std::int32_t value = 1;
  friend bool operator==(const SemaphoreUpdate&, const SemaphoreUpdate&) = default;
};

/// Synchronisation attached to an instruction (profiler syntax: `$S[45]>=16 $S[8]++@complete`).
struct Sync {
  std::vector<SemaphoreWait> waits;
  std::vector<SemaphoreUpdate> updates;
  friend bool operator==(const Sync&, const Sync&) = default;
};

/// A Sync's semaphores held elsewhere (the kernel IR keeps its ops' in flat arrays).
struct SyncView {
  SyncView() = default;
  SyncView(std::span<const SemaphoreWait> w, std::span<const SemaphoreUpdate> u)
      : waits(w), updates(u) {}
  explicit SyncView(const Sync& sync) : waits(sync.waits), updates(sync.updates) {}
  std::span<const SemaphoreWait> waits;
  std::span<const SemaphoreUpdate> updates;
};

/// Where an instruction came from: a kernel source line, or a line of program text.
struct SourceLocation {
  std::string file;
  std::int32_t line = 0;
  friend bool operator==(const SourceLocation&, const SourceLocation&) = default;
};

/// Declarations of a program's HBM tensors, needed to check HBM operands.
struct TensorDecl;

/// What instruction-specific verification can see.
struct VerifyContext {
  const CoreLimits& limits;
  Engine engine;
  std::size_t streamLength;  ///< instructions in the issuing engine's stream (branch targets)
};

}  // namespace trn::isa
