// The fabric behind a kernel's `collective` instructions: the core::CollectiveService a system
// run (runtime::Session::runRanks) gives the scheduler. Rank r is chip r of the topology; each
// call is over one replica group, a request over the group's chips (position i of the group is
// rank i of the request). Each collective is timed by the model (collective.h: every algorithm that
// applies, the fastest taken) and, in the modes with data, executed on the ranks' HBM by the same
// plan (functional_collective.h), through scratch buffers in each chip's HBM that are given back
// afterwards. Every collective run is recorded, for reports.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "trn/core/collective_service.h"
#include "trn/fabric/collective.h"
#include "trn/fabric/topology.h"

namespace trn::fabric {

/// One collective a system run executed.
struct CollectiveRecord {
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::int64_t bytes = 0;  ///< in the nccom-test sense (CollectiveRequest::bytes)
  std::optional<Algorithm> algorithm;  ///< unset for a group of one rank (a copy)
  std::int64_t picoseconds = 0;
  std::vector<std::int64_t> group;  ///< the ranks (chips) it ran over, in group order
};

class FabricCollectives final : public core::CollectiveService {
 public:
  /// `topology` must outlive the service.
  explicit FabricCollectives(const Topology& topology) : topology_(topology) {}

  [[nodiscard]] Result<std::int64_t> run(std::span<const core::CollectiveCall> calls,
                                         bool withData) override;

  [[nodiscard]] const std::vector<CollectiveRecord>& records() const { return records_; }

 private:
  const Topology& topology_;
  std::vector<CollectiveRecord> records_;
};

}  // namespace trn::fabric
