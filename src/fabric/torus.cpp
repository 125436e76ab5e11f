// The per-dimension ring: for a group that fills the first dimensions of the grid, a reduce-
// scatter ring along each dimension in turn, innermost first, each on the part of the data the
// previous ones left, then all-gathers in the reverse order. Over an instance it is the torus
// ring (every link busy in both directions); with a node dimension outside it is the
// hierarchical algorithm (reduce within the node, then between nodes on 1/16 of the data, then
// gather back).
#include "ring_steps.h"

namespace trn::fabric::detail {
namespace {

/// Every line of chips along dimension `d` within the group (chips 0..n-1).
std::vector<std::vector<std::int64_t>> linesAlong(const Topology& topology, std::size_t d,
                                                  std::int64_t groupSize) {
  std::vector<std::vector<std::int64_t>> lines;
  const std::int64_t size = topology.dimensions()[d].size;
  for (std::int64_t c = 0; c < groupSize; ++c) {
    if (topology.coordinate(c, d) != 0) {
      continue;
    }
    std::vector<std::int64_t> line;
    for (std::int64_t x = 0; x < size; ++x) {
      line.push_back(topology.withCoordinate(c, d, x));
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace

std::vector<std::size_t> torusDimensions(const Topology& topology,
                                         std::span<const std::int64_t> group) {
  for (std::size_t i = 0; i < group.size(); ++i) {
    if (group[i] != static_cast<std::int64_t>(i)) {
      return {};
    }
  }
  std::vector<std::size_t> dims;
  std::int64_t covered = 1;
  for (std::size_t d = 0;
       d < topology.dimensions().size() && covered < static_cast<std::int64_t>(group.size()); ++d) {
    covered *= topology.dimensions()[d].size;
    if (topology.dimensions()[d].size > 1) {
      dims.push_back(d);
    }
  }
  if (covered != static_cast<std::int64_t>(group.size())) {
    return {};
  }
  return dims;
}

void buildTorusPlan(Plan& plan, const CollectiveRequest& request) {
  const Topology& topology = plan.topology();
  const auto groupSize = static_cast<std::int64_t>(request.group.size());
  const std::vector<std::size_t> dims = torusDimensions(topology, request.group);
  Ready ready(static_cast<std::size_t>(topology.chips()), kNone);
  const std::int64_t chunk = request.bytes / request.elementBytes / groupSize;
  // What chip c holds after reducing along the first k dimensions: the chunks whose numbers agree
  // with c's coordinates along them, so that after all of them chip c holds chunk c.
  auto heldAfter = [&](std::int64_t chip, std::size_t k) {
    std::int64_t first = 0;
    std::int64_t stride = 1;
    for (std::size_t j = 0; j < k; ++j) {
      first += topology.coordinate(chip, dims[j]) * stride;
      stride *= topology.dimensions()[dims[j]].size;
    }
    return Segment{Region::kBuffer, first * chunk, chunk, groupSize / stride, stride * chunk};
  };
  auto piecesOf = [&](const std::vector<std::int64_t>& line, std::size_t k) {
    std::vector<Segment> pieces;
    for (const std::int64_t c : line) {
      pieces.push_back(heldAfter(c, k));
    }
    return pieces;
  };
  const bool scatter =
      request.op == CollectiveOp::kAllReduce || request.op == CollectiveOp::kReduceScatter;
  const bool gather =
      request.op == CollectiveOp::kAllReduce || request.op == CollectiveOp::kAllGather;
  // Reduce-scatter innermost first: after dimension k each chip holds 1/size of what it had.
  if (scatter) {
    for (std::size_t k = 0; k < dims.size(); ++k) {
      for (const std::vector<std::int64_t>& line : linesAlong(topology, dims[k], groupSize)) {
        twoChannels(plan, line, piecesOf(line, k + 1), ready, ringReduceScatter, 1);
      }
    }
  }
  // All-gather outermost first: the slowest links carry the smallest pieces.
  if (gather) {
    for (std::size_t k = dims.size(); k-- > 0;) {
      for (const std::vector<std::int64_t>& line : linesAlong(topology, dims[k], groupSize)) {
        twoChannels(plan, line, piecesOf(line, k + 1), ready, ringAllGather, 1);
      }
    }
  }
}

}  // namespace trn::fabric::detail
