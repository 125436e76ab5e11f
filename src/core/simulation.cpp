// The scheduler behind NeuronCore::run and runTogether: an event-driven simulation of the
// sequencers and DMA queues of one or more cores of a chip, in integer picoseconds.
//
// Semantics (docs/timing.md):
// - Each engine issues its stream in order. An instruction starts when its engine is free and its
//   semaphore waits hold; it occupies the engine for its cost (instruction_cost.h) at the engine's
//   clock, stretched by the TensorE power throttle, and completes a fixed pipeline latency
//   (costs.static_overhead_cycles) later, when its semaphore updates are applied.
// - An engine blocked on a semaphore sees an update costs.semaphore_overhead_cycles of its clock
//   after it is made; a wait that already holds costs nothing.
// - A DMA instruction occupies its sequencer for the dispatch cost and hands the transfer to the
//   DMA model (dma_model.h); the transfer applies the instruction's updates when it finishes.
// - Events are ordered by (time, kind, sequence): completions before DMA progress before issue,
//   and otherwise in the order they were scheduled, so runs are deterministic (event_queue.h).
// - Functional-only mode runs the same scheduler with every duration zero. Data is computed when
//   an instruction starts (a DMA when it is issued); the race detector (hazard_detector.h) checks
//   every access in every mode; between cores, cross_core_races.h checks their HBM accesses.
// - A core_barrier completes when every core of its logical core (CoreOptions::logicalCore) has
//   reached the same barrier: the last to arrive goes on at once, the others see its remote
//   semaphore write a DMA fixed cost (core.dma.fixed_cost) plus their semaphore overhead later
//   (docs/chip.md). The k-th sendrecv of each core of a pair meets the other's k-th; both go on a
//   DMA fixed cost plus the tiles' crossing time after the later arrival.
//
// The class stays in this file's anonymous namespace: moving it into a header so that the barrier
// and sendrecv code could have a file of its own cost 4 % of timing-only speed (GCC inlines less
// between functions with external linkage; measured 2026-12-02). What does not need its state
// lives beside it: deadlock_report.h, tile_exchange.h, power_throttle.h, core_run.h; where cores
// meet (barriers, sendrecv, collectives) is simulation_meetings.inc, included below.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <variant>

#include "core_run.h"
#include "cross_core_races.h"
#include "deadlock_report.h"
#include "event_queue.h"
#include "instruction_plan.h"
#include "sequencer_state.h"
#include "tile_exchange.h"
#include "trn/core/collective_service.h"
#include "trn/core/dma_model.h"
#include "trn/core/hazard_detector.h"
#include "trn/core/instruction_cost.h"
#include "trn/core/neuron_core.h"
#include "trn/core/wait_race_detector.h"
#include "trn/isa/program_text.h"

