// The flat ring: the group in snake order through the grid (consecutive ranks neighbours where
// the grid allows), run in both directions at once on half the data each.
#include <algorithm>

#include "ring_steps.h"

namespace trn::fabric::detail {
namespace {

/// A broadcast down the ring from the root, in pieces so that the hops overlap.
void ringBroadcast(Plan& plan, std::span<const std::int64_t> ring, std::int64_t count) {
  const std::int64_t pieces = std::clamp<std::int64_t>(count, 1, 8);
  const std::size_t n = ring.size();
  std::vector<OpId> previousPiece(n, kNone);  // per hop, the last piece sent on it
  for (std::int64_t p = 0; p < pieces; ++p) {
    const Segment piece =
        bufferRange(count * p / pieces, count * (p + 1) / pieces - count * p / pieces);
    OpId arrived = kNone;
    for (std::size_t h = 0; h + 1 < n; ++h) {
      arrived = plan.copy(ring[h], ring[h + 1], piece, piece, present({arrived, previousPiece[h]}));
      previousPiece[h] = arrived;
    }
  }
}

}  // namespace

void buildRingPlan(Plan& plan, const CollectiveRequest& request) {
  const Topology& topology = plan.topology();
  const auto n = static_cast<std::int64_t>(request.group.size());
  const std::int64_t count = request.bytes / request.elementBytes;
  Ready ready(static_cast<std::size_t>(topology.chips()), kNone);
  std::vector<std::int64_t> ring = snakeOrder(topology, request.group);
  // The piece each ring position ends with: its rank's chunk.
  std::vector<std::int64_t> rankOf(static_cast<std::size_t>(topology.chips()), 0);
  for (std::size_t rank = 0; rank < request.group.size(); ++rank) {
    rankOf[static_cast<std::size_t>(request.group[rank])] = static_cast<std::int64_t>(rank);
  }
  std::vector<Segment> pieces;
  for (const std::int64_t chip : ring) {
    pieces.push_back(chunkOf(rankOf[static_cast<std::size_t>(chip)], n, count));
  }
  switch (request.op) {
    case CollectiveOp::kAllReduce:
      twoChannels(plan, ring, pieces, ready, ringReduceScatter, 0);
      twoChannels(plan, ring, pieces, ready, ringAllGather, 0);
      break;
    case CollectiveOp::kReduceScatter:
      twoChannels(plan, ring, pieces, ready, ringReduceScatter, 0);
      break;
    case CollectiveOp::kAllGather:
      twoChannels(plan, ring, pieces, ready, ringAllGather, 0);
      break;
    case CollectiveOp::kBroadcast: {
      const std::int64_t root = request.group[static_cast<std::size_t>(request.root)];
      std::rotate(ring.begin(), std::find(ring.begin(), ring.end(), root), ring.end());
      ringBroadcast(plan, ring, count);
      break;
    }
    case CollectiveOp::kPermute:
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kAllToAllV:
      break;  // unsupportedReason rules them out
  }
}

}  // namespace trn::fabric::detail
