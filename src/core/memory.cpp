#include "trn/core/memory.h"

#include <algorithm>

namespace trn::core {

TrackedBytes::TrackedBytes(std::size_t size, bool trackWrites)
    : bytes_(size), written_(trackWrites ? size : 0, 0) {}

void TrackedBytes::markWritten(std::size_t offset, std::size_t length) {
  if (tracking()) {
    std::fill_n(written_.begin() + static_cast<std::ptrdiff_t>(offset), length, std::uint8_t{1});
  }
}

bool TrackedBytes::allWritten(std::size_t offset, std::size_t length) const {
  if (!tracking()) {
    return true;
  }
  const auto begin = written_.begin() + static_cast<std::ptrdiff_t>(offset);
  return std::all_of(begin, begin + static_cast<std::ptrdiff_t>(length),
                     [](std::uint8_t w) { return w != 0; });
}

}  // namespace trn::core
