// A collective's schedule as data: operations that move bytes over fabric resources (a transfer
// between chips: the sender's HBM, the route's links, the receiver's HBM) or within a chip (a
// reduction reading and writing HBM), each starting once its predecessors have finished. An
// operation may also say which elements it moves or reduces (a DataMove: a DMA that reads
// buffers of ranks on its chip, copies or reduces them, and writes one or, duplicated, two
// places), so that the same plan that is timed (flow_simulator.h) can be executed on data
// (functional_collective.h). The collective algorithms (ring.cpp, mesh.cpp, recursive.cpp,
// torus.cpp, kangaring.cpp) build plans.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "trn/fabric/topology.h"

namespace trn::fabric {

using OpId = std::uint32_t;

/// The areas of a chip's HBM a collective uses: the buffer (a rank's data, reduced and gathered in
/// place), the receive buffer (where an all-to-all or a permute delivers) and staging (where a
/// transfer leaves data for a reduction; each such transfer has its own).
enum class Region : std::uint8_t { kBuffer, kReceive, kStaging };

/// Elements of a region: `pieces` runs of `length` elements, `stride` apart, from `begin`.
struct Segment {
  Region region = Region::kBuffer;
  std::int64_t begin = 0;
  std::int64_t length = 0;
  std::int64_t pieces = 1;
  std::int64_t stride = 0;

  [[nodiscard]] std::int64_t count() const { return length * pieces; }
};

/// The contiguous elements [begin, begin + length) of the buffer.
inline Segment bufferRange(std::int64_t begin, std::int64_t length) {
  return {Region::kBuffer, begin, length, 1, length};
}

/// PlanOp::move of an operation that moves no data (a timing-only operation, a join), and
/// Access::stagedBy of an access outside staging.
inline constexpr std::uint32_t kNoMove = 0xFFFF'FFFF;

/// Elements one data move reads or writes: `segment` of place `place`'s region; in kStaging, the
/// staging that operation `stagedBy` wrote there.
struct Access {
  std::int64_t place = 0;
  Segment segment;
  OpId stagedBy = kNoMove;
};

/// What an operation does to the data, as one DMA of the collective cores does it: it reads
/// places of the issuing chip (the issuer's own buffers, or those of another rank on the same
/// chip), and writes its result to one place or, duplicated (one read, two writes), to two.
struct DataMove {
  enum class Kind : std::uint8_t {
    kCopy,    ///< the reads, one after another, are the written elements (in run order)
    kReduce,  ///< the reads (each as many elements as a write) combined element-wise, in order
  };
  Kind kind = Kind::kCopy;
  std::int64_t issuer = 0;      ///< the place whose collective cores issue it
  std::uint32_t firstRead = 0;  ///< into Plan::accesses()
  std::uint32_t readCount = 0;
  std::uint32_t firstWrite = 0;  ///< into Plan::accesses(); one or two
  std::uint32_t writeCount = 0;
};

/// One operation of a plan.
struct PlanOp {
  std::uint32_t firstResource = 0;  ///< into Plan::resources()
  std::uint32_t resourceCount = 0;
  std::uint32_t firstPredecessor = 0;  ///< into Plan::predecessors()
  std::uint32_t predecessorCount = 0;
  double bytes = 0;  ///< it writes (to each destination); resource k carries bytes x weight k
  std::int64_t startDelay = 0;   ///< ps between its predecessors' end and its first byte
  std::int64_t endDelay = 0;     ///< ps between its last byte leaving and the operation's end
  std::uint32_t move = kNoMove;  ///< into Plan::moves()
  /// The chip whose collective cores issue it (it holds one of them while it moves bytes), or -1.
  std::int64_t issuer = -1;
  /// Bytes per ps it moves at most (the DMA engines of one collective core), or 0: no limit.
  double rateLimit = 0;
  /// The operation ahead of it in its DMA queue, or kNoMove: it starts no earlier than that
  /// one's last byte has left (not its end, so that one slice's latency overlaps the next).
  OpId queuedBehind = kNoMove;
};

class Plan {
 public:
  /// A plan on `topology` whose elements (DataMove) are `elementBytes` bytes each.
  explicit Plan(const Topology& topology, std::int64_t elementBytes = 1)
      : topology_(&topology), elementBytes_(elementBytes) {}

