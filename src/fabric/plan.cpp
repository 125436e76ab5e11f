#include "trn/fabric/plan.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "trn/base/check.h"

namespace trn::fabric {

OpId Plan::add(std::span<const ResourceId> resources, double bytes, std::int64_t startDelay,
               std::int64_t endDelay, std::span<const OpId> after) {
  TRN_CHECK(ops_.size() < std::numeric_limits<OpId>::max() &&
            resources_.size() + resources.size() < std::numeric_limits<std::uint32_t>::max() &&
            predecessors_.size() + after.size() < std::numeric_limits<std::uint32_t>::max())
      << "a collective plan outgrew 32-bit indices";
  PlanOp op;
  op.firstResource = static_cast<std::uint32_t>(resources_.size());
  op.resourceCount = static_cast<std::uint32_t>(resources.size());
  op.firstPredecessor = static_cast<std::uint32_t>(predecessors_.size());
  op.predecessorCount = static_cast<std::uint32_t>(after.size());
  op.bytes = bytes;
  op.startDelay = startDelay;
  op.endDelay = endDelay;
  const auto id = static_cast<OpId>(ops_.size());
  for (const OpId p : after) {
    TRN_CHECK(p < id) << "a plan operation depends on one not yet added";
  }
  resources_.insert(resources_.end(), resources.begin(), resources.end());
  predecessors_.insert(predecessors_.end(), after.begin(), after.end());
  ops_.push_back(op);
  return id;
}

OpId Plan::transfer(std::int64_t from, std::int64_t to, double bytes, std::span<const OpId> after,
                    int direction) {
  const Route route = topology_->route(from, to, direction);
  std::vector<ResourceId> resources;
  resources.reserve(route.links.size() + 2);
  resources.push_back(topology_->hbm(from));
  resources.insert(resources.end(), route.links.begin(), route.links.end());
  if (to != from) {
    // Two logical cores on one HBM stack (LNC=1) copy within it, as a chip to itself does: the
    // stack is one resource of the operation.
    if (topology_->hbm(to) != topology_->hbm(from)) {
      resources.push_back(topology_->hbm(to));
    }
    ++messages_;
  }
  const OpId id = add(resources, bytes, route.overhead, route.latency, after);
  ops_[id].issuer = from;
  ops_[id].rateLimit = topology_->streamBandwidth();
  return id;
}

OpId Plan::reduce(std::int64_t chip, double bytes, std::span<const OpId> after) {
  const ResourceId hbm = topology_->hbm(chip);
  const OpId id = add(std::span(&hbm, 1), bytes, 0, 0, after);
  ops_[id].issuer = chip;
  ops_[id].rateLimit = 3 * topology_->reduceBandwidth();
  return id;
}

OpId Plan::withMove(OpId op, const DataMove& move) {
  TRN_CHECK(moves_.size() < kNoMove) << "a collective plan outgrew 32-bit indices";
  ops_[op].move = static_cast<std::uint32_t>(moves_.size());
  moves_.push_back(move);
  return op;
}

OpId Plan::copy(std::int64_t from, std::int64_t to, const Segment& source,
                const Segment& destination, std::span<const OpId> after, int direction) {
  TRN_CHECK(source.count() == destination.count()) << "a copy between segments of unequal size";
  const double bytes = static_cast<double>(source.count() * elementBytes_);
  DataMove move;
  move.kind = DataMove::Kind::kCopy;
  move.from = from;
  move.to = to;
  move.source = source;
  move.destination = destination;
  return withMove(transfer(from, to, bytes, after, direction), move);
}

OpId Plan::reduceInto(std::int64_t chip, const Segment& destination, std::span<const OpId> staged,
                      std::span<const OpId> after) {
  std::vector<OpId> predecessors(after.begin(), after.end());
  for (const OpId s : staged) {
    const PlanOp& op = ops_.at(s);
    TRN_CHECK(op.move != kNoMove && moves_[op.move].kind == DataMove::Kind::kCopy &&
              moves_[op.move].to == chip &&
              moves_[op.move].destination.region == Region::kStaging &&
              moves_[op.move].destination.count() == destination.count())
        << "a reduction's input is not a copy staged on its chip for it";
    if (std::find(predecessors.begin(), predecessors.end(), s) == predecessors.end()) {
      predecessors.push_back(s);
    }
  }
  const auto reads = static_cast<double>(staged.size() + 2);
  DataMove move;
  move.kind = DataMove::Kind::kReduce;
  move.from = chip;
  move.to = chip;
  move.destination = destination;
  move.firstInput = static_cast<std::uint32_t>(inputs_.size());
  move.inputCount = static_cast<std::uint32_t>(staged.size());
  inputs_.insert(inputs_.end(), staged.begin(), staged.end());
  const OpId id =
      reduce(chip, reads * static_cast<double>(destination.count() * elementBytes_), predecessors);
  ops_[id].rateLimit = reads * topology_->reduceBandwidth();
  return withMove(id, move);
}

OpId Plan::join(std::span<const OpId> after) { return add({}, 0, 0, 0, after); }

OpId Plan::append(const Plan& other, std::int64_t delay) {
  TRN_CHECK(&other.topology() == topology_ && delay >= 0)
      << "plans appended must share a topology";
  const auto first = static_cast<OpId>(ops_.size());
  TRN_CHECK(other.ops().size() < std::numeric_limits<OpId>::max() - first)
      << "a collective plan outgrew 32-bit indices";
  std::vector<OpId> after;
  for (const PlanOp& op : other.ops()) {
    after.clear();
    for (const OpId p : other.predecessorsOf(op)) {
      after.push_back(p + first);
    }
    const OpId id = add(other.resourcesOf(op), op.bytes,
                        op.startDelay + (op.predecessorCount == 0 ? delay : 0), op.endDelay, after);
    ops_[id].issuer = op.issuer;
    ops_[id].rateLimit = op.rateLimit;
  }
  messages_ += other.messages_;
  return first;
}

}  // namespace trn::fabric
