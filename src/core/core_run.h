// Internal to the scheduler (simulation.cpp): the state of one core during a run (its engines'
// sequencers, semaphores, plan windows and detectors) and of the barrier groups its cores meet
// in (the cores of one logical core).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "instruction_plan.h"
#include "power_throttle.h"
#include "sequencer_state.h"
#include "trn/core/hazard_detector.h"
#include "trn/core/instruction_cost.h"
#include "trn/core/neuron_core.h"
#include "trn/core/wait_race_detector.h"

namespace trn::core {

using plan::PlanWindow;

/// EngineState::blockedOn of an engine waiting at a core barrier for the other cores.
constexpr std::int32_t kBarrierWait = -2;
/// EngineState::blockedOn of an engine at a sendrecv, until the exchange is done.
constexpr std::int32_t kExchangeWait = -3;
/// EngineState::blockedOn of an engine at a collective, until every rank is there and it is done.
constexpr std::int32_t kCollectiveWait = -4;

struct EngineState {
  SequencerState seq;
  std::size_t pc = 0;
  std::size_t streamSize = 0;  ///< its stream's length (read here, not through the program)
  std::int64_t readySince = 0;
  std::int32_t blockedOn = -1;   ///< the semaphore of the first wait that did not hold
  std::uint32_t barrier = 0;     ///< the barrier it has arrived at and not yet passed (0: none)
  std::uint32_t exchange = 0;    ///< the sendrecv it has arrived at and not yet passed (0: none)
  std::uint32_t collective = 0;  ///< the collective it has arrived at and not yet passed (0: none)
  // The flags last, together: no padding between the fields above.
  bool blocked = false;
  bool wakePending = false;
  bool done = false;
};

struct CoreRun {
  NeuronCore* core = nullptr;
  std::array<PlanWindow, isa::kNumEngines> windows;
  std::array<EngineState, isa::kNumEngines> engines;
  std::vector<std::int32_t> semaphores;
  /// Per semaphore, a bit for each engine blocked on it (EngineState::blockedOn).
  std::vector<std::uint8_t> waiters;
  std::optional<HazardDetector> hazards;
  std::optional<WaitRaceDetector> waitRaces;  ///< with hazards
  std::optional<CostCalculator> costs;
  RunStats stats;
  std::int64_t lastActivity = 0;
  PowerThrottleState throttle;
  std::uint32_t group = 0;  ///< index of its barrier group (its logical core)
  std::uint32_t barriersReached = 0;
  std::uint32_t exchangesReached = 0;
  std::uint32_t collectivesReached = 0;
  /// Per collective reached: the ranks of its replica group, in the groups' list order.
  std::vector<std::vector<std::int32_t>> collectiveGroups;
  /// Per HBM tensor: whether its accesses can conflict with another core's (cross_core_races.h).
  std::vector<std::uint8_t> crossChecked;
  bool anyCrossChecked = false;  ///< some entry of crossChecked is set
  /// Per HBM tensor, the chip's HBM stack it lies in (timed modes), and the core's own stack.
  std::vector<std::int32_t> tensorStacks;
  std::int32_t stack = 0;
};

/// The semaphore of the first of `waits` that does not hold on `semaphores`, or -1 when all hold.
inline std::int32_t firstUnmetWait(const std::vector<std::int32_t>& semaphores,
                                   std::span<const isa::SemaphoreWait> waits) {
  for (const isa::SemaphoreWait& w : waits) {
    const std::int32_t value = semaphores[static_cast<std::size_t>(w.semaphore)];
    const bool holds = w.compare == isa::WaitCompare::kEqual ? value == w.value : value >= w.value;
    if (!holds) {
      return w.semaphore;
    }
  }
  return -1;
}

/// One barrier of a group: how many of its cores have arrived, the last arrival, and whether it
/// is complete.
struct BarrierState {
  std::size_t arrived = 0;
  std::int64_t lastArrival = 0;
  bool complete = false;
};

/// One sendrecv of a pair, or one collective of a run: who has arrived (core, engine,
/// instruction), and once all have, when it is done.
struct ExchangeState {
  struct Party {
    std::uint32_t core;
    isa::Engine engine;
    std::uint32_t pc;
  };
  std::vector<Party> parties;
  std::int64_t lastArrival = 0;
  std::int64_t doneAt = -1;  ///< -1 until both have arrived
  /// A collective whose streams share its ranks' DMA (simulation_meetings.inc): the end of the
  /// fabric's time, and the streams still moving; doneAt is set when the last of them ends.
  std::int64_t fabricDoneAt = -1;
  std::uint32_t streamsLeft = 0;
};

/// The k-th collective of every rank of a run: the replica groups the first rank to reach it
/// gave (every rank must give the same) and a meeting per group, keyed by its first listed rank.
/// Groups meet and complete independently.
struct CollectiveRound {
  std::uint32_t firstRank = 0;
  isa::ReplicaGroups groups;
  std::map<std::int32_t, ExchangeState> meetings;
};

/// The cores of one logical core, which meet at core barriers and sendrecvs.
struct BarrierGroup {
  int logicalCore = 0;
  std::vector<std::uint32_t> cores;
  std::vector<BarrierState> barriers;    ///< by barrier number - 1
  std::vector<ExchangeState> exchanges;  ///< by sendrecv number - 1
};

}  // namespace trn::core
