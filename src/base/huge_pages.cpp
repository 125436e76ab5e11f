#include "trn/base/huge_pages.h"

#include <sys/mman.h>

namespace trn {

void* allocateLargeBuffer(std::size_t bytes) {
  if (bytes < kHugePageMinBytes) {
    return ::operator new(bytes);
  }
  void* p = ::operator new (bytes, std::align_val_t{kHugePageBytes});
  // Advice only: without THP (or with it set to "never") the memory is ordinary, which is fine.
  (void)::madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

void freeLargeBuffer(void* p, std::size_t bytes) noexcept {
  // The unsized forms: clang does not declare sized deallocation without -fsized-deallocation.
  if (bytes < kHugePageMinBytes) {
    ::operator delete(p);
    return;
  }
  ::operator delete(p, std::align_val_t{kHugePageBytes});
}

}  // namespace trn
