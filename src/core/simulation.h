// Internal to the scheduler: the Simulation behind NeuronCore::run and runTogether (its
// semantics are described atop simulation.cpp). simulation.cpp holds the issue loop, completions,
// DMA progress and deadlock reports; core_meetings.cpp holds what cores meet at (core barriers,
// sendrecv exchanges).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core_run.h"
#include "cross_core_races.h"
#include "event_queue.h"
#include "instruction_plan.h"
#include "trn/core/dma_model.h"
#include "trn/core/hazard_detector.h"
#include "trn/core/neuron_core.h"

namespace trn::core::sim {

using isa::Engine;

using plan::Completion;
using plan::Kind;
using plan::kindOf;
using plan::kNoRecord;
using plan::Planned;
using plan::PlanWindow;
using plan::setCompletion;
using plan::updatingAgent;

inline constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
class Simulation {
 public:
  explicit Simulation(const std::vector<NeuronCore*>& cores) {
    for (NeuronCore* core : cores) {
      CoreRun run;
      run.core = core;
      cores_.push_back(std::move(run));
    }
  }

  Result<std::vector<RunStats>> run();

 private:
  Status setUp();
  /// The plan of instruction `pc` of `engine` (timed modes).
  Result<const Planned*> planned(std::uint32_t c, Engine engine, std::size_t pc);
  /// Issues the next instruction of `engine` if it can start at `now`; `nextReady` is then when
  /// the engine is free again, else kNever.
  Status tryIssue(std::uint32_t c, Engine engine, std::int64_t now, std::int64_t& nextReady);
  /// Issues instructions of `engine` from `now` for as long as it is the next thing to happen.
  Status runEngine(std::uint32_t c, Engine engine, std::int64_t now);
  Status finishInstruction(std::uint32_t c, const Completion& done, const VectorClock* clock,
                           std::int64_t now);
  /// `engine` of core `c` is at a core_barrier at `now`: counts its arrival (once) and wakes the
  /// group when it is the last. Returns whether the engine may pass the barrier now.
  bool arriveAtBarrier(std::uint32_t c, Engine engine, std::int64_t now);
  /// `engine` of core `c` is at a sendrecv at `now`: counts its arrival (once); when both cores
  /// of the pair are there, exchanges the tiles (exchange). Returns whether the engine may pass
  /// it now (the exchange is done).
  Result<bool> arriveAtExchange(std::uint32_t c, Engine engine, std::int64_t now);
  /// Both cores are at sendrecv `x`: copies each one's src to the other's dst (data modes), sets
  /// when the exchange is done and wakes both engines then.
  Status exchange(ExchangeState& x);
  /// Stores `value` at `slot` of `slots` (growing it) when races are checked.
  static void keepClock(std::vector<VectorClock>& slots, std::uint32_t slot,
                        const VectorClock* value) {
    if (value == nullptr) {
      return;
    }
    if (slots.size() <= slot) {
      slots.resize(slot + 1);
    }
    slots[slot] = *value;
  }
  Status advanceDma(std::int64_t now);
  void scheduleDma();
  void schedule(std::int64_t time, EventKind kind, std::uint32_t core, std::uint32_t payload) {
    queue_.schedule(time, kind, core, payload);
  }
  double throttle(CoreRun& cr, std::int64_t now) const;
  /// The semaphore of the first of `waits` that does not hold, or -1 when all hold.
  [[nodiscard]] static std::int32_t firstUnmetWait(const CoreRun& cr,
                                                   std::span<const isa::SemaphoreWait> waits);
  [[nodiscard]] std::string describe(std::uint32_t c, AccessOwner owner) const;
  [[nodiscard]] Status deadlock() const;
  [[nodiscard]] static Status timeOverflow();
  void finalise();

  std::vector<CoreRun> cores_;
  std::vector<BarrierGroup> groups_;
  std::optional<CrossCoreRaces> crossCore_;  ///< with race detection, when several cores run
  std::int64_t barrierLatency_ = 0;          ///< ps from the last arrival to the others' release
  RunMode mode_ = RunMode::kFunctionalOnly;
  bool timing_ = false;
  const spec::ChipSpec* chip_ = nullptr;
  std::array<std::int64_t, isa::kNumEngines> semaphoreDelay_{};  ///< ps
  std::array<std::int64_t, isa::kNumEngines> latency_{};         ///< ps
  std::optional<DmaModel> dma_;
  std::vector<Completion> transferCompletions_;  ///< by DMA transfer id
  std::int64_t dmaScheduledAt_ = kNever;
  std::vector<Completion> completions_;
  std::vector<VectorClock> completionClocks_;  ///< by completion slot, when races are checked
  std::vector<VectorClock> transferClocks_;    ///< by DMA transfer id, when races are checked
  std::vector<std::uint32_t> freeCompletions_;
  EventQueue queue_;
  std::vector<std::uint32_t> finished_;
};

}  // namespace trn::core::sim
