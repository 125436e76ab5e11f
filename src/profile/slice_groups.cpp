#include "trn/profile/slice_groups.h"

#include <algorithm>

namespace trn::profile {

std::vector<std::size_t> groupSlices(std::span<const TimedSlice> slices, std::int64_t total,
                                     std::size_t tracks, std::size_t maxSlices) {
  const bool aggregate = slices.size() > maxSlices;
  const std::int64_t stretch =
      aggregate ? total * static_cast<std::int64_t>(tracks) /
                      static_cast<std::int64_t>(std::max<std::size_t>(1, maxSlices))
                : 0;
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < slices.size();) {
    starts.push_back(i);
    std::size_t j = i + 1;
    while (aggregate && j < slices.size() && slices[j].track == slices[i].track &&
           slices[j].end - slices[i].start < stretch) {
      ++j;
    }
    i = j;
  }
  return starts;
}

}  // namespace trn::profile
