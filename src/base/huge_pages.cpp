#include "trn/base/huge_pages.h"

#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <new>
#include <vector>

namespace trn {
namespace {

/// A large block: where it starts and how many bytes it spans (its requested size rounded up to
/// whole huge pages).
struct Block {
  void* start = nullptr;
  std::size_t capacity = 0;
};

/// glibc's largest dynamic mmap threshold (mallopt(3): DEFAULT_MMAP_THRESHOLD_MAX on 64-bit).
constexpr int kMallocMmapThreshold = 32 << 20;

std::size_t roundUpToHugePages(std::size_t bytes) {
  if (bytes > std::size_t(-1) - 2 * kHugePageBytes) {  // room for the alignment slack too
    throw std::bad_array_new_length();
  }
  return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
}

/// Freed large blocks kept for reuse, and the reused blocks now in use (whose capacity may
/// exceed what their owner asked for and will give back).
class RetainedBlocks {
 public:
  /// A retained block of at least `capacity` bytes and at most a quarter more, the smallest one.
  void* take(std::size_t capacity) {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto best = retained_.end();
    for (auto it = retained_.begin(); it != retained_.end(); ++it) {
      if (it->capacity >= capacity && it->capacity <= capacity + capacity / 4 &&
          (best == retained_.end() || it->capacity < best->capacity)) {
        best = it;
      }
    }
    if (best == retained_.end()) {
      return nullptr;
    }
    inUse_.push_back(*best);  // if this throws, the block stays retained
    const Block block = *best;
    retained_.erase(best);
    retainedBytes_ -= block.capacity;
    return block.start;
  }

  /// Takes back the block at `start` (asked for as `capacity` bytes, rounded): keeps it for
  /// reuse, unmapping the longest-kept blocks if the cache would pass kMaxRetainedBytes, or
  /// unmaps it if it is larger than kMaxRetainedBlockBytes.
  void giveBack(void* start, std::size_t capacity) noexcept {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto reused = std::find_if(inUse_.begin(), inUse_.end(),
                                     [&](const Block& b) { return b.start == start; });
    if (reused != inUse_.end()) {
      capacity = reused->capacity;
      inUse_.erase(reused);
    }
    if (capacity > kMaxRetainedBlockBytes) {
      (void)::munmap(start, capacity);
      return;
    }
    while (retainedBytes_ + capacity > kMaxRetainedBytes) {
      (void)::munmap(retained_.front().start, retained_.front().capacity);
      retainedBytes_ -= retained_.front().capacity;
      retained_.erase(retained_.begin());
    }
    try {
      retained_.push_back(Block{start, capacity});
      retainedBytes_ += capacity;
    } catch (const std::bad_alloc&) {
      (void)::munmap(start, capacity);  // no room to note it
    }
  }

  std::size_t retainedBytes() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return retainedBytes_;
  }

 private:
  std::mutex mutex_;
  std::vector<Block> retained_;
  std::vector<Block> inUse_;
  std::size_t retainedBytes_ = 0;
};

/// `capacity` bytes (a multiple of kHugePageBytes) of fresh zero pages mapped at a
/// kHugePageBytes boundary and advised to be huge pages.
void* mapHugePageAligned(std::size_t capacity) {
  const std::size_t span = capacity + kHugePageBytes;
  void* mapped = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) {
    throw std::bad_alloc();
  }
  const auto at = reinterpret_cast<std::uintptr_t>(mapped);
  const std::uintptr_t aligned = (at + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  if (aligned > at) {
    (void)::munmap(mapped, aligned - at);
  }
  const std::uintptr_t end = aligned + capacity;
  if (end < at + span) {
    (void)::munmap(reinterpret_cast<void*>(end), at + span - end);
  }
  void* block = reinterpret_cast<void*>(aligned);
  // Advice only: without THP (or with it set to "never") the memory is ordinary, which is fine.
  (void)::madvise(block, capacity, MADV_HUGEPAGE);
  return block;
}

/// Never destroyed: vectors in static storage may free their blocks after exit begins. Made
/// with the first large block, when malloc is also set to its steady state (see the header).
RetainedBlocks& retainedBlocks() {
  static auto* blocks = [] {
    (void)::mallopt(M_MMAP_THRESHOLD, kMallocMmapThreshold);
    (void)::mallopt(M_TRIM_THRESHOLD, 2 * kMallocMmapThreshold);
    return new RetainedBlocks;
  }();
  return *blocks;
}

}  // namespace

void* allocateLargeBuffer(std::size_t bytes) {
  if (bytes < kHugePageMinBytes) {
    return ::operator new(bytes);
  }
  const std::size_t capacity = roundUpToHugePages(bytes);
  if (void* reused = retainedBlocks().take(capacity)) {
    return reused;
  }
  return mapHugePageAligned(capacity);
}

void freeLargeBuffer(void* p, std::size_t bytes) noexcept {
  // The unsized form: clang does not declare sized deallocation without -fsized-deallocation.
  if (bytes < kHugePageMinBytes) {
    ::operator delete(p);
    return;
  }
  retainedBlocks().giveBack(p, roundUpToHugePages(bytes));
}

std::size_t retainedLargeBufferBytes() { return retainedBlocks().retainedBytes(); }

}  // namespace trn
