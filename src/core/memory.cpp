#include "trn/core/memory.h"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "trn/base/check.h"

namespace trn::core {

Result<LazyBytes> LazyBytes::create(std::size_t size, std::string_view what) {
  LazyBytes bytes;
  if (size == 0) {
    return bytes;
  }
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    return outOfRange(fmt::format("cannot reserve {} bytes ({:.3g} GiB) of host address space for "
                                  "{}: {}",
                                  size, static_cast<double>(size) / (1u << 30), what,
                                  std::strerror(errno)));
  }
  bytes.data_ = static_cast<std::byte*>(p);
  bytes.size_ = size;
  return bytes;
}

LazyBytes::LazyBytes(LazyBytes&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

LazyBytes& LazyBytes::operator=(LazyBytes&& other) noexcept {
  const LazyBytes old(std::move(*this));  // unmapped when it goes out of scope
  data_ = std::exchange(other.data_, nullptr);
  size_ = std::exchange(other.size_, 0);
  return *this;
}

LazyBytes::~LazyBytes() {
  if (data_ != nullptr) {
    ::munmap(data_, size_);
  }
}

Result<TrackedBytes> TrackedBytes::create(std::size_t size, bool trackWrites,
                                          std::string_view what) {
  TrackedBytes memory;
  TRN_ASSIGN_OR_RETURN(memory.bytes_, LazyBytes::create(size, what));
  if (trackWrites) {
    TRN_ASSIGN_OR_RETURN(memory.written_,
                         LazyBytes::create(size, fmt::format("the poison shadow of {}", what)));
  }
  return memory;
}

void TrackedBytes::markWritten(std::size_t offset, std::size_t length) {
  TRN_DCHECK(offset <= size() && length <= size() - offset);
  if (tracking()) {
    std::fill_n(written_.data() + offset, length, std::byte{1});
  }
}

std::optional<std::size_t> TrackedBytes::firstUnwritten(std::size_t offset,
                                                        std::size_t length) const {
  TRN_DCHECK(offset <= size() && length <= size() - offset);
  if (!tracking()) {
    return std::nullopt;
  }
  const std::byte* begin = written_.data() + offset;
  const std::byte* end = begin + length;
  const std::byte* hole = std::find(begin, end, std::byte{0});
  if (hole == end) {
    return std::nullopt;
  }
  return offset + static_cast<std::size_t>(hole - begin);
}

}  // namespace trn::core
