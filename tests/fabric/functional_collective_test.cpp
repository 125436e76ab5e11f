// Collectives on data: every operation by every algorithm that applies, on 2 to 16 chips, against
// a float64 reference (sums within the rounding the schedule does, max and min and every data
// movement exact); the documented reduction orders reproduced bit for bit; plans whose data
// moves are unordered caught; bad inputs named.
#include "trn/fabric/functional_collective.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "fabric_fixture.h"
#include "trn/numerics/convert.h"

namespace trn::fabric {
namespace {

using testing::chipWithMemory;
using testing::grid;
using testing::ring;
using testing::topologyOf;

CollectiveRequest request(CollectiveOp op, std::vector<std::int64_t> group, std::int64_t count,
                          DType dtype) {
  CollectiveRequest r;
  r.op = op;
  r.group = std::move(group);
  r.elementBytes = byteSize(dtype);
  r.bytes = count * r.elementBytes;
  return r;
}

std::vector<std::int64_t> firstChips(std::int64_t n) {
  std::vector<std::int64_t> g(static_cast<std::size_t>(n));
  std::iota(g.begin(), g.end(), 0);
  return g;
}

/// `count` values of `dtype` per rank: random in [-1, 1) or, with `integers`, small whole
/// numbers (whose sums every order gets exactly).
std::vector<std::vector<std::byte>> inputsFor(std::size_t ranks, std::int64_t count, DType dtype,
                                              bool integers = false, unsigned seed = 7) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);
  std::vector<std::vector<std::byte>> inputs(ranks);
  const auto size = static_cast<std::size_t>(byteSize(dtype));
  for (auto& in : inputs) {
    in.resize(static_cast<std::size_t>(count) * size);
    for (std::int64_t e = 0; e < count; ++e) {
      const float v = integers ? std::round(uniform(rng) * 8) : uniform(rng);
      const std::uint32_t bits = encodeFloat(v, dtype);
      std::memcpy(in.data() + static_cast<std::size_t>(e) * size, &bits, size);
    }
  }
  return inputs;
}

double valueAt(const std::vector<std::byte>& bytes, std::int64_t e, DType dtype) {
  std::uint32_t bits = 0;
  const auto size = static_cast<std::size_t>(byteSize(dtype));
  std::memcpy(&bits, bytes.data() + static_cast<std::size_t>(e) * size, size);
  return decodeFloat(bits, dtype);
}

std::vector<std::byte> slice(const std::vector<std::byte>& v, std::int64_t begin,
                             std::int64_t bytes) {
  return {v.begin() + begin, v.begin() + begin + bytes};
}

