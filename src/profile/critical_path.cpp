#include "trn/profile/critical_path.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <tuple>
#include <utility>

#include "trn/isa/instrs/control.h"

namespace trn::profile {
namespace {

/// A point on the walk back: an instruction of a core seen at its completion, at the end of its
/// busy time or at its start, or a transfer seen when its last byte landed.
struct Node {
  enum Kind : std::uint8_t { kComplete, kEnd, kStart, kTransfer, kNone } kind = kNone;
  std::int64_t index = -1;
  std::int32_t core = 0;
};

/// One core's records with what the walk looks up in them.
struct CoreRecords {
  const core::RunStats* stats = nullptr;
  std::span<const Dependency> deps;
  std::vector<std::int64_t> transferOf;  ///< per record, its transfer (transferOfRecord)
  std::vector<std::int64_t> previousOnEngine;
  std::vector<std::int64_t> previousOnQueue;
  std::vector<std::int64_t> releaser;  ///< per record: its latest releasing dependency
  std::vector<std::int64_t> meeting;   ///< per record: its barrier or sendrecv, -1 for none

  CoreRecords(const core::RunStats& s, std::span<const Dependency> d)
      : stats(&s), deps(d), transferOf(transferOfRecord(s)) {
    const std::size_t n = s.records.size();
    previousOnEngine.assign(n, -1);
    std::array<std::int64_t, isa::kNumEngines> last{};
    last.fill(-1);
    for (std::size_t i = 0; i < n; ++i) {
      auto& slot = last[static_cast<std::size_t>(s.records[i].engine)];
      previousOnEngine[i] = slot;
      slot = static_cast<std::int64_t>(i);
    }
    releaser.assign(n, -1);
    for (std::size_t k = 0; k < d.size(); ++k) {
      std::int64_t& best = releaser[static_cast<std::size_t>(d[k].to)];
      if (best < 0 || d[k].signalled > d[static_cast<std::size_t>(best)].signalled) {
        best = static_cast<std::int64_t>(k);
      }
    }
    meeting.assign(n, -1);
    previousOnQueue.assign(s.transfers.size(), -1);
    std::vector<std::pair<std::int32_t, std::size_t>> byQueue;
    for (std::size_t t = 0; t < s.transfers.size(); ++t) {
      byQueue.emplace_back(s.transfers[t].queue, t);
    }
    std::stable_sort(byQueue.begin(), byQueue.end(), [&](const auto& a, const auto& b) {
      return std::tie(a.first, s.transfers[a.second].start) <
             std::tie(b.first, s.transfers[b.second].start);
    });
    for (std::size_t k = 1; k < byQueue.size(); ++k) {
      if (byQueue[k].first == byQueue[k - 1].first) {
        previousOnQueue[byQueue[k].second] = static_cast<std::int64_t>(byQueue[k - 1].second);
      }
    }
  }

  /// When the engine got to `record` and its semaphore waits held (their updates were applied;
  /// the engine sees them its semaphore overhead later, which the records do not separate).
  [[nodiscard]] Picoseconds arrival(std::size_t record) const {
    const core::InstructionRecord& r = stats->records[record];
    Picoseconds at = r.ready;
    const std::int64_t d = releaser[record];
    if (d >= 0 && deps[static_cast<std::size_t>(d)].blocked) {
      at = std::max(at, deps[static_cast<std::size_t>(d)].signalled);
    }
    return at;
  }
};

/// One barrier or sendrecv: the k-th of its kind on each core.
struct Meeting {
  struct Party {
    std::int32_t core = 0;
    std::int64_t record = 0;
    Picoseconds arrival;  ///< the engine got there with its waits holding (see below)
    Picoseconds start;
  };
  bool exchange = false;      ///< a sendrecv (its crossing is on the last arrival's path too)
  std::vector<Party> parties;
  std::size_t last = 0;       ///< the party that arrived last
};

class Walker {
 public:
  explicit Walker(std::vector<CoreRecords> cores) : cores_(std::move(cores)) {}

