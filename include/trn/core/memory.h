// The memories of one NeuronCore as flat byte arrays: SBUF and PSUM (partition-major: all bytes
// of partition 0, then partition 1, ...) and the program's HBM tensors. Each memory can keep a
// shadow of which bytes were ever written, so that reads of uninitialised data ("poison") are
// reported instead of silently returning stale values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "trn/base/status.h"

namespace trn::core {

/// Zero-filled host memory that is committed only when touched: an anonymous private mapping
/// without swap reservation, so a program may declare the whole 96 GiB of a chip's HBM and pay
/// only for the pages it uses. Move-only.
class LazyBytes {
 public:
  LazyBytes() = default;
  /// Maps `size` bytes; the error names `what` and the size when the host refuses.
  static Result<LazyBytes> create(std::size_t size, std::string_view what);
  LazyBytes(LazyBytes&& other) noexcept;
  LazyBytes& operator=(LazyBytes&& other) noexcept;
  LazyBytes(const LazyBytes&) = delete;
  LazyBytes& operator=(const LazyBytes&) = delete;
  ~LazyBytes();

  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] std::byte* data() { return data_; }
  [[nodiscard]] const std::byte* data() const { return data_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

/// A zero-filled byte array with an optional written-bytes shadow (one flag per byte).
class TrackedBytes {
 public:
  TrackedBytes() = default;
  /// `what` names the memory in an allocation error ("SBUF", "HBM tensor 'x'").
  static Result<TrackedBytes> create(std::size_t size, bool trackWrites, std::string_view what);

  [[nodiscard]] std::size_t size() const { return bytes_.size(); }
  [[nodiscard]] std::byte* data() { return bytes_.data(); }
  [[nodiscard]] const std::byte* data() const { return bytes_.data(); }

  /// Marks [offset, offset + length) as written (no-op without tracking).
  void markWritten(std::size_t offset, std::size_t length);

  /// The first byte of [offset, offset + length) that was never written, or nullopt when all were
  /// (always nullopt without tracking).
  [[nodiscard]] std::optional<std::size_t> firstUnwritten(std::size_t offset,
                                                          std::size_t length) const;

  /// Whether writes are tracked.
  [[nodiscard]] bool tracking() const { return written_.size() != 0; }

 private:
  LazyBytes bytes_;
  LazyBytes written_;  ///< one flag per byte; empty when not tracking
};

}  // namespace trn::core
