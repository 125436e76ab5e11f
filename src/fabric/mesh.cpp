// The mesh: every rank sends straight to every other in one step; the fabric routes the messages
// through intermediate chips and they share the links they meet.
#include "ring_steps.h"

namespace trn::fabric::detail {
namespace {

/// Each rank sends `chunk` to every other; then each reduces what it received, when `reduce`.
/// ready[c] becomes the reduction (or the last receipt) of chip c.
void everyToEvery(Plan& plan, std::span<const std::int64_t> group, double chunk, bool reduce,
                  Ready& ready) {
  std::vector<std::vector<OpId>> received(group.size());
  for (std::size_t i = 0; i < group.size(); ++i) {
    for (std::size_t j = 0; j < group.size(); ++j) {
      if (i != j) {
        received[j].push_back(plan.transfer(group[i], group[j], chunk,
                                            present({ready[static_cast<std::size_t>(group[i])]})));
      }
    }
  }
  for (std::size_t j = 0; j < group.size(); ++j) {
    OpId& r = ready[static_cast<std::size_t>(group[j])];
    std::vector<OpId> after = received[j];
    if (r != kNone) {
      after.push_back(r);
    }
    const auto others = static_cast<double>(received[j].size());
    r = reduce ? plan.reduce(group[j], (others + 2) * chunk, after) : plan.join(after);
  }
}

}  // namespace

void buildMeshPlan(Plan& plan, const CollectiveRequest& request) {
  const std::span<const std::int64_t> group = request.group;
  const auto n = static_cast<double>(group.size());
  const double bytes = static_cast<double>(request.bytes);
  Ready ready(static_cast<std::size_t>(plan.topology().chips()), kNone);
  switch (request.op) {
    case CollectiveOp::kAllReduce:
      everyToEvery(plan, group, bytes / n, true, ready);
      everyToEvery(plan, group, bytes / n, false, ready);
      break;
    case CollectiveOp::kReduceScatter:
      everyToEvery(plan, group, bytes / n, true, ready);
      break;
    case CollectiveOp::kAllGather:
    case CollectiveOp::kAllToAll:
      everyToEvery(plan, group, bytes / n, false, ready);
      break;
    case CollectiveOp::kBroadcast: {
      const std::int64_t root = group[static_cast<std::size_t>(request.root)];
      for (const std::int64_t c : group) {
        if (c != root) {
          plan.transfer(root, c, bytes, {});
        }
      }
      break;
    }
    case CollectiveOp::kPermute:
      for (std::size_t i = 0; i < group.size(); ++i) {
        plan.transfer(group[i], group[(i + 1) % group.size()], bytes, {});
      }
      break;
  }
}

}  // namespace trn::fabric::detail
