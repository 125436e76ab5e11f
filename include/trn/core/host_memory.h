// How much host memory a functional run needs, checked before it starts. Device memory is mapped
// lazily (memory.h), so declaring a large HBM tensor costs nothing; what a run touches must still
// fit in the host. The estimate is an upper bound from the program alone: input tensors in full,
// the span every other tensor's accesses cover, SBUF and PSUM partitions in use, the poison
// shadow, and the largest staging buffer one instruction needs. A run that would exceed what the
// host has available fails up front with both figures, instead of being killed by the kernel.
#pragma once

#include <cstdint>
#include <optional>

#include "trn/base/status.h"
#include "trn/isa/core_limits.h"
#include "trn/isa/program.h"

namespace trn::core {

/// Upper bounds, in bytes, of the host memory a functional run of a program touches.
struct HostMemoryNeed {
  std::uint64_t hbm = 0;      ///< HBM tensors
  std::uint64_t onChip = 0;   ///< SBUF and PSUM
  std::uint64_t shadow = 0;   ///< the poison shadow (one flag per byte), when poison is on
  std::uint64_t staging = 0;  ///< the largest operand buffers of one instruction

  [[nodiscard]] std::uint64_t total() const { return hbm + onChip + shadow + staging; }
};

/// The estimate for a verified `program`.
HostMemoryNeed hostMemoryNeeded(const isa::Program& program, const isa::CoreLimits& limits,
                                bool poison);

/// Memory the host can still give without swapping (MemAvailable in /proc/meminfo), or nullopt
/// when the host does not say.
std::optional<std::uint64_t> availableHostMemory();

/// An error naming both figures when the estimate exceeds the available memory.
Status checkHostMemory(const isa::Program& program, const isa::CoreLimits& limits, bool poison);

}  // namespace trn::core
