// Recursive halving and doubling over 2^k ranks (rank i pairs with i XOR d): a reduce-scatter
// that halves the data each step with partners N/2, N/4, ... 1 apart, an all-gather that doubles
// it with partners 1, 2, ... N/2 apart, and a binomial-tree broadcast. On a 4 x 4 torus the rank
// bits are the hypercube axes of R2: XOR 1 and 2 move along x, 4 and 8 along y.
#include <bit>

#include "ring_steps.h"

namespace trn::fabric::detail {
namespace {

/// One exchange step: every rank sends `bytes` to its partner at XOR `distance`; with `reduce`
/// it then reduces what it received.
void exchange(Plan& plan, std::span<const std::int64_t> group, std::size_t distance, double bytes,
              bool reduce, Ready& ready) {
  std::vector<OpId> sent(group.size());
  for (std::size_t i = 0; i < group.size(); ++i) {
    sent[i] = plan.transfer(group[i], group[i ^ distance], bytes,
                            present({ready[static_cast<std::size_t>(group[i])]}));
  }
  for (std::size_t i = 0; i < group.size(); ++i) {
    OpId& r = ready[static_cast<std::size_t>(group[i])];
    const OpId received = sent[i ^ distance];
    r = reduce ? plan.reduce(group[i], reductionBytes(bytes), present({received, r, sent[i]}))
               : plan.join(present({received, sent[i]}));
  }
}

void halving(Plan& plan, std::span<const std::int64_t> group, double bytes, Ready& ready) {
  double data = bytes;
  for (std::size_t d = group.size() / 2; d >= 1; d /= 2) {
    data /= 2;
    exchange(plan, group, d, data, true, ready);
  }
}

void doubling(Plan& plan, std::span<const std::int64_t> group, double bytes, Ready& ready) {
  double data = bytes / static_cast<double>(group.size());
  for (std::size_t d = 1; d < group.size(); d *= 2) {
    exchange(plan, group, d, data, false, ready);
    data *= 2;
  }
}

}  // namespace

void buildRecursivePlan(Plan& plan, const CollectiveRequest& request) {
  const std::span<const std::int64_t> group = request.group;
  const double bytes = static_cast<double>(request.bytes);
  Ready ready(static_cast<std::size_t>(plan.topology().chips()), kNone);
  switch (request.op) {
    case CollectiveOp::kAllReduce:
      halving(plan, group, bytes, ready);
      doubling(plan, group, bytes, ready);
      break;
    case CollectiveOp::kReduceScatter:
      halving(plan, group, bytes, ready);
      break;
    case CollectiveOp::kAllGather:
      doubling(plan, group, bytes, ready);
      break;
    case CollectiveOp::kBroadcast: {
      // Rank r (relative to the root) receives in the step of its highest set bit.
      const std::size_t n = group.size();
      const auto root = static_cast<std::size_t>(request.root);
      std::vector<OpId> has(n, kNone);
      for (std::size_t d = 1; d < n; d *= 2) {
        for (std::size_t r = 0; r < d; ++r) {
          const std::size_t from = (r + root) % n;
          const std::size_t to = (r + d + root) % n;
          has[to] = plan.transfer(group[from], group[to], bytes, present({has[from]}));
        }
      }
      break;
    }
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kPermute:
      break;  // unsupportedReason rules them out
  }
}

}  // namespace trn::fabric::detail