namespace trn::core {

using isa::Engine;

using plan::Completion;
using plan::Kind;
using plan::kindOf;
using plan::kNoRecord;
using plan::Planned;
using plan::PlanWindow;
using plan::setCompletion;
using plan::updatingAgent;

namespace {

constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
class Simulation {
 public:
  Simulation(const std::vector<NeuronCore*>& cores, CollectiveService* collectives)
      : collectiveService_(collectives) {
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
  /// `engine` of core `c` is at a collective at `now`: counts its arrival (once) in its replica
  /// group's meeting; when every member is there, runs it (runCollective). Returns whether the
  /// engine may pass it now.
  Result<bool> arriveAtCollective(std::uint32_t c, Engine engine, std::int64_t now);
  /// Every member is at collective `x`: hands it to the service, sets when it is done and wakes the
  /// engines then.
  Status runCollective(ExchangeState& x, std::span<const std::int32_t> members,
                       std::uint32_t round);
  /// Issues the DMA streams of collective `round` (meeting `x`, keyed `meeting`) on its ranks'
  /// cores (simulation_meetings.inc); x's end then waits for them as well as for the fabric.
  void startCollectiveStreams(ExchangeState& x, std::span<const CollectiveChipLoad> loads,
                              std::uint32_t round, std::int32_t meeting);
  /// DMA transfer `id`, a collective's stream, ended at `now`.
  void endCollectiveStream(std::uint32_t id, std::int64_t now);
  /// Wakes every party of meeting `x` when it is done (they see it as a remote semaphore write).
  void wakeParties(const ExchangeState& x);
  /// Stores `value` at `slot` of `slots` (growing it) when races are checked.
  static void keepClock(std::vector<VectorClock>& slots, std::uint32_t slot,
                        const VectorClock* value) {
    if (value == nullptr) {
      return;
    }
    if (slots.size() <= slot) {
      slots.resize(slot + 1);
    }
    plan::copyInPieces(slots[slot], *value);
  }
  Status advanceDma(std::int64_t now);
  void scheduleDma();
  void schedule(std::int64_t time, EventKind kind, std::uint32_t core, std::uint32_t payload) {
    queue_.schedule(time, kind, core, payload);
  }
  [[nodiscard]] std::string describe(std::uint32_t c, AccessOwner owner) const;
  [[nodiscard]] Status deadlock() const;
  [[nodiscard]] static Status timeOverflow();
  void finalise();

  std::vector<CoreRun> cores_;
  std::vector<BarrierGroup> groups_;
  CollectiveService* collectiveService_ = nullptr;
  bool severalDevices_ = false;              ///< cores on different chips: messages name ranks
  std::vector<CollectiveRound> collectives_;  ///< by collective number - 1, over all cores
  std::optional<CrossCoreRaces> crossCore_;  ///< with race detection, when several cores run
  std::int64_t barrierLatency_ = 0;          ///< ps from the last arrival to the others' release
  RunMode mode_ = RunMode::kFunctionalOnly;
  bool timing_ = false;
  const spec::ChipSpec* chip_ = nullptr;
  std::array<std::int64_t, isa::kNumEngines> semaphoreDelay_{};  ///< ps
  std::array<std::int64_t, isa::kNumEngines> latency_{};         ///< ps
  std::optional<DmaModel> dma_;
  std::vector<Completion> transferCompletions_;  ///< by DMA transfer id
  /// By DMA transfer id: the collective (number - 1, meeting key) whose stream it is, if any.
  struct StreamOwner {
    std::uint32_t round = kNoRecord;
    std::int32_t meeting = 0;
  };
  std::vector<StreamOwner> streamOwners_;
  std::int64_t dmaScheduledAt_ = kNever;
  std::vector<Completion> completions_;
  std::vector<VectorClock> completionClocks_;  ///< by completion slot, when races are checked
  std::vector<VectorClock> transferClocks_;    ///< by DMA transfer id, when races are checked
  std::vector<std::uint32_t> freeCompletions_;
  EventQueue queue_;
  std::vector<std::uint32_t> finished_;
};

Status Simulation::setUp() {
  const CoreOptions& first = cores_.front().core->options();
  mode_ = first.mode;
  timing_ = hasTiming(mode_);
  chip_ = first.chip.get();
  std::vector<int> physical;
  std::vector<int> deviceOf;
  std::vector<const DeviceMemory*> devices;
  for (std::uint32_t c = 0; c < cores_.size(); ++c) {
    CoreRun& cr = cores_[c];
    const CoreOptions& options = cr.core->options();
    // Cores on different chip-shaped devices are on different chips and share no stack; a
    // core's own one-stack device stands for its stack of the one chip (as below).
    const DeviceMemory* mine = &cr.core->device();
    if (chip_ != nullptr && mine->stacks() != chip_->hbm.stacks) {
      deviceOf.push_back(0);
    } else {
      const auto known = std::find(devices.begin(), devices.end(), mine);
      deviceOf.push_back(static_cast<int>(known - devices.begin()));
      if (known == devices.end()) {
        devices.push_back(mine);
      }
    }
    if (options.mode != mode_ || options.chip.get() != chip_) {
      return invalidArgument("cores simulated together must share one mode and one chip");
    }
    physical.push_back(options.physicalCore);
    auto group = std::find_if(groups_.begin(), groups_.end(), [&](const BarrierGroup& g) {
      return g.logicalCore == options.logicalCore;
    });
    if (group == groups_.end()) {
      group = groups_.insert(groups_.end(), BarrierGroup{options.logicalCore, {}, {}, {}});
    }
    group->cores.push_back(c);
    cr.group = static_cast<std::uint32_t>(group - groups_.begin());
    cr.stats.mode = mode_;
    cr.semaphores.assign(static_cast<std::size_t>(options.limits.semaphores), 0);
    cr.waiters.assign(cr.semaphores.size(), 0);
    for (const Engine engine : isa::kAllEngines) {
      EngineState& es = cr.engines[static_cast<std::size_t>(engine)];
      es.seq = cr.core->newSequencer();
      es.streamSize = cr.core->program().stream(engine).size();
    }
    const isa::Program& program = cr.core->program();
    if (options.detectRaces) {
      cr.hazards.emplace(
          options.limits, program, cr.core->writtenTensors(),
          [this, c](AccessOwner owner) { return describe(c, owner); },
          [&program](std::int32_t tensor) {
            return program.tensors[static_cast<std::size_t>(tensor)].name;
          });
      TRN_ASSIGN_OR_RETURN(
          WaitRaceDetector waitRaces,
          WaitRaceDetector::create(program, cr.core->semaphoreUse(),
                                   [this, c](AccessOwner owner) { return describe(c, owner); }));
      cr.waitRaces.emplace(std::move(waitRaces));
    }
    if (timing_) {
      TRN_ASSIGN_OR_RETURN(CostCalculator calc, CostCalculator::create(*chip_));
      cr.costs.emplace(std::move(calc));
      // A core's own device (one stack) stands for its own stack of the chip.
      cr.stack = chip_->hbm.stackOf(options.physicalCore);
      const DeviceMemory& device = cr.core->device();
      const bool chipShaped = device.stacks() == chip_->hbm.stacks;
      for (std::size_t t = 0; t < program.tensors.size(); ++t) {
        cr.tensorStacks.push_back(chipShaped
                                      ? static_cast<std::int32_t>(device.stackOf(
                                            cr.core->tensorAddress(static_cast<std::int32_t>(t))))
                                      : cr.stack);
      }
      cr.stats.dma.hbmBytesByStack.assign(static_cast<std::size_t>(chip_->hbm.stacks), 0);
    }
  }
  severalDevices_ = devices.size() > 1;
  const bool allDetect = std::all_of(cores_.begin(), cores_.end(), [](const CoreRun& cr) {
    return cr.core->options().detectRaces;
  });
  if (cores_.size() > 1 && allDetect) {
    std::vector<const NeuronCore*> cores;
    for (const CoreRun& cr : cores_) {
      cores.push_back(cr.core);
    }
    std::vector<std::vector<std::uint8_t>> checked = CrossCoreRaces::checkedTensors(cores);
    for (std::size_t c = 0; c < cores_.size(); ++c) {
      cores_[c].crossChecked = std::move(checked[c]);
      cores_[c].anyCrossChecked =
          std::any_of(cores_[c].crossChecked.begin(), cores_[c].crossChecked.end(),
                      [](std::uint8_t checkedTensor) { return checkedTensor != 0; });
    }
    crossCore_.emplace(std::move(cores),
                       [this](std::uint32_t c, AccessOwner owner) { return describe(c, owner); });
  }
  if (timing_) {
    barrierLatency_ = chip_->core.dma.fixedCost.count();
    for (const Engine e : isa::kAllEngines) {
      const auto i = static_cast<std::size_t>(e);
      const Hertz clock = engineClock(*chip_, e);
      semaphoreDelay_[i] = cyclesToTime(chip_->costs.semaphoreOverheadCycles, clock).count();
      latency_[i] = cyclesToTime(chip_->costs.staticOverheadCycles, clock).count();
    }
    dma_.emplace(*chip_, physical, deviceOf);
  }
  return {};
}

Result<const Planned*> Simulation::planned(std::uint32_t c, Engine engine, std::size_t pc) {
  CoreRun& cr = cores_[c];
  PlanWindow& window = cr.windows[static_cast<std::size_t>(engine)];
  if (pc >= window.first && pc < window.first + window.count) {
    return &window.plans[pc - window.first];
  }
  // Sizes and pointers are read once: stores into the window would otherwise make the compiler
  // reload them for every instruction.
  const isa::InstructionStream& stream = cr.core->program().stream(engine);
  const std::size_t windowSize = PlanWindow::windowSize(cores_.size());
  const std::size_t count = std::min(windowSize, stream.size() - pc);
  const std::int64_t maxBuffer =
      chip_ != nullptr ? chip_->core.dma.descriptors.maxBufferBytes.count() : 0;
  CostCalculator* costs = cr.costs ? &*cr.costs : nullptr;
  HazardDetector* hazards = cr.hazards ? &*cr.hazards : nullptr;
  const bool keepBodies = hasData(mode_);
  if (window.plans.empty()) {
    window.plans.resize(windowSize);
    window.bodies.resize(keepBodies ? windowSize : 1);
  }
  Planned* plans = window.plans.data();
  isa::InstructionBody* bodies = window.bodies.data();
  window.first = pc;
  window.count = count;
  window.accesses.clear();
  for (std::size_t i = 0; i < count; ++i) {
    isa::InstructionBody& body = bodies[keepBodies ? i : 0];
    stream.decodeBody(pc + i, body);
    Planned& p = plans[i];
    p.kind = kindOf(body);
    setCompletion(p.completion, c, AccessOwner{engine, static_cast<std::uint32_t>(pc + i)},
                  updatingAgent(engine, p.kind), stream.updates(pc + i));
    p.waits = stream.waits(pc + i);
    if (costs != nullptr) {
      Result<const InstructionCost*> cost = costs->cost(engine, body);
      if (!cost.ok()) {
        if (i > 0) {
          window.count = i;  // report it when (and if) the instruction is reached
          break;
        }
        return cost.status().withContext(
            describe(c, AccessOwner{engine, static_cast<std::uint32_t>(pc)}));
      }
      p.cost = **cost;
      if (p.kind.dma) {
        p.shape = transferShape(body, maxBuffer, chip_->core.dma, cr.tensorStacks);
      }
    }
    if (hazards != nullptr) {
      p.accesses = hazards->prepare(body, window.accesses);
    }
  }
  return &plans[0];
}

std::string Simulation::describe(std::uint32_t c, AccessOwner owner) const {
  const isa::Program& program = cores_[c].core->program();
  const isa::Instruction instr = program.stream(owner.engine)[owner.index];
  std::string text = fmt::format("{}#{} '{}'", isa::engineName(owner.engine), owner.index,
                                 isa::formatInstruction(instr, program, false));
  if (!instr.location.file.empty()) {
    text += fmt::format(" at {}:{}", instr.location.file, instr.location.line);
  }
  const int physicalCore = cores_[c].core->options().physicalCore;
  if (severalDevices_ && groups_[cores_[c].group].cores.size() > 1) {
    text = fmt::format("rank {} core {}: {}", cores_[c].group, physicalCore, text);
  } else if (severalDevices_) {
    text = fmt::format("rank {}: {}", cores_[c].group, text);
  } else if (cores_.size() > 1) {
    text = fmt::format("core {}: {}", physicalCore, text);
  }
  return text;
}

Status Simulation::runEngine(std::uint32_t c, Engine engine, std::int64_t now) {
  EngineState& es = cores_[c].engines[static_cast<std::size_t>(engine)];
  es.wakePending = false;
  while (true) {
    std::int64_t next = kNever;
    TRN_RETURN_IF_ERROR(tryIssue(c, engine, now, next));
    if (next == kNever) {
      return {};
    }
    // Without an earlier event pending, this engine's next issue is the next event: run it
    // directly (a strictly earlier time cannot tie with any queued event, so the order is the
    // one the queue would give).
    if (queue_.anyPendingBy(next)) {
      es.wakePending = true;
      schedule(next, EventKind::kReady, c, static_cast<std::uint32_t>(engine));
      cores_[c].windows[static_cast<std::size_t>(engine)].prefetch(es.pc);
      return {};
    }
    now = next;
  }
}

Status Simulation::tryIssue(std::uint32_t c, Engine engine, std::int64_t now,
                            std::int64_t& nextReady) {
  CoreRun& cr = cores_[c];
  EngineState& es = cr.engines[static_cast<std::size_t>(engine)];
  const auto e = static_cast<std::size_t>(engine);
  if (es.done) {
    return {};
  }
  if (es.pc >= es.streamSize) {
    es.done = true;
    if (cr.hazards) {
      cr.hazards->engineFinished(engine);
    }
    return {};
  }
  // The plan is mostly in the window already: only a refill goes through a Result.
  PlanWindow& window = cr.windows[e];
  const Planned* plan = nullptr;
  if (es.pc - window.first < window.count) {
    plan = &window.plans[es.pc - window.first];
  } else {
    TRN_ASSIGN_OR_RETURN(plan, planned(c, engine, es.pc));
  }
  const std::span<const isa::SemaphoreWait> waits = plan->waits;
  es.blockedOn = firstUnmetWait(cr.semaphores, waits);
  if (es.blockedOn >= 0) {
    es.blocked = true;
    cr.waiters[static_cast<std::size_t>(es.blockedOn)] |= static_cast<std::uint8_t>(1u << e);
    return {};
  }
  es.blocked = false;
  const CoreOptions& options = cr.core->options();
  const AccessOwner owner{engine, static_cast<std::uint32_t>(es.pc)};
  const int agent = HazardDetector::engineAgent(engine);
  const Kind kind = plan->kind;
  const bool dma = kind.dma;
  if (kind.barrier) {
    if (cr.hazards && es.barrier == 0) {
      // The arrival happens after the barrier's own waits (checked again when it passes).
      for (const isa::SemaphoreWait& w : waits) {
        cr.hazards->acquire(agent, w.semaphore);
      }
    }
    if (!arriveAtBarrier(c, engine, now)) {
      es.blocked = true;
      es.blockedOn = kBarrierWait;
      return {};
    }
    if (cr.hazards) {
      VectorClock passed{};
      passed[static_cast<std::size_t>(kBarrierSlot)] = es.barrier;
      cr.hazards->join(agent, passed);
    }
    es.barrier = 0;
  }

  if (kind.exchange || kind.collective) {
    TRN_ASSIGN_OR_RETURN(const bool met, kind.exchange ? arriveAtExchange(c, engine, now)
                                                       : arriveAtCollective(c, engine, now));
    if (!met) {
      es.blocked = true;
      es.blockedOn = kind.exchange ? kExchangeWait : kCollectiveWait;
      return {};
    }
    (kind.exchange ? es.exchange : es.collective) = 0;
  }

  // Happens-before and race check.
  const Completion& done = plan->completion;
  // The accessor's clock, kept for the completion; its own epoch advances once it is kept.
  const VectorClock* clock = nullptr;
  const int accessor = dma ? HazardDetector::queueAgent(kind.queue) : agent;
  if (cr.hazards) {
    HazardDetector& hazards = *cr.hazards;
    for (const isa::SemaphoreWait& w : waits) {
      TRN_RETURN_IF_ERROR(cr.waitRaces->passed(w, agent, hazards.clock(agent), owner));
    }
    for (const isa::SemaphoreWait& w : waits) {
      hazards.acquire(agent, w.semaphore);
    }
    const PreparedAccesses* prepared = &cr.windows[e].accesses;
    const AccessSpan accesses = plan->accesses;
    if (dma) {
      hazards.join(accessor, hazards.clock(agent));
    }
    TRN_RETURN_IF_ERROR(hazards.access(accessor, owner, *prepared, accesses));
    clock = &hazards.clock(accessor);
    if (crossCore_ && cr.anyCrossChecked) {
      TRN_RETURN_IF_ERROR(crossCore_->access(
          c, accessor, owner, *clock,
          std::span(prepared->operands).subspan(accesses.firstOperand, accesses.operandCount),
          cr.crossChecked));
    }
  }

  // Time.
  InstructionCost cost;
  std::int64_t duration = 0;
  double limit = 1.0;
  if (timing_) {
    cost = plan->cost;
    duration = cost.picoseconds;
    if (engine == Engine::kPe && !cost.variant.empty()) {
      limit = throttleLimit(chip_->core.pe.powerThrottle, cr.throttle, now);
      const double stretched = std::ceil(static_cast<double>(duration) / limit);
      if (!(stretched < static_cast<double>(kMaxSimulatedTime.count()))) {
        return timeOverflow().withContext(describe(c, owner));
      }
      duration = static_cast<std::int64_t>(stretched);
      cr.throttle.peLastEnd = now + duration;
    }
  }
  const std::int64_t end = now + duration;  // both below 2^62: no overflow
  if (end > kMaxSimulatedTime.count()) {
    return timeOverflow().withContext(describe(c, owner));
  }

  // Data.
  std::int64_t jump = -1;
  if (kind.control || hasData(mode_)) {
    isa::InstructionBody* body = &window.bodies[0];
    if (hasData(mode_)) {
      body += es.pc - window.first;
    } else {
      cr.core->program().stream(engine).decodeBody(es.pc, *body);
    }
    if (Status status = cr.core->execute(engine, *body, es.seq, jump); !status.ok()) {
      return status.withContext(describe(c, owner));
    }
  }

  // Statistics.
  RunStats& stats = cr.stats;
  if (++stats.instructions > options.maxInstructions) {
    return failedPrecondition(
        fmt::format("stopped after {} instructions (the limit); a dynamic loop may not terminate",
                    options.maxInstructions));
  }
  EngineTotals& totals = stats.engines[e];
  ++totals.instructions;
  totals.busy += Picoseconds(duration);
  totals.waiting += Picoseconds(now - es.readySince);
  stats.flops += cost.flops;
  std::uint32_t record = kNoRecord;
  if (options.record && stats.records.size() >= options.maxRecords) {
    ++stats.unrecorded;
  } else if (options.record) {
    record = static_cast<std::uint32_t>(stats.records.size());
    stats.records.push_back(InstructionRecord{engine, owner.index, Picoseconds(es.readySince),
                                              Picoseconds(now), Picoseconds(end), Picoseconds(end),
                                              cost.cycles, cost.variant, limit, cost.flops});
  }
  cr.lastActivity = std::max(cr.lastActivity, end);

  // Completion.
  if (dma && timing_) {
    const std::uint32_t id =
        dma_->submit(static_cast<int>(c), kind.queue, Picoseconds(end), plan->shape);
    if (transferCompletions_.size() <= id) {
      transferCompletions_.resize(id + 1);
    }
    Completion& pending = transferCompletions_[id];
    plan::copyInPieces(pending, done);
    pending.record = record;
    keepClock(transferClocks_, id, clock);
    scheduleDma();
  } else {
    const std::int64_t complete = end + (timing_ ? latency_[e] : 0);
    if (record != kNoRecord) {
      stats.records[record].complete = Picoseconds(complete);
    }
    cr.lastActivity = std::max(cr.lastActivity, complete);
    if (!done.updateList().empty()) {
      std::uint32_t slot;
      if (freeCompletions_.empty()) {
        slot = static_cast<std::uint32_t>(completions_.size());
        completions_.push_back(done);
      } else {
        slot = freeCompletions_.back();
        freeCompletions_.pop_back();
        completions_[slot] = done;
      }
      completions_[slot].record = record;
      keepClock(completionClocks_, slot, clock);
      schedule(complete, EventKind::kComplete, c, slot);
    }
  }
  if (cr.hazards) {
    cr.hazards->tick(accessor);
    if (dma) {
      cr.hazards->tick(agent);
    }
  }
  es.pc = jump >= 0 ? static_cast<std::size_t>(jump) : es.pc + 1;
  es.readySince = end;
  nextReady = end;
  return {};
}

#include "simulation_meetings.inc"

Status Simulation::finishInstruction(std::uint32_t c, const Completion& done,
                                     const VectorClock* clock, std::int64_t now) {
  CoreRun& cr = cores_[c];
  std::uint32_t woken = 0;  ///< a bit per engine to wake
  for (const isa::SemaphoreUpdate& u : done.updateList()) {
    std::int32_t& value = cr.semaphores[static_cast<std::size_t>(u.semaphore)];
    std::int64_t next = u.value;
    switch (u.op) {
      case isa::SemaphoreUpdateOp::kAdd:
        next = std::int64_t{value} + u.value;
        break;
      case isa::SemaphoreUpdateOp::kSubtract:
        next = std::int64_t{value} - u.value;
        break;
      case isa::SemaphoreUpdateOp::kSet:
        break;
    }
    if (!std::in_range<std::int32_t>(next)) {
      return outOfRange(fmt::format("semaphore s{} would become {}, outside the 32-bit range of a "
                                    "semaphore (it was {})",
                                    u.semaphore, next, value))
          .withContext(describe(c, done.owner));
    }
    if (cr.waitRaces) {
      TRN_RETURN_IF_ERROR(cr.waitRaces->updated(u.semaphore, value, static_cast<std::int32_t>(next),
                                                done.agent, *clock, done.owner));
    }
    value = static_cast<std::int32_t>(next);
    if (cr.hazards) {
      cr.hazards->release(u.semaphore, *clock);
    }
    // Only an engine blocked on a semaphore that changed can proceed.
    std::uint8_t& waiting = cr.waiters[static_cast<std::size_t>(u.semaphore)];
    for (std::uint32_t engines = waiting; engines != 0; engines &= engines - 1) {
      const EngineState& es = cr.engines[static_cast<std::size_t>(std::countr_zero(engines))];
      if (es.blocked && !es.wakePending && es.blockedOn == u.semaphore) {
        woken |= engines & -engines;
      }
    }
    waiting = 0;
  }
  // Wake them in engine order (deterministic event sequence).
  for (; woken != 0; woken &= woken - 1) {
    const int e = std::countr_zero(woken);
    cr.engines[static_cast<std::size_t>(e)].wakePending = true;
    cr.windows[static_cast<std::size_t>(e)].prefetch(cr.engines[static_cast<std::size_t>(e)].pc);
    schedule(now + semaphoreDelay_[static_cast<std::size_t>(e)], EventKind::kReady, c,
             static_cast<std::uint32_t>(e));
  }
  return {};
}

void Simulation::scheduleDma() {
  const std::optional<Picoseconds> next = dma_->nextEvent();
  if (next && next->count() < dmaScheduledAt_) {
    dmaScheduledAt_ = next->count();
    schedule(dmaScheduledAt_, EventKind::kDma, 0, 0);
  }
}

Status Simulation::advanceDma(std::int64_t now) {
  if (now == dmaScheduledAt_) {
    dmaScheduledAt_ = kNever;
  }
  finished_.clear();
  dma_->advance(Picoseconds(now), finished_);
  for (const std::uint32_t id : finished_) {
    if (id < streamOwners_.size() && streamOwners_[id].round != kNoRecord) {
      endCollectiveStream(id, now);
      continue;
    }
    const DmaModel::Transfer& t = dma_->transfer(id);
    const Completion& done = transferCompletions_[id];
    CoreRun& cr = cores_[done.core];
    DmaTotals& totals = cr.stats.dma;
    ++totals.transfers;
    totals.bytes += t.shape.bytes;
    totals.hbmBytes += t.shape.hbmBytes;
    forEachStackShare(t.shape, cr.stack, [&](std::int32_t stack, std::int64_t bytes) {
      totals.hbmBytesByStack[static_cast<std::size_t>(stack)] += bytes;
    });
    totals.descriptors += t.shape.descriptors;
    cr.lastActivity = std::max(cr.lastActivity, now);
    if (done.record != kNoRecord) {
      cr.stats.records[done.record].complete = t.finished;
      cr.stats.transfers.push_back(TransferRecord{
          done.record, t.queue, t.issued, t.started, t.finished, t.shape.bytes, t.shape.hbmBytes,
          t.shape.descriptors, t.engines, static_cast<double>(t.shape.bytes) / t.work});
    }
    const Completion finished = done;
    const VectorClock* clock = cr.hazards ? &transferClocks_[id] : nullptr;
    TRN_RETURN_IF_ERROR(finishInstruction(finished.core, finished, clock, now));
    dma_->release(id);
  }
  scheduleDma();
  return {};
}

Status Simulation::deadlock() const {
  return deadlockReport(cores_, groups_,
                        [this](std::uint32_t c, AccessOwner owner) { return describe(c, owner); });
}

Status Simulation::timeOverflow() {
  return outOfRange(fmt::format(
      "simulated time would pass {} ({:.1f} days), the latest time trnsim represents; a clock or "
      "bandwidth of the chip description is probably far too low for this workload",
      toString(kMaxSimulatedTime), static_cast<double>(kMaxSimulatedTime.count()) / 864e14));
}

void Simulation::finalise() {
  for (std::uint32_t c = 0; c < cores_.size(); ++c) {
    CoreRun& cr = cores_[c];
    if (!timing_) {
      continue;
    }
    cr.stats.total = Picoseconds(cr.lastActivity);
    cr.stats.dma.busy = dma_->busyTime(static_cast<int>(c));
  }
}

Result<std::vector<RunStats>> Simulation::run() {
  TRN_RETURN_IF_ERROR(setUp());
  queue_.reset(cores_.size());
  for (std::uint32_t c = 0; c < cores_.size(); ++c) {
    for (const Engine engine : isa::kAllEngines) {
      cores_[c].engines[static_cast<std::size_t>(engine)].wakePending = true;
      schedule(0, EventKind::kReady, c, static_cast<std::uint32_t>(engine));
    }
  }
  Event event{};
  while (queue_.pop(event)) {
    if (event.time > kMaxSimulatedTime.count()) {
      return timeOverflow().withContext(event.kind() == EventKind::kDma ? "a DMA transfer"
                                                                        : "an instruction");
    }
    switch (event.kind()) {
      case EventKind::kComplete: {
        const Completion done = completions_[event.payload];
        const VectorClock* clock =
            cores_[event.core].hazards ? &completionClocks_[event.payload] : nullptr;
        TRN_RETURN_IF_ERROR(finishInstruction(event.core, done, clock, event.time));
        freeCompletions_.push_back(event.payload);
        break;
      }
      case EventKind::kDma:
        TRN_RETURN_IF_ERROR(advanceDma(event.time));
        break;
      case EventKind::kReady:
        TRN_RETURN_IF_ERROR(runEngine(event.core, static_cast<Engine>(event.payload), event.time));
        break;
    }
  }
  for (const CoreRun& cr : cores_) {
    for (const EngineState& es : cr.engines) {
      if (!es.done) {
        return deadlock();
      }
    }
  }
  finalise();
  std::vector<RunStats> out;
  for (CoreRun& cr : cores_) {
    out.push_back(std::move(cr.stats));
  }
  return out;
}

}  // namespace

Result<std::vector<RunStats>> runTogether(const std::vector<NeuronCore*>& cores,
                                          CollectiveService* collectives) {
  if (cores.empty()) {
    return invalidArgument("runTogether needs at least one core");
  }
  Simulation simulation(cores, collectives);
  return simulation.run();
}

}  // namespace trn::core
