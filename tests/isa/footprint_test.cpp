// Footprint overlap against brute force: random access patterns (contiguous, strided, multi-row,
// broadcast, negative strides; SBUF and HBM) are expanded byte by byte and compared with the
// exact test, including its arithmetic fast path for row-shaped patterns.
#include "trn/isa/footprint.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace trn::isa {
namespace {

/// Every (partition, byte) an access touches; HBM uses partition 0.
std::set<std::pair<std::int64_t, std::int64_t>> bytesOf(const AccessPattern& ap) {
  std::set<std::pair<std::int64_t, std::int64_t>> out;
  const std::int64_t size = byteSize(ap.dtype);
  for (std::int64_t p = 0; p < ap.partitionCount; ++p) {
    for (std::int64_t i = 0; i < ap.freeSize(); ++i) {
      std::int64_t at = ap.freeByteOffset(i);
      std::int64_t partition = ap.partitionStart + p;
      if (ap.memory == Memory::kHbm) {
        at += p * ap.partitionStride * size;
        partition = 0;
      }
      for (std::int64_t b = 0; b < size; ++b) {
        out.emplace(partition, at + b);
      }
    }
  }
  return out;
}

AccessPattern randomPattern(std::mt19937& rng, Memory memory) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  AccessPattern ap;
  ap.memory = memory;
  ap.dtype = pick(0, 1) ? DType::kFp32 : DType::kBf16;
  ap.numDims = pick(1, 3);
  const int shape = pick(0, 3);  // 0: contiguous rows, 1: strided, 2: anything, 3: broadcast
  for (int d = 0; d < ap.numDims; ++d) {
    Dim& dim = ap.dims[static_cast<std::size_t>(d)];
    dim.count = pick(1, 6);
    dim.stride = shape == 0   ? (d == ap.numDims - 1 ? 1 : pick(6, 16))
                 : shape == 1 ? pick(1, 8)
                 : shape == 2 ? pick(-4, 9)
                              : pick(0, 1);
  }
  ap.offset = 2 * pick(40, 80) * byteSize(ap.dtype);
  if (memory == Memory::kHbm) {
    ap.tensor = 0;
    ap.partitionCount = pick(1, 5);
    ap.partitionStride = pick(0, 3) == 0 ? pick(1, 8) : pick(20, 60);
  } else {
    ap.partitionStart = pick(0, 3);
    ap.partitionCount = pick(1, 3);
  }
  return ap;
}

TEST(Footprint, OverlapMatchesBruteForceOnRandomPatterns) {
  std::mt19937 rng(7);
  int overlapping = 0;
  int rowShaped = 0;
  for (int trial = 0; trial < 6000; ++trial) {
    const Memory memory = trial % 2 ? Memory::kHbm : Memory::kSbuf;
    const AccessPattern a = randomPattern(rng, memory);
    const AccessPattern b = randomPattern(rng, memory);
    const Footprint fa = Footprint::of(a, true);
    const Footprint fb = Footprint::of(b, false);
    rowShaped += fa.rows.rows > 0 && fb.rows.rows > 0 ? 1 : 0;
    const auto bytesA = bytesOf(a);
    const auto bytesB = bytesOf(b);
    bool expected = false;
    for (const auto& byte : bytesA) {
      if (bytesB.contains(byte)) {
        expected = true;
        break;
      }
    }
    const std::optional<ByteInterval> found = firstOverlap(fa, fb);
    ASSERT_EQ(found.has_value(), expected)
        << "trial " << trial << ": " << formatAccessPattern(a, [](auto) { return "t"; })
        << " vs " << formatAccessPattern(b, [](auto) { return "t"; });
    if (found) {
      ++overlapping;
      ASSERT_LT(found->begin, found->end);
      // Every byte of the reported range is touched by both, in a common partition.
      const std::int64_t partition =
          memory == Memory::kHbm ? 0 : std::max(a.partitionStart, b.partitionStart);
      for (std::int64_t byte = found->begin; byte < found->end; ++byte) {
        ASSERT_TRUE(bytesA.contains({partition, byte}) && bytesB.contains({partition, byte}))
            << "trial " << trial << " byte " << byte;
      }
    }
  }
  EXPECT_GT(overlapping, 500);
  EXPECT_GT(rowShaped, 500);  // the fast path is exercised
}

// A transposed HBM read (partitions one element apart, the free dimension a row apart) touches
// the same bytes as contiguous runs: it is row-shaped, so the dependency analysis and the race
// detector compare it arithmetically, even against rows of another stride.
TEST(Footprint, TransposedReadIsRowShaped) {
  AccessPattern transposed;
  transposed.memory = Memory::kHbm;
  transposed.tensor = 0;
  transposed.dtype = DType::kFp32;
  transposed.partitionCount = 128;
  transposed.partitionStride = 1;
  transposed.numDims = 1;
  transposed.dims[0] = {1024, 64};  // 64 rows of a [*, 1024] tensor, 128 columns each
  transposed.offset = 4 * 256;
  const Footprint ft = Footprint::of(transposed, false);
  EXPECT_EQ(ft.rows.rows, 64);
  EXPECT_EQ(ft.rows.stride, 4 * 1024);
  EXPECT_EQ(ft.rows.length, 4 * 128);
  EXPECT_EQ(ft.rows.first, 4 * 256);

  AccessPattern rows;  // rows 32..35 of the same tensor, every other one
  rows.memory = Memory::kHbm;
  rows.tensor = 0;
  rows.dtype = DType::kFp32;
  rows.partitionCount = 2;
  rows.partitionStride = 2 * 1024;
  rows.numDims = 1;
  rows.dims[0] = {1, 1024};
  rows.offset = 4 * 32 * 1024;
  const Footprint fr = Footprint::of(rows, true);
  EXPECT_FALSE(overlapNeedsPatterns(ft, fr));
  const std::optional<ByteInterval> overlap = firstOverlap(ft, fr);
  ASSERT_TRUE(overlap.has_value());
  EXPECT_EQ(overlap->begin, 4 * (32 * 1024 + 256));
  EXPECT_EQ(overlap->end, 4 * (32 * 1024 + 256 + 128));
  rows.offset = 4 * 65 * 1024;  // rows 65 and 67: past the transposed block's 64 rows
  EXPECT_FALSE(firstOverlap(ft, Footprint::of(rows, true)).has_value());
}

}  // namespace
}  // namespace trn::isa
