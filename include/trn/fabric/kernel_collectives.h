// The fabric behind a kernel's `collective` instructions: the core::CollectiveService a system
// run (runtime::Session::runRanks) gives the scheduler. Rank r is place r of the topology: chip r,
// or with logical-core ranks logical core r mod L of chip r / L; each call is over one replica
// group, a request over the group's places (position i of the group is rank i of the request). An
// all_to_allv reads each rank's counts tensor when it runs (a timing-only run, which has no
// values, assumes equal shares) and receives straight into dst. Each collective is timed by the
// model (collective.h: every algorithm that applies, the fastest taken) and, in the modes with
// data, executed on the ranks' HBM by the same plan (functional_collective.h), through scratch
// buffers in each chip's HBM that are given back afterwards. Collectives of other groups still in
// flight when one starts (CollectiveCall::start) share the fabric with it: it is timed together
// with them (concurrent_collectives.h), each keeping the algorithm and start it had; a collective
// already timed is not slowed by one that starts later. Every collective run is recorded, for
// reports. Its load on each rank's chip (DMA engine work and HBM bytes, lastLoads) is what the
// scheduler shares with the rank's own DMA.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "trn/core/collective_service.h"
#include "trn/fabric/collective.h"
#include "trn/fabric/concurrent_collectives.h"
#include "trn/fabric/topology.h"

namespace trn::fabric {

/// One collective a system run executed.
struct CollectiveRecord {
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::int64_t bytes = 0;              ///< in the nccom-test sense (CollectiveRequest::bytes)
  std::optional<Algorithm> algorithm;  ///< unset for a group of one rank (a copy)
  std::int64_t picoseconds = 0;        ///< with the collectives in flight when it started
  std::int64_t alonePicoseconds = 0;   ///< had it had the fabric to itself
  std::vector<std::int64_t> group;     ///< the ranks (chips) it ran over, in group order
};

class FabricCollectives final : public core::CollectiveService {
 public:
  /// `topology` must outlive the service.
  explicit FabricCollectives(const Topology& topology) : topology_(topology) {}

  [[nodiscard]] Result<std::int64_t> run(std::span<const core::CollectiveCall> calls,
                                         bool withData) override;

  /// Per call of the last run(), its collective's load on that rank's chip: the DMA work of its
  /// streams on one NeuronCore's engines (the chip's cores share them evenly) and its bytes in
  /// the chip's HBM. Empty after a group of one or an error.
  [[nodiscard]] std::vector<core::CollectiveChipLoad> lastLoads() const override {
    return lastLoads_;
  }

  [[nodiscard]] const std::vector<CollectiveRecord>& records() const { return records_; }

 private:
  /// The times of `request` started at `start`: alone and with the collectives in flight then.
  Result<ConcurrentResult> timeAmongInFlight(const CollectiveRequest& request, std::int64_t start);

  const Topology& topology_;
  std::vector<CollectiveRecord> records_;
  std::vector<core::CollectiveChipLoad> lastLoads_;
  /// Collectives timed so far whose end has not been passed by a later start (their `start` and
  /// algorithm as run), and their ends.
  std::vector<ConcurrentCollective> inFlight_;
  std::vector<std::int64_t> inFlightEnd_;
};

}  // namespace trn::fabric