/// Checks rank outputs against the float64 reference of the operation.
void expectMatchesReference(const CollectiveRequest& r, DType dtype, ReduceOp reduce,
                            const std::vector<std::vector<std::byte>>& in,
                            const std::vector<std::vector<std::byte>>& out) {
  const auto n = static_cast<std::int64_t>(r.group.size());
  const std::int64_t count = r.bytes / r.elementBytes;
  const std::int64_t chunk = count / std::max<std::int64_t>(n, 1);
  const std::int64_t chunkBytes = chunk * r.elementBytes;
  ASSERT_EQ(out.size(), in.size());
  // Rounding to the type after each of up to n steps, each of a partial no larger than sum |x|.
  const double unit = dtype == DType::kBf16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -24);
  for (std::int64_t rank = 0; rank < n; ++rank) {
    const std::vector<std::byte>& got = out[static_cast<std::size_t>(rank)];
    switch (r.op) {
      case CollectiveOp::kAllReduce:
      case CollectiveOp::kReduceScatter: {
        const std::int64_t first = r.op == CollectiveOp::kAllReduce ? 0 : rank * chunk;
        const std::int64_t length = r.op == CollectiveOp::kAllReduce ? count : chunk;
        ASSERT_EQ(got.size(), static_cast<std::size_t>(length * r.elementBytes));
        for (std::int64_t e = 0; e < length; ++e) {
          double sum = 0;
          double magnitude = 0;
          double best = valueAt(in[0], first + e, dtype);
          for (const auto& x : in) {
            const double v = valueAt(x, first + e, dtype);
            sum += v;
            magnitude += std::abs(v);
            best = reduce == ReduceOp::kMax ? std::max(best, v) : std::min(best, v);
          }
          const double value = valueAt(got, e, dtype);
          if (reduce == ReduceOp::kSum) {
            ASSERT_NEAR(value, sum, static_cast<double>(n) * unit * magnitude)
                << "rank " << rank << " element " << e;
          } else {
            ASSERT_EQ(value, best) << "rank " << rank << " element " << e;
          }
        }
        break;
      }
      case CollectiveOp::kAllGather:
        for (std::int64_t j = 0; j < n; ++j) {
          ASSERT_EQ(slice(got, j * chunkBytes, chunkBytes), in[static_cast<std::size_t>(j)])
              << "rank " << rank << " chunk " << j;
        }
        break;
      case CollectiveOp::kAllToAll:
        for (std::int64_t j = 0; j < n; ++j) {
          ASSERT_EQ(slice(got, j * chunkBytes, chunkBytes),
                    slice(in[static_cast<std::size_t>(j)], rank * chunkBytes, chunkBytes))
              << "rank " << rank << " chunk " << j;
        }
        break;
      case CollectiveOp::kBroadcast:
        ASSERT_EQ(got, in[static_cast<std::size_t>(r.root)]) << "rank " << rank;
        break;
      case CollectiveOp::kPermute:
        ASSERT_EQ(got, in[static_cast<std::size_t>((rank + n - 1) % n)]) << "rank " << rank;
        break;
      case CollectiveOp::kAllToAllV:
        FAIL() << "all_to_allv has counts of its own: all_to_allv_test.cpp checks it";
    }
  }
}

struct Case {
  std::string name;
  spec::SystemSpec system;
  std::vector<std::int64_t> group;
};

std::vector<Case> cases() {
  std::vector<std::int64_t> reversed = firstChips(16);
  std::reverse(reversed.begin(), reversed.end());
  return {
      {"2 of a ring of 2", grid({ring("x", 2)}), firstChips(2)},
      {"3 of a ring of 3", grid({ring("x", 3)}), firstChips(3)},
      {"4 of a ring of 4", grid({ring("x", 4)}), firstChips(4)},
      {"8 of a 4 x 4 torus", grid({ring("x", 4), ring("y", 4)}), firstChips(8)},
      {"16 of a 4 x 4 torus", grid({ring("x", 4), ring("y", 4)}), firstChips(16)},
      {"16 of a 4 x 4 torus, ranks reversed", grid({ring("x", 4), ring("y", 4)}), reversed},
      {"8 of a 2 x 2 x 2 grid", grid({ring("x", 2), ring("y", 2), ring("z", 2)}), firstChips(8)},
  };
}

constexpr CollectiveOp kOps[] = {CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter,
                                 CollectiveOp::kAllGather, CollectiveOp::kAllToAll,
                                 CollectiveOp::kBroadcast, CollectiveOp::kPermute};

TEST(FunctionalCollectives, EveryOperationAndAlgorithmMatchesTheFloat64Reference) {
  const spec::ChipSpec chip = chipWithMemory();
  int runs = 0;
  for (const Case& c : cases()) {
    const Topology t = topologyOf(c.system);
    const auto n = static_cast<std::int64_t>(c.group.size());
    for (const CollectiveOp op : kOps) {
      for (const DType dtype : {DType::kFp32, DType::kBf16, DType::kFp8E4m3}) {
        const bool reducing = op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter;
        if (reducing && !reducesIn(dtype)) {
          continue;
        }
        for (const ReduceOp reduce : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin}) {
          if (!reducing && reduce != ReduceOp::kSum) {
            continue;
          }
          // An odd chunk per rank, so that the two ring channels split it unevenly.
          CollectiveRequest r = request(op, c.group, n * 5, dtype);
          r.root = op == CollectiveOp::kBroadcast ? n - 1 : 0;
          const auto in = inputsFor(c.group.size(), inputBytes(r) / r.elementBytes, dtype);
          for (const Algorithm a : kAllAlgorithms) {
            if (!unsupportedReason(t, r, a).empty()) {
              continue;
            }
            SCOPED_TRACE(fmt::format("{}: {} {} {} by {}", c.name, opName(op), dtypeName(dtype),
                                     reduceOpName(reduce), algorithmName(a)));
            const Result<Plan> plan = buildPlan(t, r, a);
            ASSERT_TRUE(plan.ok()) << plan.status().toString();
            const Status ordered = checkPlanOrder(*plan);
            ASSERT_TRUE(ordered.ok()) << ordered.toString();
            const Result<DataCollectiveResult> result =
                runCollectiveOnData(t, chip, r, dtype, reduce, in, a);
            ASSERT_TRUE(result.ok()) << result.status().toString();
            EXPECT_EQ(result->timing.algorithm, a);
            expectMatchesReference(r, dtype, reduce, in, result->outputs);
            ++runs;
          }
        }
      }
    }
  }
  EXPECT_GT(runs, 150);
}

