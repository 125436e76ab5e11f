// The seam between the scheduler and a system's fabric: when every member of a replica group (every
// rank of the run by default) has reached its k-th `collective` instruction (isa/instrs/control.h),
// the scheduler hands the members' calls to a
// CollectiveService, which moves and reduces the data in the ranks' device memories and says
// how long the operation takes, and what DMA work it does on each rank's chip (the scheduler
// shares that with the rank's own DMA). The fabric module implements it
// (fabric/kernel_collectives.h); core only knows this interface, so the dependency points downward.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "trn/base/status.h"
#include "trn/core/device_memory.h"
#include "trn/isa/instrs/control.h"

namespace trn::core {

/// One rank's part of a collective: its instruction and where its operands sit.
struct CollectiveCall {
  const isa::Collective* instr = nullptr;
  std::int64_t rank = 0;           ///< the rank of the run (its chip), whatever its group
  DeviceMemory* device = nullptr;  ///< the rank's chip's HBM
  std::int64_t srcAddress = 0;     ///< device addresses of the contiguous ranges
  std::int64_t dstAddress = 0;
  std::int64_t srcBytes = 0;
  std::int64_t dstBytes = 0;
  std::int64_t countsAddress = -1;  ///< all_to_allv: the device address of its uint32 counts
  std::int64_t countsElements = 0;
  std::int64_t start = 0;  ///< ps: when the group's last member arrived (groups in flight overlap)
};

/// The DMA work a collective does on one rank's chip that the rank's kernel competes for: bytes
/// its streams move through the DMA engines of the rank's core, and bytes it reads and writes in
/// the HBM stack of the rank's core (where its operands lie).
struct CollectiveChipLoad {
  double engineBytes = 0;
  double hbmBytes = 0;
};

class CollectiveService {
 public:
  virtual ~CollectiveService() = default;
  /// Runs one collective over a group whose position i is calls[i] (rank calls[i].rank of the
  /// run); with `withData`, moves and reduces the data in the ranks' devices. A group of one is a
  /// copy of src to dst that takes no time. Returns its duration in picoseconds, or an error that
  /// names what does not match (operations, types or sizes that differ between the ranks).
  [[nodiscard]] virtual Result<std::int64_t> run(std::span<const CollectiveCall> calls,
                                                 bool withData) = 0;
  /// Per call of the last run() (calls[i]'s at i), the load its collective puts on that rank's
  /// DMA engines and HBM stack, which a timed run shares with the rank's own DMA; empty: none.
  [[nodiscard]] virtual std::vector<CollectiveChipLoad> lastLoads() const { return {}; }
};

}  // namespace trn::core
