#include "trn/profile/collective_path.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_map>

namespace trn::profile {
namespace {

using fabric::OpId;
using fabric::PlanOp;
using fabric::ResourceId;

/// When an operation's last byte left: its end less the route's latency.
std::int64_t dataEnd(const PlanOp& op, const fabric::PlanTiming& timing, OpId id) {
  return std::max(timing.opStart[id], timing.opEnd[id] - op.endDelay);
}

/// For each path operation that streamed bytes, the resource with the least bandwidth per
/// operation streaming through it, averaged over the operation's streaming time.
void findBottlenecks(const fabric::Plan& plan, const fabric::PlanTiming& timing,
                     CollectivePath& path) {
  const std::vector<PlanOp>& ops = plan.ops();
  // Per resource a path operation uses: the overlap time summed over every operation using it.
  std::unordered_map<ResourceId, std::vector<std::pair<OpId, double>>> users;
  for (const OpId id : path.ops) {
    for (const ResourceId r : plan.resourcesOf(ops[id])) {
      users[r].emplace_back(id, 0.0);
    }
  }
  for (OpId o = 0; o < ops.size(); ++o) {
    if (ops[o].bytes <= 0) {
      continue;
    }
    const std::int64_t s = timing.opStart[o];
    const std::int64_t e = dataEnd(ops[o], timing, o);
    for (const ResourceId r : plan.resourcesOf(ops[o])) {
      const auto found = users.find(r);
      if (found == users.end()) {
        continue;
      }
      for (auto& [p, overlap] : found->second) {
        const std::int64_t lo = std::max(s, timing.opStart[p]);
        const std::int64_t hi = std::min(e, dataEnd(ops[p], timing, p));
        overlap += static_cast<double>(std::max<std::int64_t>(0, hi - lo));
      }
    }
  }
  const fabric::Topology& topology = plan.topology();
  for (CollectiveSegment& segment : path.segments) {
    if (segment.cause != CollectiveCause::kData) {
      continue;
    }
    double best = std::numeric_limits<double>::infinity();
    const auto span = static_cast<double>(segment.end - segment.start);
    for (const ResourceId r : plan.resourcesOf(ops[segment.op])) {
      for (const auto& [p, overlap] : users.at(r)) {
        if (p != segment.op) {
          continue;
        }
        const double sharing = std::max(1.0, overlap / span);
        const double perOperation = topology.bandwidth(r) / sharing;
        if (perOperation < best) {
          best = perOperation;
          segment.bottleneck = r;
        }
      }
    }
  }
}

}  // namespace

std::string_view collectiveCauseName(CollectiveCause cause) {
  switch (cause) {
    case CollectiveCause::kData:
      return "data";
    case CollectiveCause::kLatency:
      return "hop latency";
    case CollectiveCause::kOverhead:
      return "message overhead";
    case CollectiveCause::kWaiting:
      return "waiting";
  }
  return "?";
}

Result<CollectivePath> findCollectivePath(const fabric::Plan& plan,
                                          const fabric::PlanTiming& timing) {
  const std::vector<PlanOp>& ops = plan.ops();
  if (timing.opStart.size() != ops.size() || timing.opEnd.size() != ops.size()) {
    return invalidArgument(fmt::format("the timing has {} operations but the plan {}",
                                       timing.opStart.size(), ops.size()));
  }
  CollectivePath path;
  if (ops.empty()) {
    return path;
  }
  for (OpId id = 0; id < ops.size(); ++id) {
    if (timing.opStart[id] < ops[id].startDelay || timing.opEnd[id] < timing.opStart[id]) {
      return invalidArgument(fmt::format(
          "operation {} starts at {} ps and ends at {} ps: not a timing of this plan", id,
          timing.opStart[id], timing.opEnd[id]));
    }
  }
  OpId last = 0;
  for (OpId id = 1; id < ops.size(); ++id) {
    if (timing.opEnd[id] > timing.opEnd[last]) {
      last = id;
    }
  }
  path.length = timing.opEnd[last];
  std::vector<CollectiveSegment> reversed;
  auto segment = [&](std::int64_t start, std::int64_t end, CollectiveCause cause, OpId op) {
    if (end > start) {
      reversed.push_back({start, end, cause, op, 0});
    }
  };
  std::int64_t at = path.length;
  OpId id = last;
  while (true) {
    const PlanOp& op = ops[id];
    path.ops.push_back(id);
    const std::int64_t start = timing.opStart[id];
    const std::int64_t streamed = dataEnd(op, timing, id);
    segment(streamed, at, CollectiveCause::kLatency, id);
    segment(start, streamed, CollectiveCause::kData, id);
    const std::int64_t ready = start - op.startDelay;
    segment(ready, start, CollectiveCause::kOverhead, id);
    std::int64_t links = 0;
    for (const ResourceId r : plan.resourcesOf(op)) {
      links += plan.topology().isLink(r) ? 1 : 0;
    }
    path.messages += links > 0 ? 1 : 0;
    path.hops += links;
    path.reductions += links == 0 && op.bytes > 0 ? 1 : 0;
    // The predecessor that ended last is the one the operation waited for.
    std::optional<OpId> waitedFor;
    for (const OpId p : plan.predecessorsOf(op)) {
      if (!waitedFor || timing.opEnd[p] > timing.opEnd[*waitedFor]) {
        waitedFor = p;
      }
    }
    const std::int64_t before = waitedFor ? std::min(ready, timing.opEnd[*waitedFor]) : 0;
    segment(before, ready, CollectiveCause::kWaiting, id);
    at = before;
    if (!waitedFor) {
      break;
    }
    id = *waitedFor;
  }
  path.segments.assign(reversed.rbegin(), reversed.rend());
  std::reverse(path.ops.begin(), path.ops.end());
  for (const CollectiveSegment& s : path.segments) {
    const std::int64_t t = s.end - s.start;
    switch (s.cause) {
      case CollectiveCause::kData:
        path.data += t;
        break;
      case CollectiveCause::kLatency:
        path.latency += t;
        break;
      case CollectiveCause::kOverhead:
        path.overhead += t;
        break;
      case CollectiveCause::kWaiting:
        path.waiting += t;
        break;
    }
  }
  findBottlenecks(plan, timing, path);
  return path;
}

}  // namespace trn::profile
