// How a big timeline is aggregated so the offline report stays small: past a page's slice
// budget, consecutive slices of a track merge into one while the merged stretch is shorter than
// the page's total time x tracks / budget. Both report pages (page_data.h for core runs,
// collective_page.h for collectives) group their slices with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace trn::profile {

/// A slice as the grouping sees it.
struct TimedSlice {
  std::int32_t track = 0;
  std::int64_t start = 0;  ///< ps
  std::int64_t end = 0;    ///< ps
};

/// The index where each group starts (ascending, the first 0) for `slices` sorted by (track,
/// start). Every slice is its own group when there are at most `maxSlices`; otherwise a group
/// extends while its next slice is on the same track and ends less than total x tracks /
/// maxSlices after the group's start.
std::vector<std::size_t> groupSlices(std::span<const TimedSlice> slices, std::int64_t total,
                                     std::size_t tracks, std::size_t maxSlices);

}  // namespace trn::profile
