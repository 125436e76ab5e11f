#include "trn/base/file_reader.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <utility>

#include "trn/base/check.h"

namespace trn {

Result<std::span<const std::byte>> MemoryByteSource::read(std::uint64_t offset, std::size_t length,
                                                          FileBytes& /*buffer*/) const {
  TRN_CHECK(offset <= bytes_.size() && length <= bytes_.size() - offset)
      << "read of " << length << " bytes at " << offset << " from " << bytes_.size();
  return bytes_.subspan(static_cast<std::size_t>(offset), length);
}

Result<std::unique_ptr<BoundedFile>> BoundedFile::open(const std::string& path,
                                                       std::uint64_t maxBytes,
                                                       std::string_view what) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is rejected below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return ioError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  }
  struct stat info {};
  const int statted = ::fstat(fd, &info);
  // Owned from here, so that every return below closes it.
  std::unique_ptr<BoundedFile> file(
      new BoundedFile(fd, static_cast<std::uint64_t>(info.st_size), path, what));
  if (statted != 0) {
    return ioError(fmt::format("{}: cannot stat: {}", path, std::strerror(errno)));
  }
  if (!S_ISREG(info.st_mode)) {
    return ioError(fmt::format("{}: not a regular file; a {} is read from a regular file", path,
                               what));
  }
  if (file->size_ > maxBytes) {
    return outOfRange(
        fmt::format("{}: {} bytes is larger than the largest {} trnsim reads ({} bytes)", path,
                    file->size_, what, maxBytes));
  }
  return file;
}

BoundedFile::BoundedFile(int fd, std::uint64_t size, std::string path, std::string_view what)
    : fd_(fd), size_(size), path_(std::move(path)), what_(what) {}

BoundedFile::~BoundedFile() { ::close(fd_); }

Result<std::span<const std::byte>> BoundedFile::read(std::uint64_t offset, std::size_t length,
                                                     FileBytes& buffer) const {
  TRN_CHECK(offset <= size_ && length <= size_ - offset)
      << "read of " << length << " bytes at " << offset << " from " << size_;
  try {
    buffer.resize(length);
  } catch (const std::bad_alloc&) {
    return outOfRange(fmt::format("{}: cannot allocate {} bytes of host memory to read the {}",
                                  path_, length, what_));
  }
  std::size_t done = 0;
  while (done < length) {
    const ssize_t n =
        ::pread(fd_, buffer.data() + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return ioError(fmt::format("{}: read failed: {}", path_, std::strerror(errno)));
    }
    if (n == 0) {
      return ioError(fmt::format("{}: the file shrank while it was read ({} of {} bytes)", path_,
                                 offset + done, size_));
    }
    done += static_cast<std::size_t>(n);
  }
  return std::span<const std::byte>(buffer.data(), length);
}

Result<FileBytes> readFileBounded(const std::string& path, std::uint64_t maxBytes,
                                  std::string_view what) {
  TRN_ASSIGN_OR_RETURN(const std::unique_ptr<BoundedFile> file,
                       BoundedFile::open(path, maxBytes, what));
  FileBytes bytes;
  TRN_RETURN_IF_ERROR(file->read(0, static_cast<std::size_t>(file->size()), bytes).status());
  return bytes;
}

}  // namespace trn