TEST(FunctionalCollectives, WholeNumberSumsAreIdenticalAcrossAlgorithms) {
  const Topology t = topologyOf(grid({ring("x", 4), ring("y", 4)}));
  const CollectiveRequest r =
      request(CollectiveOp::kAllReduce, firstChips(16), 16 * 6, DType::kFp32);
  const auto in = inputsFor(16, 16 * 6, DType::kFp32, /*integers=*/true);
  std::vector<std::vector<std::byte>> first;
  for (const Algorithm a : kAllAlgorithms) {
    if (!unsupportedReason(t, r, a).empty()) {
      continue;
    }
    const Result<DataCollectiveResult> result =
        runCollectiveOnData(t, chipWithMemory(), r, DType::kFp32, ReduceOp::kSum, in, a);
    ASSERT_TRUE(result.ok()) << algorithmName(a) << ": " << result.status().toString();
    if (first.empty()) {
      first = result->outputs;
    }
    EXPECT_EQ(result->outputs, first) << algorithmName(a);
  }
}

float bf16(float v) { return quantize(v, DType::kBf16); }

// docs/collectives.md: on a ring of 4, the forward channel accumulates rank o's piece from rank
// o + 1 round to o, rounding each partial to bf16; the backward channel from o - 1 round to o. The
// torus algorithm over the same ring does the same. The mesh adds rank o's own value and then the
// others in rank order in fp32 and rounds once.
/// On a ring of 4 with chunks of `kChunk` bf16 elements, ring and torus give the documented ring
/// order bit for bit and mesh its own; the forward channel takes the first half of each chunk.
void expectTheDocumentedOrders(std::int64_t kChunk) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  const CollectiveRequest r =
      request(CollectiveOp::kAllReduce, firstChips(4), 4 * kChunk, DType::kBf16);
  const auto in = inputsFor(4, 4 * kChunk, DType::kBf16);
  auto x = [&](std::int64_t rank, std::int64_t e) {
    return static_cast<float>(valueAt(in[static_cast<std::size_t>(rank % 4)], e, DType::kBf16));
  };
  std::vector<float> ringExpected;
  std::vector<float> meshExpected;
  for (std::int64_t e = 0; e < 4 * kChunk; ++e) {
    const std::int64_t o = e / kChunk;
    const bool forward = e % kChunk < kChunk / 2;
    const int step = forward ? 1 : 3;  // the next rank round the channel's ring
    float partial = x(o + step, e);
    for (int k = 2; k <= 4; ++k) {
      partial = bf16(partial + x(o + step * k, e));
    }
    ringExpected.push_back(partial);
    float sum = x(o, e);
    for (std::int64_t rank = 0; rank < 4; ++rank) {
      if (rank != o) {
        sum += x(rank, e);
      }
    }
    meshExpected.push_back(bf16(sum));
  }
  for (const auto& [a, expected] :
       {std::pair{Algorithm::kRing, ringExpected}, std::pair{Algorithm::kTorus, ringExpected},
        std::pair{Algorithm::kMesh, meshExpected}}) {
    const Result<DataCollectiveResult> result =
        runCollectiveOnData(t, chipWithMemory(), r, DType::kBf16, ReduceOp::kSum, in, a);
    ASSERT_TRUE(result.ok()) << result.status().toString();
    for (std::size_t rank = 0; rank < 4; ++rank) {
      for (std::int64_t e = 0; e < 4 * kChunk; ++e) {
        ASSERT_EQ(valueAt(result->outputs[rank], e, DType::kBf16),
                  expected[static_cast<std::size_t>(e)])
            << algorithmName(a) << " rank " << rank << " element " << e;
      }
    }
  }
}

