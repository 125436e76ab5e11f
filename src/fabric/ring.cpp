// The flat ring: the group in snake order through the grid (consecutive ranks neighbours where
// the grid allows), run in both directions at once on half the data each.
#include <algorithm>
#include <numeric>

#include "ring_steps.h"

namespace trn::fabric::detail {
namespace {

/// The group's chips in boustrophedon order: the outermost coordinate ascending, each inner one
/// ascending or descending as the coordinates outside it sum to an even or odd number.
std::vector<std::int64_t> snakeOrder(const Topology& topology,
                                     std::span<const std::int64_t> group) {
  const std::size_t dims = topology.dimensions().size();
  auto key = [&](std::int64_t chip) {
    std::vector<std::int64_t> k(dims);
    std::int64_t outerSum = 0;
    for (std::size_t d = dims; d-- > 0;) {
      const std::int64_t x = topology.coordinate(chip, d);
      const std::int64_t size = topology.dimensions()[d].size;
      k[dims - 1 - d] = outerSum % 2 == 0 ? x : size - 1 - x;
      outerSum += k[dims - 1 - d];
    }
    return k;
  };
  std::vector<std::int64_t> order(group.begin(), group.end());
  std::vector<std::vector<std::int64_t>> keys;
  keys.reserve(order.size());
  for (const std::int64_t c : order) {
    keys.push_back(key(c));
  }
  std::vector<std::size_t> index(order.size());
  std::iota(index.begin(), index.end(), 0);
  std::stable_sort(index.begin(), index.end(),
                   [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
  std::vector<std::int64_t> sorted;
  sorted.reserve(order.size());
  for (const std::size_t i : index) {
    sorted.push_back(order[i]);
  }
  return sorted;
}

/// A broadcast down the ring from the root, in pieces so that the hops overlap.
void ringBroadcast(Plan& plan, std::span<const std::int64_t> ring, double bytes) {
  constexpr int kPieces = 8;
  const std::size_t n = ring.size();
  std::vector<OpId> previousPiece(n, kNone);  // per hop, the last piece sent on it
  for (int p = 0; p < kPieces; ++p) {
    OpId arrived = kNone;
    for (std::size_t h = 0; h + 1 < n; ++h) {
      arrived = plan.transfer(ring[h], ring[h + 1], bytes / kPieces,
                              present({arrived, previousPiece[h]}));
      previousPiece[h] = arrived;
    }
  }
}

}  // namespace

void buildRingPlan(Plan& plan, const CollectiveRequest& request) {
  const Topology& topology = plan.topology();
  const auto n = static_cast<double>(request.group.size());
  const double bytes = static_cast<double>(request.bytes);
  Ready ready(static_cast<std::size_t>(topology.chips()), kNone);
  std::vector<std::int64_t> ring = snakeOrder(topology, request.group);
  switch (request.op) {
    case CollectiveOp::kAllReduce:
      twoChannels(plan, ring, bytes / n, ready, ringReduceScatter, 0);
      twoChannels(plan, ring, bytes / n, ready, ringAllGather, 0);
      break;
    case CollectiveOp::kReduceScatter:
      twoChannels(plan, ring, bytes / n, ready, ringReduceScatter, 0);
      break;
    case CollectiveOp::kAllGather:
      twoChannels(plan, ring, bytes / n, ready, ringAllGather, 0);
      break;
    case CollectiveOp::kBroadcast: {
      const std::int64_t root = request.group[static_cast<std::size_t>(request.root)];
      std::rotate(ring.begin(), std::find(ring.begin(), ring.end(), root), ring.end());
      ringBroadcast(plan, ring, bytes);
      break;
    }
    case CollectiveOp::kPermute:
      for (std::size_t i = 0; i < ring.size(); ++i) {
        plan.transfer(ring[i], ring[(i + 1) % ring.size()], bytes, {});
      }
      break;
    case CollectiveOp::kAllToAll:
      break;  // unsupportedReason rules it out
  }
}

}  // namespace trn::fabric::detail