  /// One DMA of the collective cores of `issuer`: reads `reads` (places on the issuer's chip;
  /// staged data names the operation that staged it, which becomes a predecessor), copies them
  /// one after another (kCopy) or combines them element-wise in order (kReduce), and writes the
  /// result to each of `writes` (one, or two: duplication; at most one of them in kStaging, the
  /// operation's own staging there), after `after`. Each write is routed from the issuer as
  /// transfer() routes. Its resources: the HBM of every place read, the links of every route and
  /// the HBM of every place written, each carrying the bytes that pass it; a copy streams at one
  /// collective core's DMA rate, a reduction at its DMA-compute rate.
  OpId dma(DataMove::Kind kind, std::int64_t issuer, std::span<const Access> reads,
           std::span<const Access> writes, std::span<const OpId> after, int direction = 0);
  /// Copies `source` on chip `from` to `destination` on chip `to` (same count; a destination in
  /// kStaging stages it for a later reduceInto), routed as transfer() routes, after `after`.
  OpId copy(std::int64_t from, std::int64_t to, const Segment& source, const Segment& destination,
            std::span<const OpId> after, int direction = 0);
  /// On `chip`: destination (+)= what each of `staged` (copies to `chip`'s staging, which become
  /// predecessors) staged, in that order, after `after` as well. Its HBM traffic is reading the
  /// destination and the staged data and writing the destination.
  OpId reduceInto(std::int64_t chip, const Segment& destination, std::span<const OpId> staged,
                  std::span<const OpId> after);

  /// Timing only: `bytes` from chip `from` to chip `to` (routed with `direction`, as
  /// Topology::route), after `after`. From a chip to itself it is a copy within the chip's HBM.
  OpId transfer(std::int64_t from, std::int64_t to, double bytes, std::span<const OpId> after,
                int direction = 0);
  /// Timing only: a reduction on `chip` that reads and writes `bytes` of HBM in all (one staged
  /// input: three bytes of HBM per byte it writes, for the DMA's rate).
  OpId reduce(std::int64_t chip, double bytes, std::span<const OpId> after);
  /// Nothing, after `after`: a point later operations can depend on.
  OpId join(std::span<const OpId> after);
  /// Puts `op` behind `ahead` (an earlier operation) in a DMA queue: `op` starts no earlier than
  /// `ahead`'s last byte (PlanOp::queuedBehind). Timing only: it orders no data.
  void queueBehind(OpId op, OpId ahead);

  /// Adds every operation of `other` (a plan on the same topology) for timing only (without its
  /// data moves), its operations with no predecessor starting `delay` ps later than they would
  /// alone; returns the id the first of them gets (the others follow in order). Plans of
  /// collectives in flight at once are timed together this way, sharing the fabric.
  OpId append(const Plan& other, std::int64_t delay = 0);

  OpId transfer(std::int64_t from, std::int64_t to, double bytes, std::initializer_list<OpId> after,
                int direction = 0) {
    return transfer(from, to, bytes, std::span(after.begin(), after.size()), direction);
  }
  OpId reduce(std::int64_t chip, double bytes, std::initializer_list<OpId> after) {
    return reduce(chip, bytes, std::span(after.begin(), after.size()));
  }

  [[nodiscard]] const Topology& topology() const { return *topology_; }
  [[nodiscard]] std::int64_t elementBytes() const { return elementBytes_; }
  [[nodiscard]] const std::vector<PlanOp>& ops() const { return ops_; }
  [[nodiscard]] const std::vector<DataMove>& moves() const { return moves_; }
  /// What `move` reads, in order, and where it writes.
  [[nodiscard]] std::span<const Access> readsOf(const DataMove& move) const {
    return std::span(accesses_).subspan(move.firstRead, move.readCount);
  }
  [[nodiscard]] std::span<const Access> writesOf(const DataMove& move) const {
    return std::span(accesses_).subspan(move.firstWrite, move.writeCount);
  }
  [[nodiscard]] std::span<const ResourceId> resourcesOf(const PlanOp& op) const {
    return std::span(resources_).subspan(op.firstResource, op.resourceCount);
  }
  /// Per resource of `op` (as resourcesOf), the bytes it carries per byte of the operation.
  [[nodiscard]] std::span<const double> weightsOf(const PlanOp& op) const {
    return std::span(weights_).subspan(op.firstResource, op.resourceCount);
  }
  [[nodiscard]] std::span<const OpId> predecessorsOf(const PlanOp& op) const {
    return std::span(predecessors_).subspan(op.firstPredecessor, op.predecessorCount);
  }
  /// Transfers between two different chips.
  [[nodiscard]] std::uint64_t messages() const { return messages_; }

 private:
  /// `weights` empty: each resource carries the operation's bytes once.
  OpId add(std::span<const ResourceId> resources, std::span<const double> weights, double bytes,
           std::int64_t startDelay, std::int64_t endDelay, std::span<const OpId> after);

  const Topology* topology_;
  std::int64_t elementBytes_;
  std::vector<PlanOp> ops_;
  std::vector<DataMove> moves_;
  std::vector<Access> accesses_;
  std::vector<ResourceId> resources_;
  std::vector<double> weights_;  ///< per entry of resources_
  std::vector<OpId> predecessors_;
  std::uint64_t messages_ = 0;
};

}  // namespace trn::fabric
