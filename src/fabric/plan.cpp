#include "trn/fabric/plan.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "trn/base/check.h"

namespace trn::fabric {
namespace {

/// Adds `weight` to `resource`'s entry of an operation's resources, or appends it.
void carry(std::vector<ResourceId>& resources, std::vector<double>& weights, ResourceId resource,
           double weight) {
  const auto at = std::find(resources.begin(), resources.end(), resource);
  if (at == resources.end()) {
    resources.push_back(resource);
    weights.push_back(weight);
  } else {
    weights[static_cast<std::size_t>(at - resources.begin())] += weight;
  }
}

}  // namespace

OpId Plan::add(std::span<const ResourceId> resources, std::span<const double> weights, double bytes,
               std::int64_t startDelay, std::int64_t endDelay, std::span<const OpId> after) {
  TRN_CHECK(ops_.size() < std::numeric_limits<OpId>::max() &&
            resources_.size() + resources.size() < std::numeric_limits<std::uint32_t>::max() &&
            predecessors_.size() + after.size() < std::numeric_limits<std::uint32_t>::max())
      << "a collective plan outgrew 32-bit indices";
  TRN_CHECK(weights.empty() || weights.size() == resources.size())
      << "an operation's weights do not match its resources";
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
  if (weights.empty()) {
    weights_.insert(weights_.end(), resources.size(), 1.0);
  } else {
    weights_.insert(weights_.end(), weights.begin(), weights.end());
  }
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
  const OpId id = add(resources, {}, bytes, route.overhead, route.latency, after);
  ops_[id].issuer = from;
  ops_[id].rateLimit = topology_->streamBandwidth();
  return id;
}

OpId Plan::reduce(std::int64_t chip, double bytes, std::span<const OpId> after) {
  const ResourceId hbm = topology_->hbm(chip);
  const OpId id = add(std::span(&hbm, 1), {}, bytes, 0, 0, after);
  ops_[id].issuer = chip;
  ops_[id].rateLimit = 3 * topology_->reduceBandwidth();
  return id;
}

OpId Plan::dma(DataMove::Kind kind, std::int64_t issuer, std::span<const Access> reads,
               std::span<const Access> writes, std::span<const OpId> after, int direction) {
  TRN_CHECK(!reads.empty() && (writes.size() == 1 || writes.size() == 2))
      << "a DMA reads something and writes one or two places";
  const std::int64_t count = writes.front().segment.count();
  std::int64_t readElements = 0;
  std::vector<OpId> predecessors(after.begin(), after.end());
  for (const Access& r : reads) {
    TRN_CHECK(topology_->physicalChipOf(r.place) == topology_->physicalChipOf(issuer))
        << "a DMA reads place " << r.place << ", not on the chip of its issuer " << issuer;
    TRN_CHECK(kind == DataMove::Kind::kCopy || r.segment.count() == count)
        << "a reduction's inputs and outputs differ in size";
    readElements += r.segment.count();
    if (r.segment.region == Region::kStaging) {
      TRN_CHECK(r.stagedBy < ops_.size() && ops_[r.stagedBy].move != kNoMove)
          << "a DMA reads staging no data move wrote";
      const DataMove& stager = moves_[ops_[r.stagedBy].move];
      bool staged = false;
      for (const Access& w : writesOf(stager)) {
        staged = staged || (w.place == r.place && w.segment.region == Region::kStaging &&
                            w.segment.count() >= r.segment.begin + r.segment.count());
      }
      TRN_CHECK(staged) << "a DMA reads staging that operation " << r.stagedBy
                        << " did not write on place " << r.place;
      if (std::find(predecessors.begin(), predecessors.end(), r.stagedBy) == predecessors.end()) {
        predecessors.push_back(r.stagedBy);
      }
    }
  }
  TRN_CHECK(kind == DataMove::Kind::kReduce || readElements == count)
      << "a copy reads " << readElements << " elements to write " << count;
  std::int64_t staged = 0;
  for (const Access& w : writes) {
    TRN_CHECK(w.segment.count() == count) << "a duplicated DMA writes two sizes";
    staged += w.segment.region == Region::kStaging ? 1 : 0;
  }
  TRN_CHECK(staged <= 1) << "a DMA stages at most one of its writes";

  std::vector<ResourceId> resources;
  std::vector<double> weights;
  for (const Access& r : reads) {
    carry(resources, weights, topology_->hbm(r.place),
          static_cast<double>(r.segment.count()) /
              static_cast<double>(std::max<std::int64_t>(count, 1)));
  }
  std::int64_t overhead = 0;
  std::int64_t latency = 0;
  for (const Access& w : writes) {
    const Route route = topology_->route(issuer, w.place, direction);
    for (const ResourceId link : route.links) {
      carry(resources, weights, link, 1);
    }
    carry(resources, weights, topology_->hbm(w.place), 1);
    overhead = std::max(overhead, route.overhead);
    latency = std::max(latency, route.latency);
    messages_ += w.place != issuer ? 1 : 0;
  }
  const OpId id = add(resources, weights, static_cast<double>(count * elementBytes_), overhead,
                      latency, predecessors);
  ops_[id].issuer = issuer;
  ops_[id].rateLimit =
      kind == DataMove::Kind::kCopy ? topology_->streamBandwidth() : topology_->reduceBandwidth();
  TRN_CHECK(moves_.size() < kNoMove && accesses_.size() + reads.size() + writes.size() <
                                           std::numeric_limits<std::uint32_t>::max())
      << "a collective plan outgrew 32-bit indices";
  DataMove move;
  move.kind = kind;
  move.issuer = issuer;
  move.firstRead = static_cast<std::uint32_t>(accesses_.size());
  move.readCount = static_cast<std::uint32_t>(reads.size());
  accesses_.insert(accesses_.end(), reads.begin(), reads.end());
  move.firstWrite = static_cast<std::uint32_t>(accesses_.size());
  move.writeCount = static_cast<std::uint32_t>(writes.size());
  accesses_.insert(accesses_.end(), writes.begin(), writes.end());
  ops_[id].move = static_cast<std::uint32_t>(moves_.size());
  moves_.push_back(move);
  return id;
}

OpId Plan::copy(std::int64_t from, std::int64_t to, const Segment& source,
                const Segment& destination, std::span<const OpId> after, int direction) {
  TRN_CHECK(source.count() == destination.count()) << "a copy between segments of unequal size";
  const Access read{from, source, kNoMove};
  const Access write{to, destination, kNoMove};
  return dma(DataMove::Kind::kCopy, from, std::span(&read, 1), std::span(&write, 1), after,
             direction);
}

OpId Plan::reduceInto(std::int64_t chip, const Segment& destination, std::span<const OpId> staged,
                      std::span<const OpId> after) {
  std::vector<Access> reads{{chip, destination, kNoMove}};
  for (const OpId s : staged) {
    reads.push_back({chip, {Region::kStaging, 0, destination.count(), 1, destination.count()}, s});
  }
  const Access write{chip, destination, kNoMove};
  return dma(DataMove::Kind::kReduce, chip, reads, std::span(&write, 1), after);
}

OpId Plan::join(std::span<const OpId> after) { return add({}, {}, 0, 0, 0, after); }

void Plan::queueBehind(OpId op, OpId ahead) {
  TRN_CHECK(ahead < op && op < ops_.size()) << "an operation queued behind one not added before it";
  ops_[op].queuedBehind = ahead;
}

OpId Plan::append(const Plan& other, std::int64_t delay) {
  TRN_CHECK(&other.topology() == topology_ && delay >= 0) << "plans appended must share a topology";
  const auto first = static_cast<OpId>(ops_.size());
  TRN_CHECK(other.ops().size() < std::numeric_limits<OpId>::max() - first)
      << "a collective plan outgrew 32-bit indices";
  std::vector<OpId> after;
  for (const PlanOp& op : other.ops()) {
    after.clear();
    for (const OpId p : other.predecessorsOf(op)) {
      after.push_back(p + first);
    }
    const OpId id = add(other.resourcesOf(op), other.weightsOf(op), op.bytes,
                        op.startDelay + (op.predecessorCount == 0 ? delay : 0), op.endDelay, after);
    ops_[id].issuer = op.issuer;
    ops_[id].rateLimit = op.rateLimit;
    ops_[id].queuedBehind = op.queuedBehind == kNoMove ? kNoMove : op.queuedBehind + first;
  }
  messages_ += other.messages_;
  return first;
}

}  // namespace trn::fabric