TEST(FunctionalCollectives, ReductionOrdersAreTheDocumentedOnes) { expectTheDocumentedOrders(6); }

// Chunks of 512 Ki bf16 elements: each channel's piece is 512 KiB, so each ring step goes in 8
// slices of 64 KiB (ring_steps.h), which split the elements but not their order of reduction.
TEST(FunctionalCollectives, SlicedRingStepsKeepTheDocumentedOrder) {
  constexpr std::int64_t kChunk = 512 * 1024;
  const Topology t = topologyOf(grid({ring("x", 4)}));
  const CollectiveRequest r =
      request(CollectiveOp::kAllReduce, firstChips(4), 4 * kChunk, DType::kBf16);
  const Result<Plan> sliced = buildPlan(t, r, Algorithm::kRing);
  const Result<Plan> whole = buildPlan(
      t, request(CollectiveOp::kAllReduce, firstChips(4), 4 * 6, DType::kBf16), Algorithm::kRing);
  ASSERT_TRUE(sliced.ok() && whole.ok());
  // Per channel, 3 steps x 4 members x 8 slices x (a copy and a reduction) in the reduce-scatter,
  // where unsliced there is one of each.
  EXPECT_EQ(sliced->ops().size() - whole->ops().size(), 2U * 3 * 4 * 7 * 2 + 2 * 4);
  EXPECT_TRUE(checkPlanOrder(*sliced).ok());
  expectTheDocumentedOrders(kChunk);
}

TEST(FunctionalCollectives, TheSameInputsGiveTheSameBytes) {
  const Topology t = topologyOf(grid({ring("x", 4), ring("y", 4)}));
  const CollectiveRequest r =
      request(CollectiveOp::kReduceScatter, firstChips(16), 16 * 33, DType::kBf16);
  const auto in = inputsFor(16, 16 * 33, DType::kBf16);
  const auto once = runCollectiveOnData(t, chipWithMemory(), r, DType::kBf16, ReduceOp::kSum, in);
  const auto twice = runCollectiveOnData(t, chipWithMemory(), r, DType::kBf16, ReduceOp::kSum, in);
  ASSERT_TRUE(once.ok() && twice.ok());
  EXPECT_EQ(once->outputs, twice->outputs);
  EXPECT_EQ(once->timing.picoseconds, twice->timing.picoseconds);
}

TEST(FunctionalCollectives, AnUnorderedPlanIsCaught) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  Plan plan(t, 4);
  const Segment first = bufferRange(0, 8);
  plan.copy(0, 1, first, first, {});
  plan.copy(2, 1, bufferRange(4, 8), bufferRange(4, 8), {});  // overlaps elements 4..7 of chip 1
  const Status s = checkPlanOrder(plan);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.toString().find("operation 0 (a copy from chip 0 to chip 1) and operation 1 (a copy "
                              "from chip 2 to chip 1) touch elements 4..7 of chip 1's buffer"),
            std::string::npos)
      << s.toString();
  Plan ordered(t, 4);
  const OpId a = ordered.copy(0, 1, first, first, {});
  ordered.copy(2, 1, bufferRange(4, 8), bufferRange(4, 8), std::span(&a, 1));
  EXPECT_TRUE(checkPlanOrder(ordered).ok());
}

