// A chip's device memory (HBM) as one address space: `stacks` stacks of `stackBytes` each, stack s
// holding addresses [s * stackBytes, (s + 1) * stackBytes). Program tensors live at device
// addresses the runtime binds (CoreOptions::tensorAddresses), so two cores can share a tensor.
// Host memory is committed only when touched (memory.h LazyBytes), so a whole 96 GiB Trn2 device
// costs nothing until it is used; in timing-only mode the space has addresses and no bytes.
// Allocation is a bump pointer per stack with 64-byte alignment (what a DMA descriptor wants);
// the device is loaded once per run, so nothing is freed but an operation's scratch (popTo).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/core/memory.h"

namespace trn::core {

/// Alignment of every device allocation, in bytes.
inline constexpr std::int64_t kDeviceAlignment = 64;

class DeviceMemory {
 public:
  /// A device of `stacks` x `stackBytes` bytes. `withData`: map host memory for the values (the
  /// modes with data); `trackWrites`: keep the poison shadow as well.
  static Result<std::shared_ptr<DeviceMemory>> create(std::int64_t stackBytes, std::int64_t stacks,
                                                      bool withData, bool trackWrites);

  [[nodiscard]] std::int64_t capacity() const { return stackBytes_ * stacks_; }
  [[nodiscard]] std::int64_t stackBytes() const { return stackBytes_; }
  [[nodiscard]] std::int64_t stacks() const { return stacks_; }
  /// The stack holding `address` (which must be inside the device).
  [[nodiscard]] std::int64_t stackOf(std::int64_t address) const { return address / stackBytes_; }

  /// Reserves `bytes` (at least one) in stack `stack`; returns the device address. The error
  /// names `what` and the stack's free space when it is full.
  Result<std::int64_t> allocate(std::int64_t bytes, std::int64_t stack, std::string_view what);
  /// The next address `stack` allocates at, and giving back everything allocated in it since
  /// that address was the top (scratch that lives for one operation, such as a collective's).
  [[nodiscard]] std::int64_t top(std::int64_t stack) const {
    return next_[static_cast<std::size_t>(stack)];
  }
  void popTo(std::int64_t stack, std::int64_t top) { next_[static_cast<std::size_t>(stack)] = top; }
  /// Bytes allocated so far in `stack`.
  [[nodiscard]] std::int64_t used(std::int64_t stack) const {
    return next_[static_cast<std::size_t>(stack)] - stack * stackBytes_;
  }

  /// Whether the device holds values (false in timing-only mode).
  [[nodiscard]] bool hasData() const { return bytes_.size() != 0; }
  /// The values, indexed by device address (empty without data).
  [[nodiscard]] TrackedBytes& bytes() { return bytes_; }
  [[nodiscard]] const TrackedBytes& bytes() const { return bytes_; }

  /// Copies `data` to `address` and marks it written (no-op without data).
  Status write(std::int64_t address, std::span<const std::byte> data);
  /// The bytes at [address, address + size) (an error without data).
  [[nodiscard]] Result<std::span<const std::byte>> read(std::int64_t address,
                                                        std::int64_t size) const;

 private:
  DeviceMemory(std::int64_t stackBytes, std::int64_t stacks);
  [[nodiscard]] Status checkRange(std::int64_t address, std::int64_t size) const;

  std::int64_t stackBytes_;
  std::int64_t stacks_;
  std::vector<std::int64_t> next_;  ///< per stack, the next free address
  TrackedBytes bytes_;
};

}  // namespace trn::core