  /// Pairs the k-th barrier (and the k-th sendrecv) of each core, in the order each core's
  /// engines reached them.
  void meet(std::span<const isa::Program* const> programs) {
    for (const bool exchange : {false, true}) {
      const std::string_view mnemonic =
          exchange ? isa::SendRecv::kInfo.mnemonic : isa::CoreBarrier::kInfo.mnemonic;
      std::vector<Meeting> meetings;
      for (std::size_t c = 0; c < cores_.size(); ++c) {
        const core::RunStats& s = *cores_[c].stats;
        std::vector<std::size_t> mine;
        for (std::size_t i = 0; i < s.records.size(); ++i) {
          const core::InstructionRecord& r = s.records[i];
          if (programs[c]->stream(r.engine).info(r.index).mnemonic == mnemonic) {
            mine.push_back(i);
          }
        }
        std::stable_sort(mine.begin(), mine.end(), [&](std::size_t a, std::size_t b) {
          return cores_[c].arrival(a) < cores_[c].arrival(b);
        });
        if (meetings.size() < mine.size()) {
          meetings.resize(mine.size());
        }
        for (std::size_t k = 0; k < mine.size(); ++k) {
          meetings[k].exchange = exchange;
          meetings[k].parties.push_back({static_cast<std::int32_t>(c),
                                         static_cast<std::int64_t>(mine[k]),
                                         cores_[c].arrival(mine[k]), s.records[mine[k]].start});
        }
      }
      for (Meeting& m : meetings) {
        if (m.parties.size() < 2) {
          continue;  // a core alone passes at once
        }
        // The last core to arrive at a barrier passes at once, the others a remote semaphore
        // write later: it is the one that started first, and its start is its arrival. A
        // sendrecv's parties all finish after the crossing: the last is the latest arrival.
        for (std::size_t p = 1; p < m.parties.size(); ++p) {
          const bool later = exchange ? m.parties[p].arrival > m.parties[m.last].arrival
                                      : m.parties[p].start < m.parties[m.last].start;
          if (later) {
            m.last = p;
          }
        }
        if (!exchange) {
          m.parties[m.last].arrival = m.parties[m.last].start;
        }
        for (const Meeting::Party& p : m.parties) {
          cores_[static_cast<std::size_t>(p.core)].meeting[static_cast<std::size_t>(p.record)] =
              static_cast<std::int64_t>(meetings_.size());
        }
        meetings_.push_back(std::move(m));
      }
    }
  }

  CriticalPath walk() {
    Node node = lastEvent();
    // Every step moves to an earlier event, so the walk visits each node at most once.
    std::size_t limit = 4;
    for (const CoreRecords& c : cores_) {
      limit += 4 * (c.stats->records.size() + c.stats->transfers.size());
    }
    for (std::size_t steps = 0; node.kind != Node::kNone && steps < limit; ++steps) {
      node = step(node);
    }
    add(Picoseconds(0), PathCause::kDispatch, isa::Engine::kPe, -1, -1, node.core);
    std::reverse(path_.segments.begin(), path_.segments.end());
    return std::move(path_);
  }

 private:
  Node lastEvent() {
    Node node;
    for (std::size_t c = 0; c < cores_.size(); ++c) {
      const core::RunStats& s = *cores_[c].stats;
      const auto core = static_cast<std::int32_t>(c);
      for (std::size_t i = 0; i < s.records.size(); ++i) {
        if (node.kind == Node::kNone || s.records[i].complete > path_.length) {
          node = {Node::kComplete, static_cast<std::int64_t>(i), core};
          path_.length = s.records[i].complete;
        }
      }
      for (std::size_t t = 0; t < s.transfers.size(); ++t) {
        if (s.transfers[t].end > path_.length ||
            (s.transfers[t].end == path_.length && node.core == core)) {
          node = {Node::kTransfer, static_cast<std::int64_t>(t), core};
          path_.length = s.transfers[t].end;
        }
      }
    }
    cursor_ = path_.length;
    return node;
  }

