// The memories of one NeuronCore as flat byte arrays: SBUF and PSUM (partition-major: all bytes
// of partition 0, then partition 1, ...) and the program's HBM tensors. Each memory can keep a
// shadow of which bytes were ever written, so that reads of uninitialised data ("poison") are
// reported instead of silently returning stale values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace trn::core {

/// A byte array with an optional written-bytes shadow.
class TrackedBytes {
 public:
  TrackedBytes() = default;
  TrackedBytes(std::size_t size, bool trackWrites);

  [[nodiscard]] std::size_t size() const { return bytes_.size(); }
  [[nodiscard]] std::byte* data() { return bytes_.data(); }
  [[nodiscard]] const std::byte* data() const { return bytes_.data(); }

  /// Marks [offset, offset + length) as written (no-op without tracking).
  void markWritten(std::size_t offset, std::size_t length);

  /// True if every byte of [offset, offset + length) was written (always true without tracking).
  [[nodiscard]] bool allWritten(std::size_t offset, std::size_t length) const;

  /// Whether writes are tracked.
  [[nodiscard]] bool tracking() const { return !written_.empty(); }

 private:
  std::vector<std::byte> bytes_;
  std::vector<std::uint8_t> written_;
};

}  // namespace trn::core
