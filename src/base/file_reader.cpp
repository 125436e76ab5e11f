#include "trn/base/file_reader.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace trn {
namespace {

/// Closes a file descriptor when it goes out of scope.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

Result<std::vector<std::byte>> readFileBounded(const std::string& path, std::uint64_t maxBytes,
                                               std::string_view what) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is rejected below.
  const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) {
    return ioError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    return ioError(fmt::format("{}: cannot stat: {}", path, std::strerror(errno)));
  }
  if (!S_ISREG(info.st_mode)) {
    return ioError(fmt::format("{}: not a regular file; a {} is read from a regular file", path,
                               what));
  }
  const auto size = static_cast<std::uint64_t>(info.st_size);
  if (size > maxBytes) {
    return outOfRange(fmt::format("{}: {} bytes is larger than the largest {} trnsim reads ({} "
                                  "bytes)",
                                  path, size, what, maxBytes));
  }
  std::vector<std::byte> bytes;
  try {
    bytes.resize(static_cast<std::size_t>(size));
  } catch (const std::bad_alloc&) {
    return outOfRange(fmt::format("{}: cannot allocate {} bytes of host memory to read the {}",
                                  path, size, what));
  }
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return ioError(fmt::format("{}: read failed: {}", path, std::strerror(errno)));
    }
    if (n == 0) {
      return ioError(fmt::format("{}: the file shrank while it was read ({} of {} bytes)", path,
                                 done, bytes.size()));
    }
    done += static_cast<std::size_t>(n);
  }
  return bytes;
}

}  // namespace trn
