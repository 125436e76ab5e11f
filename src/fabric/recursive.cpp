// Recursive halving and doubling over 2^k ranks (rank i pairs with i XOR d): a reduce-scatter
// that halves the data each step with partners N/2, N/4, ... 1 apart, an all-gather that doubles
// it with partners 1, 2, ... N/2 apart, and a binomial-tree broadcast. On a 4 x 4 torus the rank
// bits are the hypercube axes of R2: XOR 1 and 2 move along x, 4 and 8 along y.
#include <bit>

#include "ring_steps.h"

namespace trn::fabric::detail {
namespace {

/// Halving: at each distance d (n/2, n/4, ... 1) rank i keeps the half of what it holds that
/// contains its chunk, sends the other half to its partner i XOR d (which keeps that half) and
/// reduces the partner's half into its own. held[i] is the range rank i holds.
void halving(Plan& plan, std::span<const std::int64_t> group, std::vector<Segment>& held,
             Ready& ready) {
  const std::size_t n = group.size();
  std::vector<OpId> sent(n);
  std::vector<Segment> kept(n);
  for (std::size_t d = n / 2; d >= 1; d /= 2) {
    for (std::size_t i = 0; i < n; ++i) {
      const Segment& h = held[i];
      const Segment low = bufferRange(h.begin, h.length / 2);
      const Segment high = bufferRange(h.begin + h.length / 2, h.length - h.length / 2);
      kept[i] = (i & d) == 0 ? low : high;
      const Segment& given = (i & d) == 0 ? high : low;
      sent[i] = plan.copy(group[i], group[i ^ d], given, stagingFor(given),
                          present({ready[static_cast<std::size_t>(group[i])]}));
    }
    for (std::size_t i = 0; i < n; ++i) {
      OpId& r = ready[static_cast<std::size_t>(group[i])];
      r = plan.reduceInto(group[i], kept[i], std::span(&sent[i ^ d], 1), present({r, sent[i]}));
      held[i] = kept[i];
    }
  }
}

/// Doubling: at each distance d (1, 2, ... n/2) rank i sends what it holds to the same place in
/// its partner's buffer and then holds both.
void doubling(Plan& plan, std::span<const std::int64_t> group, std::vector<Segment>& held,
              Ready& ready) {
  const std::size_t n = group.size();
  std::vector<OpId> sent(n);
  for (std::size_t d = 1; d < n; d *= 2) {
    for (std::size_t i = 0; i < n; ++i) {
      sent[i] = plan.copy(group[i], group[i ^ d], held[i], held[i],
                          present({ready[static_cast<std::size_t>(group[i])]}));
    }
    for (std::size_t i = 0; i < n; ++i) {
      ready[static_cast<std::size_t>(group[i])] = plan.join(present({sent[i ^ d], sent[i]}));
    }
    for (std::size_t i = 0; i < n; i += 2 * d) {
      // Ranks i .. i + 2d - 1 now hold the ranges of ranks i and i + d, which are adjacent.
      const Segment both = bufferRange(held[i].begin, held[i].length + held[i + d].length);
      for (std::size_t k = i; k < i + 2 * d; ++k) {
        held[k] = both;
      }
    }
  }
}

}  // namespace

void buildRecursivePlan(Plan& plan, const CollectiveRequest& request) {
  const std::span<const std::int64_t> group = request.group;
  const auto n = static_cast<std::int64_t>(group.size());
  const std::int64_t count = request.bytes / request.elementBytes;
  Ready ready(static_cast<std::size_t>(plan.topology().chips()), kNone);
  std::vector<Segment> held(group.size(), bufferRange(0, count));
  std::vector<Segment> own;
  for (std::int64_t i = 0; i < n; ++i) {
    own.push_back(chunkOf(i, n, count));
  }
  switch (request.op) {
    case CollectiveOp::kAllReduce:
      halving(plan, group, held, ready);
      doubling(plan, group, held, ready);
      break;
    case CollectiveOp::kReduceScatter:
      halving(plan, group, held, ready);
      break;
    case CollectiveOp::kAllGather:
      doubling(plan, group, own, ready);
      break;
    case CollectiveOp::kBroadcast: {
      // Rank r (relative to the root) receives in the step of its highest set bit.
      const auto root = static_cast<std::size_t>(request.root);
      const Segment whole = bufferRange(0, count);
      std::vector<OpId> has(group.size(), kNone);
      for (std::size_t d = 1; d < group.size(); d *= 2) {
        for (std::size_t r = 0; r < d; ++r) {
          const std::size_t from = (r + root) % group.size();
          const std::size_t to = (r + d + root) % group.size();
          has[to] = plan.copy(group[from], group[to], whole, whole, present({has[from]}));
        }
      }
      break;
    }
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kPermute:
    case CollectiveOp::kAllToAllV:
      break;  // unsupportedReason rules them out
  }
}

}  // namespace trn::fabric::detail