  /// Adds the stretch [from, cursor] (empty ones are dropped) and moves the cursor to `from`.
  /// Returns whether it added one.
  bool add(Picoseconds from, PathCause cause, isa::Engine engine, std::int64_t record,
           std::int64_t transfer, std::int32_t core) {
    from = std::min(from, cursor_);
    if (from >= cursor_) {
      return false;
    }
    path_.segments.push_back({from, cursor_, cause, engine, record, transfer, core});
    const Picoseconds length = cursor_ - from;
    switch (cause) {
      case PathCause::kCompute:
        path_.compute[static_cast<std::size_t>(engine)] += length;
        break;
      case PathCause::kCompletion:
        path_.completion += length;
        break;
      case PathCause::kSemaphore:
        path_.semaphore += length;
        break;
      case PathCause::kDmaIssue:
        path_.dmaIssue += length;
        break;
      case PathCause::kDmaData:
        path_.dmaData += length;
        break;
      case PathCause::kDispatch:
        path_.dispatch += length;
        break;
      case PathCause::kCrossCore:
        path_.crossCore += length;
        break;
    }
    cursor_ = from;
    return true;
  }

  Node step(Node node) {
    const CoreRecords& c = cores_[static_cast<std::size_t>(node.core)];
    const core::RunStats& s = *c.stats;
    const auto i = static_cast<std::size_t>(node.index);
    switch (node.kind) {
      case Node::kComplete: {
        const core::InstructionRecord& r = s.records[i];
        if (c.transferOf[i] >= 0) {
          // A DMA trigger completes with its transfer: the path goes through the transfer.
          return {Node::kTransfer, c.transferOf[i], node.core};
        }
        add(r.end, PathCause::kCompletion, r.engine, node.index, -1, node.core);
        return {Node::kEnd, node.index, node.core};
      }
      case Node::kEnd: {
        const core::InstructionRecord& r = s.records[i];
        add(r.start, PathCause::kCompute, r.engine, node.index, -1, node.core);
        return {Node::kStart, node.index, node.core};
      }
      case Node::kStart:
        return gate(node.core, i);
      case Node::kTransfer: {
        const core::TransferRecord& t = s.transfers[i];
        const core::InstructionRecord& issuer = s.records[t.instruction];
        add(t.start, PathCause::kDmaData, issuer.engine, t.instruction, node.index, node.core);
        ++path_.transfers;
        const std::int64_t ahead = c.previousOnQueue[i];
        if (ahead >= 0 && s.transfers[static_cast<std::size_t>(ahead)].end == t.start &&
            t.start > t.issued) {
          return {Node::kTransfer, ahead, node.core};  // it waited for the transfer ahead
        }
        add(t.issued, PathCause::kDmaIssue, issuer.engine, t.instruction, node.index, node.core);
        return {Node::kStart, static_cast<std::int64_t>(t.instruction), node.core};
      }
      case Node::kNone:
        break;
    }
    return {};
  }

