// A collective's schedule as data: operations that move bytes over fabric resources (a transfer
// between chips: the sender's HBM, the route's links, the receiver's HBM) or within a chip (a
// reduction reading and writing HBM), each starting once its predecessors have finished. The
// collective algorithms (algorithms.h) build plans; flow_simulator.h times them.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "trn/fabric/topology.h"

namespace trn::fabric {

using OpId = std::uint32_t;

/// One operation of a plan.
struct PlanOp {
  std::uint32_t firstResource = 0;  ///< into Plan::resources()
  std::uint32_t resourceCount = 0;
  std::uint32_t firstPredecessor = 0;  ///< into Plan::predecessors()
  std::uint32_t predecessorCount = 0;
  double bytes = 0;             ///< carried by each of its resources
  std::int64_t startDelay = 0;  ///< ps between its predecessors' end and its first byte
  std::int64_t endDelay = 0;    ///< ps between its last byte leaving and the operation's end
};

class Plan {
 public:
  explicit Plan(const Topology& topology) : topology_(&topology) {}

  /// `bytes` from chip `from` to chip `to` (routed with `direction`, as Topology::route), after
  /// `after`. From a chip to itself it is a copy within the chip's HBM.
  OpId transfer(std::int64_t from, std::int64_t to, double bytes, std::span<const OpId> after,
                int direction = 0);
  /// A reduction on `chip` that reads and writes `bytes` of HBM in all, after `after`.
  OpId reduce(std::int64_t chip, double bytes, std::span<const OpId> after);
  /// Nothing, after `after`: a point later operations can depend on.
  OpId join(std::span<const OpId> after);

  OpId transfer(std::int64_t from, std::int64_t to, double bytes, std::initializer_list<OpId> after,
                int direction = 0) {
    return transfer(from, to, bytes, std::span(after.begin(), after.size()), direction);
  }
  OpId reduce(std::int64_t chip, double bytes, std::initializer_list<OpId> after) {
    return reduce(chip, bytes, std::span(after.begin(), after.size()));
  }

  [[nodiscard]] const Topology& topology() const { return *topology_; }
  [[nodiscard]] const std::vector<PlanOp>& ops() const { return ops_; }
  [[nodiscard]] std::span<const ResourceId> resourcesOf(const PlanOp& op) const {
    return std::span(resources_).subspan(op.firstResource, op.resourceCount);
  }
  [[nodiscard]] std::span<const OpId> predecessorsOf(const PlanOp& op) const {
    return std::span(predecessors_).subspan(op.firstPredecessor, op.predecessorCount);
  }
  /// Transfers between two different chips.
  [[nodiscard]] std::uint64_t messages() const { return messages_; }

 private:
  OpId add(std::span<const ResourceId> resources, double bytes, std::int64_t startDelay,
           std::int64_t endDelay, std::span<const OpId> after);

  const Topology* topology_;
  std::vector<PlanOp> ops_;
  std::vector<ResourceId> resources_;
  std::vector<OpId> predecessors_;
  std::uint64_t messages_ = 0;
};

}  // namespace trn::fabric
