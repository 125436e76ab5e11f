// Internal to the scheduler (simulation.cpp): what it plans for each instruction before issuing
// it — its kind, cost, semaphore waits and updates, the accesses the race detector checks — and
// the window of plans it reads ahead, with the prefetches that let those reads overlap.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>
#include <variant>
#include <vector>

#include "trn/core/dma_model.h"
#include "trn/core/hazard_detector.h"
#include "trn/core/instruction_cost.h"
#include "trn/isa/instruction_set.h"

namespace trn::core::plan {

using isa::Engine;

/// A completion that belongs to no instruction record.
inline constexpr std::uint32_t kNoRecord = std::numeric_limits<std::uint32_t>::max();

/// Semaphore updates waiting to be applied. When races are checked, the clock they carry is
/// kept apart (Simulation::completionClocks_ / transferClocks_, same slot), so runs without the
/// check copy less.
struct Completion {
  static constexpr std::size_t kInlineUpdates = 2;
  std::uint32_t core = 0;
  std::uint32_t record = kNoRecord;
  /// The updates, copied when there are few; else `instr`'s own list.
  std::array<isa::SemaphoreUpdate, kInlineUpdates> updates{};
  std::uint8_t updateCount = 0;
  std::uint8_t agent = 0;  ///< the race detector's agent that makes the updates
  AccessOwner owner;       ///< the instruction, for messages
  const isa::Instruction* instr = nullptr;

  [[nodiscard]] std::span<const isa::SemaphoreUpdate> updateList() const {
    return instr != nullptr ? std::span(instr->sync.updates)
                            : std::span(updates.data(), updateCount);
  }
};

/// Makes `done` the completion of `instr`, with its updates copied when they fit. Written in place:
/// a Completion built on the stack and copied stalls on store forwarding.
inline void setCompletion(Completion& done, std::uint32_t core, AccessOwner owner, int agent,
                   const isa::Instruction& instr) {
  done = Completion{};
  done.core = core;
  done.owner = owner;
  done.agent = static_cast<std::uint8_t>(agent);
  const auto& updates = instr.sync.updates;
  if (updates.size() <= Completion::kInlineUpdates) {
    for (std::size_t i = 0; i < updates.size(); ++i) {
      done.updates[i] = updates[i];
    }
    done.updateCount = static_cast<std::uint8_t>(updates.size());
  } else {
    done.instr = &instr;
  }
}

/// What the scheduler needs to know of an instruction's kind.
struct Kind {
  bool dma = false;      ///< a DMA trigger (runs on a queue)
  bool control = false;  ///< control flow (runs in every mode)
  bool barrier = false;  ///< a core_barrier (waits for the other cores of its logical core)
  int queue = 0;
};

inline Kind kindOf(const isa::Instruction& instr) {
  return std::visit(
      []<typename I>(const I& body) {
        Kind kind;
        kind.dma = I::kInfo.viaDma;
        kind.control = I::kInfo.isControl();
        kind.barrier = std::is_same_v<I, isa::CoreBarrier>;
        if constexpr (requires { body.queue; }) {
          kind.queue = static_cast<int>(body.queue);
        }
        return kind;
      },
      instr.body);
}

/// The race detector's agent of an instruction: its DMA queue for a transfer, else its engine.
inline int updatingAgent(Engine engine, Kind kind) {
  return kind.dma ? HazardDetector::queueAgent(kind.queue) : HazardDetector::engineAgent(engine);
}

inline constexpr std::size_t kPrefetchAhead = 8;

/// Asks for the cache lines of `instr` ahead of its planning.
inline void prefetch(const isa::Instruction& instr) {
  const auto* bytes = reinterpret_cast<const char*>(&instr);
  for (std::size_t offset = 0; offset < sizeof(isa::Instruction); offset += 64) {
    __builtin_prefetch(bytes + offset);
  }
}

/// Asks for the semaphore lists of `instr` (whose own lines were asked for earlier).
inline void prefetchSync(const isa::Instruction& instr) {
  __builtin_prefetch(instr.sync.waits.data());
  __builtin_prefetch(instr.sync.updates.data());
}

/// What the timing model needs of one instruction.
struct Planned {
  InstructionCost cost;
  Kind kind;
  Completion completion;        ///< the instruction's semaphore updates (core and record unset)
  std::uint32_t firstWait = 0;  ///< the semaphore waits, in PlanWindow::waits
  std::uint32_t waitCount = 0;
  AccessSpan accesses;  ///< in PlanWindow::accesses
  TransferShape shape;  ///< for a DMA
};

/// The plans of the next instructions of one engine. They are computed a window at a time in a
/// tight sequential loop: instructions are large, and reading them in order, with the lines of
/// the instructions a few places ahead (and their semaphore lists) prefetched, lets their cache
/// misses overlap, where the event loop would take them one at a time. The window is reused, so
/// a long program costs no memory per instruction.
struct PlanWindow {
  /// Plans per window for one core. Cores run together share the cache: each gets a smaller
  /// window (windowSize), so that all of them stay near the core (8 cores x 5 engines x 256
  /// plans of ~170 B would be 1.7 MB).
  static constexpr std::size_t kSize = 256;
  static constexpr std::size_t kMinSize = 32;
  [[nodiscard]] static std::size_t windowSize(std::size_t cores) {
    return std::max(kMinSize, kSize / std::max<std::size_t>(cores, 1));
  }
  std::vector<Planned> plans;  ///< windowSize entries, of which the first `count` are planned
  std::size_t count = 0;
  /// The plans' semaphore waits, copied so that issuing does not reach back into instructions
  /// that have left the cache.
  std::vector<isa::SemaphoreWait> waits;
  PreparedAccesses accesses;  ///< operands of the plans and their cells, when races are checked
  std::size_t first = 0;      ///< stream index of plans[0]
};

}  // namespace trn::core::plan