TEST(FunctionalCollectives, TheFloat64CheckFindsAWrongElement) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  for (const CollectiveOp op : {CollectiveOp::kAllGather, CollectiveOp::kAllReduce}) {
    const CollectiveRequest r = request(op, firstChips(4), 4 * 8, DType::kBf16);
    const auto in = inputsFor(4, inputBytes(r) / r.elementBytes, DType::kBf16);
    const ReduceOp reduce = op == CollectiveOp::kAllGather ? ReduceOp::kSum : ReduceOp::kMax;
    auto result = runCollectiveOnData(t, chipWithMemory(), r, DType::kBf16, reduce, in);
    ASSERT_TRUE(result.ok()) << result.status().toString();
    const auto good = checkAgainstFloat64(r, DType::kBf16, reduce, in, result->outputs);
    ASSERT_TRUE(good.ok()) << good.status().toString();
    EXPECT_EQ(good->mismatches, 0);
    EXPECT_EQ(good->elements, 4 * 4 * 8);
    result->outputs[2][5] ^= std::byte{0x40};  // the high byte of element 2 of rank 2
    const auto bad = checkAgainstFloat64(r, DType::kBf16, reduce, in, result->outputs);
    ASSERT_TRUE(bad.ok());
    EXPECT_EQ(bad->mismatches, 1) << opName(op);
  }
  const CollectiveRequest sum =
      request(CollectiveOp::kAllReduce, firstChips(4), 4 * 8, DType::kFp32);
  const auto in = inputsFor(4, 4 * 8, DType::kFp32);
  auto result = runCollectiveOnData(t, chipWithMemory(), sum, DType::kFp32, ReduceOp::kSum, in);
  ASSERT_TRUE(result.ok());
  const auto close = checkAgainstFloat64(sum, DType::kFp32, ReduceOp::kSum, in, result->outputs);
  ASSERT_TRUE(close.ok());
  EXPECT_LT(close->maxRelative, 4 * std::ldexp(1.0, -24));
  result->outputs[1][3] ^= std::byte{0x40};  // the top exponent bit of element 0
  const auto far = checkAgainstFloat64(sum, DType::kFp32, ReduceOp::kSum, in, result->outputs);
  ASSERT_TRUE(far.ok());
  EXPECT_GT(far->maxRelative, 0.1);
}

TEST(FunctionalCollectives, BadInputsGetErrorsThatNameTheProblem) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  const spec::ChipSpec chip = chipWithMemory();
  auto message = [&](const CollectiveRequest& r, DType dtype,
                     const std::vector<std::vector<std::byte>>& in) {
    const auto result = runCollectiveOnData(t, chip, r, dtype, ReduceOp::kSum, in);
    EXPECT_FALSE(result.ok());
    return result.ok() ? std::string() : result.status().toString();
  };
  const CollectiveRequest fp8 =
      request(CollectiveOp::kAllReduce, firstChips(4), 16, DType::kFp8E4m3);
  EXPECT_NE(message(fp8, DType::kFp8E4m3, inputsFor(4, 16, DType::kFp8E4m3))
                .find("reduce in fp32 or bf16, not fp8_e4m3"),
            std::string::npos);
  const CollectiveRequest gather =
      request(CollectiveOp::kAllGather, firstChips(4), 16, DType::kBf16);
  EXPECT_NE(message(gather, DType::kBf16, inputsFor(4, 16, DType::kBf16))
                .find("rank 0's input has 32 bytes; all_gather of 32 bytes over 4 ranks takes 8"),
            std::string::npos);
  EXPECT_NE(
      message(gather, DType::kBf16, inputsFor(3, 4, DType::kBf16)).find("3 inputs for 4 ranks"),
      std::string::npos);
  EXPECT_NE(message(gather, DType::kFp32, inputsFor(4, 4, DType::kFp32))
                .find("2-byte elements but fp32 has 4"),
            std::string::npos);
  Plan timingOnly(t, 2);
  timingOnly.transfer(0, 1, 64, {});
  const auto device = core::DeviceMemory::create(1 << 20, 1, true, false);
  ASSERT_TRUE(device.ok());
  const std::vector<RankMemory> ranks(2, RankMemory{device->get(), 0, 4096});
  const std::vector<std::int64_t> pair = {0, 1};
  EXPECT_NE(executePlan(timingOnly, pair, DType::kBf16, ReduceOp::kSum, ranks)
                .toString()
                .find("operation 0 of the plan moves bytes but says which data"),
            std::string::npos);
}

}  // namespace
}  // namespace trn::fabric
