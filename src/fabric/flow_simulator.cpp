#include "trn/fabric/flow_simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>

namespace trn::fabric {
namespace {

enum class EventKind : std::uint8_t { kStart, kTransmitted, kEnd };

struct Event {
  std::int64_t time;
  std::uint64_t sequence;
  OpId op;
  std::uint32_t version;  ///< kTransmitted: the rate it was computed at
  EventKind kind;

  bool operator>(const Event& other) const {
    return time != other.time ? time > other.time : sequence > other.sequence;
  }
};

/// The state of one operation while the plan runs.
struct OpState {
  std::uint32_t waiting = 0;  ///< predecessors not yet ended
  std::int64_t ready = 0;     ///< when the last ended
  double remaining = 0;       ///< bytes still to move (as of `since`)
  double rate = 0;            ///< bytes per ps
  std::int64_t since = 0;
  std::uint32_t version = 0;
  std::uint32_t stamp = 0;  ///< the rate update that last visited it
};

class Simulator {
 public:
  explicit Simulator(const Plan& plan)
      : plan_(plan),
        topology_(plan.topology()),
        states_(plan.ops().size()),
        active_(topology_.resourceCount()),
        busyCores_(static_cast<std::size_t>(topology_.chips() / topology_.ranksPerChip()), 0),
        waitingForCore_(static_cast<std::size_t>(topology_.chips() / topology_.ranksPerChip())),
        slot_(plan.ops().empty()
                  ? 0
                  : plan.ops().back().firstResource + plan.ops().back().resourceCount) {
    timing_.resourceBytes.assign(topology_.resourceCount(), 0.0);
    timing_.opStart.assign(plan.ops().size(), 0);
    timing_.opEnd.assign(plan.ops().size(), 0);
    // Successors, as lists in one array (counting sort by predecessor).
    const std::vector<PlanOp>& ops = plan.ops();
    successorStart_.assign(ops.size() + 1, 0);
    for (const PlanOp& op : ops) {
      for (const OpId p : plan.predecessorsOf(op)) {
        ++successorStart_[p + 1];
      }
    }
    for (std::size_t i = 0; i < ops.size(); ++i) {
      successorStart_[i + 1] += successorStart_[i];
    }
    successors_.resize(successorStart_.back());
    std::vector<std::uint32_t> fill(successorStart_.begin(), successorStart_.end() - 1);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      states_[i].waiting = ops[i].predecessorCount;
      for (const OpId p : plan.predecessorsOf(ops[i])) {
        successors_[fill[p]++] = static_cast<OpId>(i);
      }
    }
    // The operations queued behind each (PlanOp::queuedBehind), released at its last byte.
    behindStart_.assign(ops.size() + 1, 0);
    for (const PlanOp& op : ops) {
      if (op.queuedBehind != kNoMove) {
        ++behindStart_[op.queuedBehind + 1];
      }
    }
    for (std::size_t i = 0; i < ops.size(); ++i) {
      behindStart_[i + 1] += behindStart_[i];
    }
    behind_.resize(behindStart_.back());
    fill.assign(behindStart_.begin(), behindStart_.end() - 1);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].queuedBehind != kNoMove) {
        ++states_[i].waiting;
        behind_[fill[ops[i].queuedBehind]++] = static_cast<OpId>(i);
      }
    }
  }

  Result<PlanTiming> run() {
    const std::vector<PlanOp>& ops = plan_.ops();
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (states_[i].waiting == 0) {
        schedule(ops[i].startDelay, EventKind::kStart, static_cast<OpId>(i), 0);
      }
    }
    while (!events_.empty()) {
      const Event e = events_.top();
      events_.pop();
      ++timing_.events;
      if (e.time > kMaxSimulatedTime.count()) {
        return outOfRange("a collective's time passed the simulator's limit (2^62 ps)");
      }
      switch (e.kind) {
        case EventKind::kStart:
          TRN_RETURN_IF_ERROR(start(e.op, e.time));
          break;
        case EventKind::kTransmitted:
          if (e.version == states_[e.op].version) {
            TRN_RETURN_IF_ERROR(transmitted(e.op, e.time));
          }
          break;
        case EventKind::kEnd:
          end(e.op, e.time);
          break;
      }
    }
    return std::move(timing_);
  }

 private:
  void schedule(std::int64_t time, EventKind kind, OpId op, std::uint32_t version) {
    events_.push(Event{time, sequence_++, op, version, kind});
  }

  /// Whether `op` moves bytes on one of a chip's collective cores, which are limited.
  [[nodiscard]] bool needsCollectiveCore(const PlanOp& op) const {
    return op.issuer >= 0 && topology_.collectiveCores() > 0 && op.resourceCount > 0 &&
           op.bytes > 0;
  }

  Status start(OpId id, std::int64_t now) {
    const PlanOp& op = plan_.ops()[id];
    if (needsCollectiveCore(op)) {
      const auto chip = static_cast<std::size_t>(topology_.physicalChipOf(op.issuer));
      if (busyCores_[chip] == topology_.collectiveCores()) {
        waitingForCore_[chip].push_back(id);  // started when a core frees, in arrival order
        return {};
      }
      ++busyCores_[chip];
    }
    return stream(id, now);
  }

  /// `id` begins to move its bytes.
  Status stream(OpId id, std::int64_t now) {
    const PlanOp& op = plan_.ops()[id];
    const std::span<const ResourceId> resources = plan_.resourcesOf(op);
    timing_.opStart[id] = now;
    if (resources.empty() || op.bytes <= 0) {
      schedule(now + op.endDelay, EventKind::kEnd, id, 0);
      releaseQueued(id, now);
      return {};
    }
    const std::span<const double> weights = plan_.weightsOf(op);
    for (std::size_t k = 0; k < resources.size(); ++k) {
      const ResourceId r = resources[k];
      if (!(topology_.bandwidth(r) > 0)) {
        return failedPrecondition(
            fmt::format("a collective routes bytes over {}, which has no "
                        "bandwidth",
                        topology_.resourceName(r)));
      }
      slot_[op.firstResource + k] = static_cast<std::uint32_t>(active_[r].size());
      active_[r].push_back(id);
      timing_.resourceBytes[r] += op.bytes * weights[k];
    }
    OpState& s = states_[id];
    s.remaining = op.bytes;
    s.rate = 0;
    s.since = now;
    return updateRates(resources, now);
  }

  Status transmitted(OpId id, std::int64_t now) {
    const PlanOp& op = plan_.ops()[id];
    const std::span<const ResourceId> resources = plan_.resourcesOf(op);
    for (std::size_t k = 0; k < resources.size(); ++k) {
      std::vector<OpId>& users = active_[resources[k]];
      const std::uint32_t at = slot_[op.firstResource + k];
      const OpId moved = users.back();
      users[at] = moved;
      users.pop_back();
      if (moved != id) {
        setSlot(moved, resources[k], at);
      }
    }
    ++states_[id].version;  // no further transmission events
    schedule(now + op.endDelay, EventKind::kEnd, id, 0);
    releaseQueued(id, now);
    TRN_RETURN_IF_ERROR(updateRates(resources, now));
    if (needsCollectiveCore(op)) {
      // Its collective core goes to the longest-waiting stream of the chip.
      const auto chip = static_cast<std::size_t>(topology_.physicalChipOf(op.issuer));
      std::deque<OpId>& waiting = waitingForCore_[chip];
      if (waiting.empty()) {
        --busyCores_[chip];
      } else {
        const OpId next = waiting.front();
        waiting.pop_front();
        return stream(next, now);
      }
    }
    return {};
  }

  void end(OpId id, std::int64_t now) {
    timing_.makespan = std::max(timing_.makespan, now);
    timing_.opEnd[id] = now;
    for (std::uint32_t k = successorStart_[id]; k < successorStart_[id + 1]; ++k) {
      waited(successors_[k], now);
    }
  }

  /// `id`'s last byte has left at `now`: the operations queued behind it may start.
  void releaseQueued(OpId id, std::int64_t now) {
    for (std::uint32_t k = behindStart_[id]; k < behindStart_[id + 1]; ++k) {
      waited(behind_[k], now);
    }
  }

  /// One of the things `next` waits for happened at `now`; it starts when the last has.
  void waited(OpId next, std::int64_t now) {
    OpState& s = states_[next];
    s.ready = std::max(s.ready, now);
    if (--s.waiting == 0) {
      schedule(s.ready + plan_.ops()[next].startDelay, EventKind::kStart, next, 0);
    }
  }

  /// Records that `op` is at position `at` in the users of `resource`.
  void setSlot(OpId op, ResourceId resource, std::uint32_t at) {
    const PlanOp& o = plan_.ops()[op];
    const std::span<const ResourceId> resources = plan_.resourcesOf(o);
    for (std::size_t k = 0; k < resources.size(); ++k) {
      if (resources[k] == resource) {
        slot_[o.firstResource + k] = at;
        return;
      }
    }
  }

  /// New rates for the operations using any of `changed`, from `now`.
  Status updateRates(std::span<const ResourceId> changed, std::int64_t now) {
    ++stamp_;
    for (const ResourceId r : changed) {
      for (const OpId id : active_[r]) {
        OpState& s = states_[id];
        if (s.stamp == stamp_) {
          continue;
        }
        s.stamp = stamp_;
        const PlanOp& op = plan_.ops()[id];
        double rate = op.rateLimit > 0 ? op.rateLimit : std::numeric_limits<double>::infinity();
        const std::span<const ResourceId> resources = plan_.resourcesOf(op);
        const std::span<const double> weights = plan_.weightsOf(op);
        for (std::size_t k = 0; k < resources.size(); ++k) {
          const ResourceId u = resources[k];
          rate = std::min(
              rate, topology_.bandwidth(u) / (static_cast<double>(active_[u].size()) * weights[k]));
        }
        if (rate == s.rate) {
          continue;
        }
        s.remaining = std::max(0.0, s.remaining - s.rate * static_cast<double>(now - s.since));
        s.since = now;
        s.rate = rate;
        const double left = std::ceil(s.remaining / rate);
        if (!(left < static_cast<double>(kMaxSimulatedTime.count()))) {
          return outOfRange("a collective's time passed the simulator's limit (2^62 ps)");
        }
        schedule(now + static_cast<std::int64_t>(left), EventKind::kTransmitted, id, ++s.version);
      }
    }
    return {};
  }

  const Plan& plan_;
  const Topology& topology_;
  std::vector<OpState> states_;
  std::vector<std::vector<OpId>> active_;  ///< per resource, the operations moving bytes on it
  std::vector<std::int64_t> busyCores_;    ///< per chip, collective cores holding a stream
  std::vector<std::deque<OpId>> waitingForCore_;  ///< per chip, streams waiting for one
  std::vector<std::uint32_t> slot_;               ///< per plan resource entry: its place in active_
  std::vector<std::uint32_t> successorStart_;
  std::vector<OpId> successors_;
  std::vector<std::uint32_t> behindStart_;  ///< into behind_, per operation
  std::vector<OpId> behind_;                ///< the operations queued behind each
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::uint64_t sequence_ = 0;
  std::uint32_t stamp_ = 0;
  PlanTiming timing_;
};

}  // namespace

Result<PlanTiming> simulate(const Plan& plan) { return Simulator(plan).run(); }

}  // namespace trn::fabric
