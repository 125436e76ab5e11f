// The memories of one NeuronCore as flat byte arrays: SBUF and PSUM (partition-major: all bytes
// of partition 0, then partition 1, ...) and the program's HBM tensors. Each memory can keep a
// shadow of which bytes were ever written, so that reads of uninitialised data ("poison") are
// reported instead of silently returning stale values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

namespace trn::core {

/// A zero-filled byte array with an optional written-bytes shadow. Storage comes from calloc, so
/// a large memory costs nothing until its pages are touched: a 28 MiB SBUF of which a kernel uses
/// a few tiles is cheap to create.
class TrackedBytes {
 public:
  TrackedBytes() = default;
  TrackedBytes(std::size_t size, bool trackWrites);

  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] std::byte* data() { return bytes_.get(); }
  [[nodiscard]] const std::byte* data() const { return bytes_.get(); }

  /// Marks [offset, offset + length) as written (no-op without tracking).
  void markWritten(std::size_t offset, std::size_t length);

  /// True if every byte of [offset, offset + length) was written (always true without tracking).
  [[nodiscard]] bool allWritten(std::size_t offset, std::size_t length) const;

  /// Whether writes are tracked.
  [[nodiscard]] bool tracking() const { return written_ != nullptr; }

 private:
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::size_t size_ = 0;
  std::unique_ptr<std::byte, Free> bytes_;
  std::unique_ptr<std::uint8_t, Free> written_;  ///< one flag per byte; null when not tracking
};

}  // namespace trn::core
