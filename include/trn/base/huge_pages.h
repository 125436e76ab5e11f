// Large host buffers backed by transparent huge pages. On this class of machine (a VM) the first
// touch of a 4 KiB page costs microseconds, so faulting in a 500 MB buffer page by page costs as
// much as reading it; 2 MiB pages cut the faults 512-fold. Buffers of at least
// kHugePageMinBytes are aligned to 2 MiB and madvise(MADV_HUGEPAGE)d before first use; smaller
// ones, and hosts without THP, get ordinary memory. Contents are the same either way.
// Large blocks are mapped here and, once freed, kept (up to kMaxRetainedBytes; the longest-kept
// make way for newly freed ones) and handed out again: a compile or a run that follows another
// then finds its pages already faulted in instead of zero-filling them anew. glibc would give
// such blocks back to the kernel at every free; for the smaller ones malloc serves, the first
// large block sets malloc's mmap and trim thresholds to the values glibc's dynamic thresholds
// (mallopt(3)) settle at once a 32 MiB block has been freed, so that freed ones stay in its heap.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace trn {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
inline constexpr std::size_t kHugePageMinBytes = 2 * kHugePageBytes;
/// Freed blocks up to kMaxRetainedBlockBytes are kept for reuse, at most kMaxRetainedBytes in
/// all.
inline constexpr std::size_t kMaxRetainedBlockBytes = std::size_t{256} << 20;
inline constexpr std::size_t kMaxRetainedBytes = std::size_t{512} << 20;

/// Memory for `bytes` (see above), freed with freeLargeBuffer(p, bytes). Throws std::bad_alloc.
/// Thread-safe; a reused block's bytes are whatever its last owner left there.
void* allocateLargeBuffer(std::size_t bytes);
void freeLargeBuffer(void* p, std::size_t bytes) noexcept;
/// The bytes of freed blocks now kept for reuse.
std::size_t retainedLargeBufferBytes();

/// A std::allocator that takes large blocks from allocateLargeBuffer, for vectors that grow to
/// hundreds of megabytes (packed instruction streams, whole files). resize() default-initialises
/// what it adds, so that a buffer about to be filled by read() is not zero-filled first (bytes
/// are then indeterminate; types with initialisers still run them).
template <typename T>
struct LargeBufferAllocator {
  using value_type = T;
  LargeBufferAllocator() = default;
  template <typename U>
  // NOLINTNEXTLINE(google-explicit-constructor): allocators convert implicitly between types
  LargeBufferAllocator(const LargeBufferAllocator<U>& /*other*/) {}

  T* allocate(std::size_t n) {
    if (n > std::size_t(-1) / sizeof(T)) {
      throw std::bad_array_new_length();
    }
    return static_cast<T*>(allocateLargeBuffer(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { freeLargeBuffer(p, n * sizeof(T)); }

  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    std::construct_at(p, std::forward<Args>(args)...);
  }

  template <typename U>
  bool operator==(const LargeBufferAllocator<U>& /*other*/) const {
    return true;
  }
};

/// A vector whose large storage is huge-page backed and whose resize() does not zero-fill.
template <typename T>
using LargeVector = std::vector<T, LargeBufferAllocator<T>>;

}  // namespace trn
