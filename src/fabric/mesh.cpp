// The mesh: every rank sends straight to every other in one step; the fabric routes the messages
// through intermediate chips and they share the links they meet. An all-to-all-v sends each pair's
// own count (collective.h VariableCounts), nothing where it is zero.
#include "ring_steps.h"

namespace trn::fabric::detail {
namespace {

enum class Exchange {
  kReduce,    ///< rank i sends chunk j to rank j's staging; rank j reduces its chunk, in rank order
  kGather,    ///< rank i sends chunk i to the same place in every other rank's buffer
  kAllToAll,  ///< rank i sends chunk j to chunk i of rank j's receive buffer (its own included)
};

/// One step in which every rank sends to every other. ready[c] becomes the reduction (or the last
/// receipt) of chip c.
void everyToEvery(Plan& plan, std::span<const std::int64_t> group, std::int64_t count,
                  Exchange exchange, Ready& ready) {
  const auto n = static_cast<std::int64_t>(group.size());
  std::vector<std::vector<OpId>> received(group.size());
  for (std::size_t i = 0; i < group.size(); ++i) {
    const std::vector<OpId> after = present({ready[static_cast<std::size_t>(group[i])]});
    for (std::size_t j = 0; j < group.size(); ++j) {
      const Segment mine = chunkOf(static_cast<std::int64_t>(i), n, count);
      const Segment theirs = chunkOf(static_cast<std::int64_t>(j), n, count);
      if (exchange == Exchange::kAllToAll) {
        Segment into = mine;
        into.region = Region::kReceive;
        received[j].push_back(plan.copy(group[i], group[j], theirs, into, after));
      } else if (i != j) {
        received[j].push_back(exchange == Exchange::kReduce
                                  ? plan.copy(group[i], group[j], theirs, stagingFor(theirs), after)
                                  : plan.copy(group[i], group[j], mine, mine, after));
      }
    }
  }
  for (std::size_t j = 0; j < group.size(); ++j) {
    OpId& r = ready[static_cast<std::size_t>(group[j])];
    std::vector<OpId> after = received[j];
    if (r != kNone) {
      after.push_back(r);
    }
    r = exchange == Exchange::kReduce
            ? plan.reduceInto(group[j], chunkOf(static_cast<std::int64_t>(j), n, count),
                              received[j], present({r}))
            : plan.join(after);
  }
}

}  // namespace

void buildMeshPlan(Plan& plan, const CollectiveRequest& request) {
  const std::span<const std::int64_t> group = request.group;
  const std::int64_t count = request.bytes / request.elementBytes;
  Ready ready(static_cast<std::size_t>(plan.topology().chips()), kNone);
  const Segment whole = bufferRange(0, count);
  switch (request.op) {
    case CollectiveOp::kAllReduce:
      everyToEvery(plan, group, count, Exchange::kReduce, ready);
      everyToEvery(plan, group, count, Exchange::kGather, ready);
      break;
    case CollectiveOp::kReduceScatter:
      everyToEvery(plan, group, count, Exchange::kReduce, ready);
      break;
    case CollectiveOp::kAllGather:
      everyToEvery(plan, group, count, Exchange::kGather, ready);
      break;
    case CollectiveOp::kAllToAll:
      everyToEvery(plan, group, count, Exchange::kAllToAll, ready);
      break;
    case CollectiveOp::kBroadcast: {
      const std::int64_t root = group[static_cast<std::size_t>(request.root)];
      for (const std::int64_t c : group) {
        if (c != root) {
          plan.copy(root, c, whole, whole, {});
        }
      }
      break;
    }
    case CollectiveOp::kAllToAllV: {
      // One message per pair with something to send, every one at once (to itself: a copy).
      const auto n = static_cast<std::int64_t>(group.size());
      const VariableCounts& v = request.variable;
      for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t j = 0; j < n; ++j) {
          const auto k = static_cast<std::size_t>(i * n + j);
          if (v.counts[k] > 0) {
            Segment into = bufferRange(v.receiveOffsets[k], v.counts[k]);
            into.region = Region::kReceive;
            plan.copy(group[static_cast<std::size_t>(i)], group[static_cast<std::size_t>(j)],
                      bufferRange(v.sendOffsets[k], v.counts[k]), into, {});
          }
        }
      }
      break;
    }
    case CollectiveOp::kPermute: {
      // Rank i sends its buffer to rank i + 1's receive buffer.
      Segment into = whole;
      into.region = Region::kReceive;
      for (std::size_t i = 0; i < group.size(); ++i) {
        plan.copy(group[i], group[(i + 1) % group.size()], whole, into, {});
      }
      break;
    }
  }
}

}  // namespace trn::fabric::detail
