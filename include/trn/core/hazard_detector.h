// Race detection for one NeuronCore by vector clocks (happens-before). Agents are the five
// sequencers and the DMA queues. Program order orders an agent's own accesses; a semaphore
// update carries the updater's clock and a wait that holds joins the clocks of the updates the
// semaphore has received; a DMA transfer inherits the issuing instruction's clock. Two accesses
// to overlapping bytes from different agents, at least one a write, neither happening before the
// other, are a race (architecture.md "Execution semantics").
//
// Each agent keeps its accesses in epoch order, so the accesses of agent B that are concurrent
// with an access whose clock is V are exactly B's entries with epoch > V[B]: a suffix. Entries
// older than every live agent's view of B can never race again and are pruned. Joining every
// update a semaphore has received (not only those needed to reach the awaited value) can hide a
// race that another interleaving would expose, but never reports a false one.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "trn/base/status.h"
#include "trn/isa/footprint.h"
#include "trn/isa/engine.h"

namespace trn::core {

using isa::Footprint;

/// Agents: engines 0..4, then DMA queues.
inline constexpr int kMaxAgents = 24;
using VectorClock = std::array<std::uint32_t, kMaxAgents>;

/// Identifies the instruction behind an access, for messages.
struct AccessOwner {
  isa::Engine engine = isa::Engine::kPe;
  std::uint32_t index = 0;
};

class HazardDetector {
 public:
  /// `describe` renders an instruction ("pe#3 'nc_matmul ...' at kernel.cpp:12") and
  /// `tensorName` an HBM tensor, for race messages.
  HazardDetector(int semaphores, int queues, std::function<std::string(AccessOwner)> describe,
                 std::function<std::string(std::int32_t)> tensorName);

  [[nodiscard]] static int engineAgent(isa::Engine engine) { return static_cast<int>(engine); }
  [[nodiscard]] static int queueAgent(int queue) { return isa::kNumEngines + queue; }

  /// The clock of `agent`'s current instruction.
  [[nodiscard]] const VectorClock& clock(int agent) const { return clocks_[agent]; }

  /// `agent` passed a wait on `semaphore`.
  void acquire(int agent, int semaphore);
  /// `agent` now also happens after `other` (a DMA transfer after its issuing instruction).
  void join(int agent, const VectorClock& other);
  /// A semaphore update made by an instruction whose clock was `updater`.
  void release(int semaphore, const VectorClock& updater);

  /// Checks the accesses of `agent`'s current instruction against every concurrent access and
  /// records them. Returns the first race found.
  Status access(int agent, AccessOwner owner, std::span<const Footprint> footprints);

  /// Ends `agent`'s current instruction (program order: the next one happens after it).
  void tick(int agent) { ++clocks_[agent][static_cast<std::size_t>(agent)]; }

  /// `engine` has no further instructions (its view no longer holds history back).
  void engineFinished(isa::Engine engine) { finished_[static_cast<std::size_t>(engine)] = true; }

 private:
  /// What the scan reads of a recorded access: its epoch and bounding box (40 bytes, so the
  /// scan stays in cache). The owner and the full footprint are kept alongside, for the exact
  /// test and the message.
  struct Box {
    std::uint32_t epoch;
    std::int32_t tensor;
    isa::Memory memory;
    bool write;
    std::int32_t firstPartition;
    std::int32_t endPartition;
    std::int64_t begin;
    std::int64_t end;
  };
  struct Detail {
    AccessOwner owner;
    Footprint footprint;
  };
  struct History {
    std::vector<Box> boxes;  ///< epoch order
    std::vector<Detail> details;
    std::size_t start = 0;  ///< first live entry
  };

  void prune();

  int agents_;
  std::vector<VectorClock> clocks_;
  std::vector<VectorClock> semaphoreClocks_;
  std::vector<History> history_;  ///< per agent
  std::array<bool, isa::kNumEngines> finished_{};
  std::uint64_t sincePrune_ = 0;
  std::function<std::string(AccessOwner)> describe_;
  std::function<std::string(std::int32_t)> tensorName_;
};

}  // namespace trn::core