  /// What `record` of `core` started after: the last core to arrive at its barrier or sendrecv,
  /// the update that released it, or its engine's previous instruction.
  Node gate(std::int32_t core, std::size_t record) {
    const CoreRecords& c = cores_[static_cast<std::size_t>(core)];
    const core::InstructionRecord& r = c.stats->records[record];
    const auto index = static_cast<std::int64_t>(record);
    if (const std::int64_t m = c.meeting[record]; m >= 0) {
      const Meeting& meeting = meetings_[static_cast<std::size_t>(m)];
      const Meeting::Party& last = meeting.parties[meeting.last];
      const bool isLast = last.core == core && last.record == index;
      // A core waits at a barrier only when another arrives later: one that passed as it
      // arrived (a core alone, LNC=1) goes on as for any instruction.
      const bool waited = r.start > c.arrival(record);
      if (waited && (!isLast || meeting.exchange)) {
        path_.crossings +=
            add(last.arrival, PathCause::kCrossCore, r.engine, index, -1, core) ? 1 : 0;
      }
      if (waited && !isLast) {
        return {Node::kStart, last.record, last.core};
      }
    }
    const std::int64_t d = c.releaser[record];
    if (d >= 0) {
      const Dependency& dep = c.deps[static_cast<std::size_t>(d)];
      if (dep.blocked && r.start > r.ready) {
        add(dep.signalled, PathCause::kSemaphore, r.engine, index, -1, core);
        ++path_.handoffs;
        return dep.fromTransfer >= 0 ? Node{Node::kTransfer, dep.fromTransfer, core}
                                     : Node{Node::kComplete, dep.fromRecord, core};
      }
    }
    const std::int64_t previous = c.previousOnEngine[record];
    if (previous < 0) {
      return {Node::kNone, -1, core};
    }
    add(c.stats->records[static_cast<std::size_t>(previous)].end, PathCause::kDispatch, r.engine,
        index, -1, core);
    return {Node::kEnd, previous, core};
  }

  std::vector<CoreRecords> cores_;
  std::vector<Meeting> meetings_;
  CriticalPath path_;
  Picoseconds cursor_;
};

}  // namespace

std::string_view pathCauseName(PathCause cause) {
  switch (cause) {
    case PathCause::kCompute:
      return "compute";
    case PathCause::kCompletion:
      return "completion";
    case PathCause::kSemaphore:
      return "semaphore";
    case PathCause::kDmaIssue:
      return "dma issue";
    case PathCause::kDmaData:
      return "dma data";
    case PathCause::kDispatch:
      return "dispatch";
    case PathCause::kCrossCore:
      return "cross-core";
  }
  return "?";
}

Picoseconds CriticalPath::totalCompute() const {
  Picoseconds sum;
  for (const Picoseconds t : compute) {
    sum += t;
  }
  return sum;
}

CriticalPath findCriticalPath(const core::RunStats& stats, std::span<const Dependency> deps) {
  if (stats.records.empty()) {
    return {};
  }
  std::vector<CoreRecords> cores;
  cores.emplace_back(stats, deps);
  return Walker(std::move(cores)).walk();
}

Result<CriticalPath> findCriticalPath(const isa::Program& program, const core::RunStats& stats) {
  TRN_ASSIGN_OR_RETURN(const std::vector<Dependency> deps, findDependencies(program, stats));
  return findCriticalPath(stats, deps);
}

Result<CriticalPath> findCriticalPath(std::span<const isa::Program* const> programs,
                                      std::span<const core::RunStats* const> cores) {
  if (programs.size() != cores.size()) {
    return invalidArgument(fmt::format("the critical path of {} cores was given {} programs",
                                       cores.size(), programs.size()));
  }
  std::vector<std::vector<Dependency>> deps(cores.size());
  bool recorded = false;
  for (std::size_t c = 0; c < cores.size(); ++c) {
    if (programs[c] == nullptr || cores[c] == nullptr) {
      return invalidArgument(
          fmt::format("core {} of the critical path has no program or statistics", c));
    }
    Result<std::vector<Dependency>> found = findDependencies(*programs[c], *cores[c]);
    if (!found.ok()) {
      return found.status().withContext(fmt::format("core {}", c));
    }
    deps[c] = std::move(found).value();
    recorded = recorded || !cores[c]->records.empty();
  }
  if (!recorded) {
    return CriticalPath{};
  }
  std::vector<CoreRecords> records;
  for (std::size_t c = 0; c < cores.size(); ++c) {
    records.emplace_back(*cores[c], deps[c]);
  }
  Walker walker(std::move(records));
  walker.meet(programs);
  return walker.walk();
}

}  // namespace trn::profile
