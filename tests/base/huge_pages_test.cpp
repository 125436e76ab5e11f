// Large buffers: blocks from kHugePageMinBytes up are 2 MiB aligned (so that the kernel can back
// them with huge pages), smaller ones are ordinary, and a LargeVector keeps its contents as it
// grows across that size.
#include "trn/base/huge_pages.h"

#include <gtest/gtest.h>

#include <cstdint>

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

}  // namespace
}  // namespace trn
