// Index patterns: the generated-value operand of iota and affine_select (nki.isa `pattern`). Like
// the free part of an access pattern it is up to four (step, count) pairs, outermost first, but it
// describes values rather than memory: element number (i0, i1, i2, i3) of a partition gets
// sum(step_k * i_k). Program text writes it as the access-pattern pair list, e.g.
// [[-1,64],[1,128]].
#pragma once

#include <array>
#include <cstdint>

#include "trn/isa/access_pattern.h"

namespace trn::isa {

/// Up to kMaxFreeDims (step, count) pairs; `Dim::stride` holds the step.
struct IndexPattern {
  std::array<Dim, kMaxFreeDims> dims{};
  std::int32_t numDims = 1;

  /// Number of values the pattern generates per partition (the product of the counts).
  [[nodiscard]] std::int64_t size() const {
    std::int64_t n = 1;
    for (int d = 0; d < numDims; ++d) {
      n *= dims[static_cast<std::size_t>(d)].count;
    }
    return n;
  }

  /// sum(step_k * i_k) for the element with row-major flat index `flat` (0 <= flat < size()),
  /// computed in 64 bits (callers wrap to the hardware's 32-bit arithmetic).
  [[nodiscard]] std::int64_t valueAt(std::int64_t flat) const {
    std::int64_t value = 0;
    for (int d = numDims - 1; d >= 0; --d) {
      const Dim& dim = dims[static_cast<std::size_t>(d)];
      value += (flat % dim.count) * dim.stride;
      flat /= dim.count;
    }
    return value;
  }

  friend bool operator==(const IndexPattern&, const IndexPattern&) = default;
};

}  // namespace trn::isa
