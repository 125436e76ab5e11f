// Internal to the scheduler (simulation.cpp): what it plans for each instruction before issuing
// it — its kind, cost, semaphore waits and updates, the accesses the race detector checks — and
// the window of plans it decodes ahead from the packed stream.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
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

/// `to = from` for a small trivially copyable struct, in 16-byte pieces. GCC copies structs of 64
/// bytes and more with `rep movs`, whose start-up costs more than the copy; the scheduler copies
/// completions and clocks of that size for most instructions.
template <typename T>
void copyInPieces(T& to, const T& from) {
  static_assert(std::is_trivially_copyable_v<T>);
  constexpr std::size_t kPiece = 16;
  auto* out = reinterpret_cast<std::byte*>(&to);
  const auto* in = reinterpret_cast<const std::byte*>(&from);
  std::size_t at = 0;
  for (; at + kPiece <= sizeof(T); at += kPiece) {
    std::memcpy(out + at, in + at, kPiece);
  }
  if constexpr (sizeof(T) % kPiece != 0) {
    std::memcpy(out + at, in + at, sizeof(T) % kPiece);
  }
}

/// A completion that belongs to no instruction record.
inline constexpr std::uint32_t kNoRecord = std::numeric_limits<std::uint32_t>::max();

/// Semaphore updates waiting to be applied. When races are checked, the clock they carry is
/// kept apart (Simulation::completionClocks_ / transferClocks_, same slot), so runs without the
/// check copy less.
struct Completion {
  static constexpr std::size_t kInlineUpdates = 2;
  std::uint32_t core = 0;
  std::uint32_t record = kNoRecord;
  /// The updates, copied when there are few; else the packed stream's own list.
  std::array<isa::SemaphoreUpdate, kInlineUpdates> updates{};
  std::uint8_t updateCount = 0;
  std::uint8_t agent = 0;  ///< the race detector's agent that makes the updates
  AccessOwner owner;       ///< the instruction, for messages
  std::span<const isa::SemaphoreUpdate> many;

  [[nodiscard]] std::span<const isa::SemaphoreUpdate> updateList() const {
    return !many.empty() ? many : std::span(updates.data(), updateCount);
  }
};

/// Makes `done` the completion of an instruction with `updates` (a span of its packed stream,
/// valid for the run), copied when they fit. Written in place: a Completion built on the stack
/// and copied stalls on store forwarding.
inline void setCompletion(Completion& done, std::uint32_t core, AccessOwner owner, int agent,
                          std::span<const isa::SemaphoreUpdate> updates) {
  done = Completion{};
  done.core = core;
  done.owner = owner;
  done.agent = static_cast<std::uint8_t>(agent);
  if (updates.size() <= Completion::kInlineUpdates) {
    for (std::size_t i = 0; i < updates.size(); ++i) {
      done.updates[i] = updates[i];
    }
    done.updateCount = static_cast<std::uint8_t>(updates.size());
  } else {
    done.many = updates;
  }
}

/// What the scheduler needs to know of an instruction's kind.
struct Kind {
  bool dma = false;         ///< a DMA trigger (runs on a queue)
  bool control = false;     ///< control flow (runs in every mode)
  bool barrier = false;     ///< a core_barrier (waits for the other cores of its logical core)
  bool exchange = false;    ///< a sendrecv (meets the other core of its pair)
  bool collective = false;  ///< a collective (meets every rank of the run)
  int queue = 0;
};

inline Kind kindOf(const isa::InstructionBody& instr) {
  return std::visit(
      []<typename I>(const I& body) {
        Kind kind;
        kind.dma = I::kInfo.viaDma;
        kind.control = I::kInfo.isControl();
        kind.barrier = std::is_same_v<I, isa::CoreBarrier>;
        kind.exchange = std::is_same_v<I, isa::SendRecv>;
        kind.collective = std::is_same_v<I, isa::Collective>;
        if constexpr (requires { body.queue; }) {
          kind.queue = static_cast<int>(body.queue);
        }
        return kind;
      },
      instr);
}

/// The race detector's agent of an instruction: its DMA queue for a transfer, else its engine.
inline int updatingAgent(Engine engine, Kind kind) {
  return kind.dma ? HazardDetector::queueAgent(kind.queue) : HazardDetector::engineAgent(engine);
}

/// What the scheduler needs of one instruction: its kind, semaphores and accesses, and in timed
/// modes its cost.
struct Planned {
  InstructionCost cost;  ///< timed modes
  Kind kind;
  Completion completion;  ///< the instruction's semaphore updates (core and record unset)
  std::span<const isa::SemaphoreWait> waits;  ///< in the packed stream
  AccessSpan accesses;                        ///< in PlanWindow::accesses
  TransferShape shape;                        ///< for a DMA, in timed modes
};

/// The plans of the next instructions of one engine, decoded from the packed stream a window at
/// a time in a tight sequential loop (the packed fields are read in order, so the hardware
/// prefetcher keeps ahead), where the event loop would decode them one at a time between other
/// work. The window is reused, so a long program costs no memory per instruction.
struct PlanWindow {
  /// Plans per window for one core run alone. Cores run together share the cache, and a plan
  /// takes 208 bytes (and 632 more for its decoded body in modes with data): 8 cores x 5 engines
  /// x 256 would be 2.1 MB (8.6 MB with bodies). Together their windows hold kSharedSize plans
  /// per engine in all (8 each for 8 cores: 67 KB, 270 KB with bodies), at least kMinSize each.
  /// Measured with bodies on 8 trn2 cores (BM_ChipTimingOnly, alternating builds): 8 plans a
  /// window ran faster than 16 or 4, 16 faster than 32 and 32 faster than 64 on a host loaded
  /// 8-16 (2026-12-03); pinned to one CPU on 2026-12-07, 32 ran 3 % faster than 8 on a quiet
  /// host but 25 % slower with two memory-streaming processes beside it (docs/timing.md).
  static constexpr std::size_t kSize = 256;
  static constexpr std::size_t kSharedSize = 64;
  static constexpr std::size_t kMinSize = 4;
  [[nodiscard]] static std::size_t windowSize(std::size_t cores) {
    return cores <= 1 ? kSize : std::max(kMinSize, kSharedSize / cores);
  }
  std::vector<Planned> plans;  ///< windowSize entries, of which the first `count` are planned
  /// In modes with data, the decoded fields of the plans' instructions, which the engines
  /// execute at issue. Without data, one body that every plan is decoded into: only control
  /// instructions execute, and they are decoded into it again at issue (a smaller working set
  /// for eight cores' windows; kernels branch rarely). Each body keeps the alternative it last
  /// held, so decoding an instruction of the same type reuses it.
  std::vector<isa::InstructionBody> bodies;
  std::size_t count = 0;
  PreparedAccesses accesses;  ///< operands of the plans and their cells, when races are checked
  std::size_t first = 0;      ///< stream index of plans[0]

  /// Starts fetching the plan of instruction `pc` into the cache, if the window holds it. With
  /// several cores the other engines' work evicts a plan between planning and issue, and an engine
  /// is mostly woken or rescheduled well before it issues, which is when this is called.
  void prefetch(std::size_t pc) const {
    if (pc - first < count) {
      const auto* bytes = reinterpret_cast<const char*>(&plans[pc - first]);
      for (std::size_t line = 0; line < sizeof(Planned); line += 64) {
        __builtin_prefetch(bytes + line);
      }
    }
  }
};

}  // namespace trn::core::plan
