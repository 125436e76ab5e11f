// Large buffers: blocks from kHugePageMinBytes up are 2 MiB aligned (so that the kernel can back
// them with huge pages), smaller ones are ordinary, and a LargeVector keeps its contents as it
// grows across that size; freed blocks are reused within limits.
#include "trn/base/huge_pages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace trn {
namespace {

TEST(LargeBuffers, LargeBlocksAreHugePageAligned) {
  void* large = allocateLargeBuffer(kHugePageMinBytes);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(large) % kHugePageBytes, 0u);
  freeLargeBuffer(large, kHugePageMinBytes);
  void* small = allocateLargeBuffer(64);
  ASSERT_NE(small, nullptr);
  freeLargeBuffer(small, 64);
}

TEST(LargeBuffers, AVectorKeepsItsContentsAsItGrowsLarge) {
  LargeVector<std::uint32_t> values;
  const std::size_t count = 3 * kHugePageMinBytes / sizeof(std::uint32_t);
  for (std::size_t i = 0; i < count; ++i) {
    values.push_back(static_cast<std::uint32_t>(i * 2654435761U));
  }
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(values.data()) % kHugePageBytes, 0u);
  for (std::size_t i = 0; i < count; i += 4099) {
    ASSERT_EQ(values[i], static_cast<std::uint32_t>(i * 2654435761U)) << i;
  }
  LargeVector<std::uint32_t> copy = values;
  EXPECT_EQ(copy, values);
}

TEST(LargeBuffers, AFreedBlockIsReusedForTheSameOrASlightlySmallerSize) {
  const std::size_t bytes = 11 * kHugePageBytes;
  void* first = allocateLargeBuffer(bytes);
  freeLargeBuffer(first, bytes);
  void* again = allocateLargeBuffer(bytes - kHugePageBytes / 2);
  EXPECT_EQ(again, first);
  // The reused block is larger than asked for; given back, it is kept whole and fits `bytes`.
  freeLargeBuffer(again, bytes - kHugePageBytes / 2);
  void* third = allocateLargeBuffer(bytes);
  EXPECT_EQ(third, first);
  freeLargeBuffer(third, bytes);
}

TEST(LargeBuffers, ABlockMuchLargerThanAskedForIsNotReused) {
  const std::size_t bytes = 16 * kHugePageBytes;
  void* large = allocateLargeBuffer(bytes);
  freeLargeBuffer(large, bytes);
  void* small = allocateLargeBuffer(8 * kHugePageBytes);
  EXPECT_NE(small, large);
  freeLargeBuffer(small, 8 * kHugePageBytes);
}

TEST(LargeBuffers, NoMoreThanTheLimitsAreRetained) {
  const std::size_t before = retainedLargeBufferBytes();
  const std::size_t tooLarge = kMaxRetainedBlockBytes + kHugePageBytes;
  void* large = allocateLargeBuffer(tooLarge);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(large) % kHugePageBytes, 0u);
  freeLargeBuffer(large, tooLarge);
  EXPECT_EQ(retainedLargeBufferBytes(), before);

  // Enough blocks to pass kMaxRetainedBytes, all held at once and then freed.
  const std::size_t bytes = kMaxRetainedBlockBytes / 4;
  std::vector<void*> blocks;
  for (std::size_t held = 0; held <= kMaxRetainedBytes; held += bytes) {
    blocks.push_back(allocateLargeBuffer(bytes));
  }
  for (void* block : blocks) {
    freeLargeBuffer(block, bytes);
  }
  EXPECT_LE(retainedLargeBufferBytes(), kMaxRetainedBytes);
  EXPECT_GE(retainedLargeBufferBytes(), kMaxRetainedBytes - bytes);

  // The longest-kept made way: the block freed last is among those handed out again, the block
  // freed first is not.
  std::vector<void*> again;
  for (std::size_t held = bytes; held <= kMaxRetainedBytes; held += bytes) {
    again.push_back(allocateLargeBuffer(bytes));
  }
  EXPECT_NE(std::find(again.begin(), again.end(), blocks.back()), again.end());
  EXPECT_EQ(std::find(again.begin(), again.end(), blocks.front()), again.end());
  for (void* block : again) {
    freeLargeBuffer(block, bytes);
  }
}

}  // namespace
}  // namespace trn
