#include "trn/profile/critical_path.h"

#include <algorithm>
#include <cstddef>
#include <tuple>
#include <utility>

namespace trn::profile {
namespace {

/// A point on the walk back: an instruction seen at its completion, at the end of its busy time
/// or at its start, or a transfer seen when its last byte landed.
struct Node {
  enum Kind : std::uint8_t { kComplete, kEnd, kStart, kTransfer, kNone } kind = kNone;
  std::int64_t index = -1;
};

class Walker {
 public:
  Walker(const core::RunStats& stats, std::span<const Dependency> deps)
      : stats_(stats), transferOf_(transferOfRecord(stats)) {
    const std::size_t n = stats.records.size();
    previousOnEngine_.assign(n, -1);
    std::array<std::int64_t, isa::kNumEngines> last{};
    last.fill(-1);
    for (std::size_t i = 0; i < n; ++i) {
      auto& slot = last[static_cast<std::size_t>(stats.records[i].engine)];
      previousOnEngine_[i] = slot;
      slot = static_cast<std::int64_t>(i);
    }
    releaser_.assign(n, -1);
    for (std::size_t d = 0; d < deps.size(); ++d) {
      std::int64_t& best = releaser_[static_cast<std::size_t>(deps[d].to)];
      if (best < 0 || deps[d].signalled > deps[static_cast<std::size_t>(best)].signalled) {
        best = static_cast<std::int64_t>(d);
      }
    }
    deps_ = deps;
    previousOnQueue_.assign(stats.transfers.size(), -1);
    std::vector<std::pair<std::int32_t, std::size_t>> byQueue;
    for (std::size_t t = 0; t < stats.transfers.size(); ++t) {
      byQueue.emplace_back(stats.transfers[t].queue, t);
    }
    std::stable_sort(byQueue.begin(), byQueue.end(), [&](const auto& a, const auto& b) {
      return std::tie(a.first, stats.transfers[a.second].start) <
             std::tie(b.first, stats.transfers[b.second].start);
    });
    for (std::size_t k = 1; k < byQueue.size(); ++k) {
      if (byQueue[k].first == byQueue[k - 1].first) {
        previousOnQueue_[byQueue[k].second] = static_cast<std::int64_t>(byQueue[k - 1].second);
      }
    }
  }

  CriticalPath walk() {
    Node node = lastEvent();
    // Every step moves to an earlier event, so the walk visits each node at most once.
    const std::size_t limit = 4 * (stats_.records.size() + stats_.transfers.size()) + 4;
    for (std::size_t steps = 0; node.kind != Node::kNone && steps < limit; ++steps) {
      node = step(node);
    }
    add(Picoseconds(0), PathCause::kDispatch, isa::Engine::kPe, -1, -1);
    std::reverse(path_.segments.begin(), path_.segments.end());
    return std::move(path_);
  }

 private:
  Node lastEvent() {
    Node node;
    for (std::size_t i = 0; i < stats_.records.size(); ++i) {
      if (node.kind == Node::kNone || stats_.records[i].complete > path_.length) {
        node = {Node::kComplete, static_cast<std::int64_t>(i)};
        path_.length = stats_.records[i].complete;
      }
    }
    for (std::size_t t = 0; t < stats_.transfers.size(); ++t) {
      if (stats_.transfers[t].end >= path_.length) {
        node = {Node::kTransfer, static_cast<std::int64_t>(t)};
        path_.length = stats_.transfers[t].end;
      }
    }
    cursor_ = path_.length;
    return node;
  }

  /// Adds the stretch [from, cursor] (empty ones are dropped) and moves the cursor to `from`.
  void add(Picoseconds from, PathCause cause, isa::Engine engine, std::int64_t record,
           std::int64_t transfer) {
    from = std::min(from, cursor_);
    if (from < cursor_) {
      path_.segments.push_back({from, cursor_, cause, engine, record, transfer});
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
      }
      cursor_ = from;
    }
  }

  Node step(Node node) {
    const auto i = static_cast<std::size_t>(node.index);
    switch (node.kind) {
      case Node::kComplete: {
        const core::InstructionRecord& r = stats_.records[i];
        if (transferOf_[i] >= 0) {
          // A DMA trigger completes with its transfer: the path goes through the transfer.
          return {Node::kTransfer, transferOf_[i]};
        }
        add(r.end, PathCause::kCompletion, r.engine, node.index, -1);
        return {Node::kEnd, node.index};
      }
      case Node::kEnd: {
        const core::InstructionRecord& r = stats_.records[i];
        add(r.start, PathCause::kCompute, r.engine, node.index, -1);
        return {Node::kStart, node.index};
      }
      case Node::kStart:
        return gate(i);
      case Node::kTransfer: {
        const core::TransferRecord& t = stats_.transfers[i];
        const core::InstructionRecord& issuer = stats_.records[t.instruction];
        add(t.start, PathCause::kDmaData, issuer.engine, t.instruction, node.index);
        ++path_.transfers;
        const std::int64_t ahead = previousOnQueue_[i];
        if (ahead >= 0 && stats_.transfers[static_cast<std::size_t>(ahead)].end == t.start &&
            t.start > t.issued) {
          return {Node::kTransfer, ahead};  // it waited for the transfer ahead on its queue
        }
        add(t.issued, PathCause::kDmaIssue, issuer.engine, t.instruction, node.index);
        return {Node::kStart, static_cast<std::int64_t>(t.instruction)};
      }
      case Node::kNone:
        break;
    }
    return {};
  }

  /// What `record` started after: the update that released it, or its engine's previous
  /// instruction.
  Node gate(std::size_t record) {
    const core::InstructionRecord& r = stats_.records[record];
    const std::int64_t d = releaser_[record];
    if (d >= 0) {
      const Dependency& dep = deps_[static_cast<std::size_t>(d)];
      if (dep.blocked && r.start > r.ready) {
        add(dep.signalled, PathCause::kSemaphore, r.engine, static_cast<std::int64_t>(record), -1);
        ++path_.handoffs;
        return dep.fromTransfer >= 0 ? Node{Node::kTransfer, dep.fromTransfer}
                                     : Node{Node::kComplete, dep.fromRecord};
      }
    }
    const std::int64_t previous = previousOnEngine_[record];
    if (previous < 0) {
      return {};
    }
    add(stats_.records[static_cast<std::size_t>(previous)].end, PathCause::kDispatch, r.engine,
        static_cast<std::int64_t>(record), -1);
    return {Node::kEnd, previous};
  }

  const core::RunStats& stats_;
  std::vector<std::int64_t> transferOf_;  ///< per record, its transfer (transferOfRecord)
  std::span<const Dependency> deps_;
  std::vector<std::int64_t> previousOnEngine_;
  std::vector<std::int64_t> previousOnQueue_;
  std::vector<std::int64_t> releaser_;  ///< per record: its latest releasing dependency
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
  return Walker(stats, deps).walk();
}

Result<CriticalPath> findCriticalPath(const isa::Program& program, const core::RunStats& stats) {
  TRN_ASSIGN_OR_RETURN(const std::vector<Dependency> deps, findDependencies(program, stats));
  return findCriticalPath(stats, deps);
}

}  // namespace trn::profile
