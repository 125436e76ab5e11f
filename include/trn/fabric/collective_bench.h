// A sweep of one collective over message sizes, reported as `nccom-test` reports it: per size the
// element count, type, time, algorithm bandwidth (size / time) and bus bandwidth (algorithm
// bandwidth times the operation's factor, collective.h), and the algorithm the model chose.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/fabric/collective.h"
#include "trn/numerics/dtype.h"

namespace trn::fabric {

/// One size: a whole number with an optional K, M or G (powers of 1024) or B: "64M".
Result<std::int64_t> parseSize(std::string_view text);

/// Sizes from "8K:1G" (doubling) or "8K:1G:4" (a factor of 4) or one size "64M"; K, M and G are
/// powers of 1024, as nccom-test reads them.
Result<std::vector<std::int64_t>> parseSizes(std::string_view text);

struct BenchRow {
  CollectiveRequest request;  ///< as run
  std::int64_t bytes = 0;  ///< the size run: the asked one rounded down to whole elements per rank
  std::int64_t count = 0;  ///< elements
  CollectiveResult result;
  double algorithmGBps = 0;  ///< bytes / time, in 1e9 bytes per second
  double busGBps = 0;
};

struct BenchRequest {
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::int64_t ranks = 0;  ///< the system's first `ranks` chips
  std::vector<std::int64_t> sizes;
  DType dtype = DType::kBf16;
  std::optional<Algorithm> algorithm;
  VariableCounts variable;  ///< all_to_allv: the exchange; each size is then each rank's buffer
};

/// Runs the sweep; fails on a bad request (more ranks than chips, a reduction in a type the
/// collective cores do not reduce in, a size too small for one element per rank).
Result<std::vector<BenchRow>> benchCollective(const Topology& topology,
                                              const BenchRequest& request);

/// The nccom-test style table of `rows`.
std::string benchTable(const BenchRequest& request, const std::vector<BenchRow>& rows);

}  // namespace trn::fabric
