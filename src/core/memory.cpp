#include "trn/core/memory.h"

#include <algorithm>
#include <new>

#include "trn/base/check.h"

namespace trn::core {
namespace {

template <typename T>
T* zeroedArray(std::size_t size) {
  void* p = std::calloc(std::max<std::size_t>(size, 1), sizeof(T));
  if (p == nullptr) {
    throw std::bad_alloc();
  }
  return static_cast<T*>(p);
}

}  // namespace

TrackedBytes::TrackedBytes(std::size_t size, bool trackWrites)
    : size_(size),
      bytes_(zeroedArray<std::byte>(size)),
      written_(trackWrites ? zeroedArray<std::uint8_t>(size) : nullptr) {}

void TrackedBytes::markWritten(std::size_t offset, std::size_t length) {
  TRN_DCHECK(offset + length <= size_);
  if (tracking()) {
    std::fill_n(written_.get() + offset, length, std::uint8_t{1});
  }
}

bool TrackedBytes::allWritten(std::size_t offset, std::size_t length) const {
  TRN_DCHECK(offset + length <= size_);
  if (!tracking()) {
    return true;
  }
  const std::uint8_t* begin = written_.get() + offset;
  return std::all_of(begin, begin + length, [](std::uint8_t w) { return w != 0; });
}

}  // namespace trn::core
