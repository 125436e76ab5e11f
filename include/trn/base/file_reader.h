// Reading input files with a bound: every reader of user files (programs, .npy arrays, chip
// YAML) goes through BoundedFile, which accepts regular files only (not /dev/zero, pipes or
// directories), checks the size against the caller's limit before anything is allocated, and
// reports an allocation failure with the size it asked for. A file is read whole
// (readFileBounded) or range by range (BoundedFile::read, for a chip program whose cores are
// decoded on several threads without holding the whole file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "trn/base/huge_pages.h"
#include "trn/base/status.h"

namespace trn {

/// Bytes read from a file (a buffer not zero-filled before the read).
using FileBytes = LargeVector<std::byte>;

/// Bytes that are read by range: held in memory, or read from a file when asked for.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  [[nodiscard]] virtual std::uint64_t size() const = 0;
  /// The `length` bytes at `offset`, which must lie within size(): a view of memory the source
  /// holds, or of `buffer`, which the call fills. Fails only if reading the file fails.
  virtual Result<std::span<const std::byte>> read(std::uint64_t offset, std::size_t length,
                                                  FileBytes& buffer) const = 0;
};

/// A ByteSource over bytes the caller keeps alive.
class MemoryByteSource final : public ByteSource {
 public:
  explicit MemoryByteSource(std::span<const std::byte> bytes) : bytes_(bytes) {}
  [[nodiscard]] std::uint64_t size() const override { return bytes_.size(); }
  Result<std::span<const std::byte>> read(std::uint64_t offset, std::size_t length,
                                          FileBytes& buffer) const override;

 private:
  std::span<const std::byte> bytes_;
};

/// An open regular file of at most the caller's bound. Reads of several threads may overlap.
class BoundedFile final : public ByteSource {
 public:
  /// Opens `path`, which must be a regular file of at most `maxBytes`. `what` names the kind of
  /// file in messages ("program", ".npy file", "chip description").
  static Result<std::unique_ptr<BoundedFile>> open(const std::string& path, std::uint64_t maxBytes,
                                                   std::string_view what);
  BoundedFile(const BoundedFile&) = delete;
  BoundedFile& operator=(const BoundedFile&) = delete;
  ~BoundedFile() override;

  [[nodiscard]] std::uint64_t size() const override { return size_; }
  Result<std::span<const std::byte>> read(std::uint64_t offset, std::size_t length,
                                          FileBytes& buffer) const override;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  BoundedFile(int fd, std::uint64_t size, std::string path, std::string_view what);
  int fd_;
  std::uint64_t size_;
  std::string path_;
  std::string what_;
};

/// The bytes of the regular file `path`, which must hold at most `maxBytes` (as
/// BoundedFile::open).
Result<FileBytes> readFileBounded(const std::string& path, std::uint64_t maxBytes,
                                  std::string_view what);

}  // namespace trn
