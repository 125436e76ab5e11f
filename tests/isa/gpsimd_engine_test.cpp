// Golden tests of the GpSimd-engine instructions against independent references: iota (multi-
// dimensional patterns, int32 wrap-around, saturation into narrow integers, float destinations
// with nearest-even and stochastic rounding, partial partitions), affine_select (causal mask,
// every comparison, bit-exact selection), tensor_partition_reduce (fp32 add/max/mean in
// partition order against float64, bitwise operators on raw bits), local_gather (the NKI NumPy
// semantics), nc_n_gather (bit-exact, flattened strided data, out-of-range indices). One test per
// instruction-specific verifier rule.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

#include "special_test_util.h"

namespace trn::isa {
namespace {

using namespace special_test;  // NOLINT(google-build-using-namespace): test helpers

/// Runs one POOL instruction after the loads, storing output tile(s) afterwards.
TensorBytes runPool(std::string_view instruction, const std::string& loads, int loaded,
                    const std::string& stores, const TensorBytes& inputs,
                    const core::CoreOptions& options = {}) {
  const std::string wait = loaded > 0 ? fmt::format("wait(s0>={})", loaded) : "";
  return run(loads + fmt::format("pool: {} {} signal(s9+=1)\n", instruction, wait) + stores, inputs,
             options);
}

// ---- iota ----

TEST(Iota, Int32MultiDimensionalPatternWithChannelMultiplier) {
  const auto got = valuesOf<std::int32_t>(
      runPool("iota dst=sbuf[0:128]+64:int32[[1,64]] pattern=[[-3,4],[1,8],[100,2]] offset=5 "
              "channel_multiplier=1000",
              "", 0, store("c", "int32", 0, 128, 64, 64), {})["c"]);
  ASSERT_EQ(got.size(), 128U * 64);
  for (std::int32_t c = 0; c < 128; ++c) {
    for (std::int32_t i = 0; i < 64; ++i) {
      const std::int32_t want = 5 + c * 1000 - 3 * (i / 16) + (i / 2) % 8 + 100 * (i % 2);
      ASSERT_EQ(got[static_cast<std::size_t>(c * 64 + i)], want) << c << "," << i;
    }
  }
}

TEST(Iota, WrapsInInt32AndSaturatesNarrowIntegers) {
  const auto wrapped = valuesOf<std::int32_t>(
      runPool("iota dst=sbuf[0:1]:int32[[1,4]] pattern=[[1,4]] offset=2147483646", "", 0,
              store("c", "int32", 0, 1, 4, 0), {})["c"]);
  EXPECT_EQ(wrapped,
            (std::vector<std::int32_t>{2147483646, 2147483647, -2147483647 - 1, -2147483647}));
  // Partitions [32:48]: the channel index counts from the tile's first partition.
  const auto narrow = valuesOf<std::int8_t>(
      runPool("iota dst=sbuf[32:48]:int8[[1,5]] pattern=[[60,5]] offset=-100 channel_multiplier=2",
              "", 0, store("c", "int8", 32, 16, 5, 0), {})["c"]);
  for (int c = 0; c < 16; ++c) {
    for (int i = 0; i < 5; ++i) {
      const int v = -100 + 2 * c + 60 * i;
      EXPECT_EQ(narrow[static_cast<std::size_t>(c * 5 + i)], std::clamp(v, -128, 127)) << c << i;
    }
  }
  const auto unsignedSat = valuesOf<std::uint16_t>(
      runPool("iota dst=sbuf[0:1]:uint16[[1,3]] pattern=[[40000,3]] offset=-5", "", 0,
              store("c", "uint16", 0, 1, 3, 0), {})["c"]);
  EXPECT_EQ(unsignedSat, (std::vector<std::uint16_t>{0, 39995, 65535}));
}

TEST(Iota, FloatDestinationsRoundNearestEvenOrStochastically) {
  const std::string_view instr =
      "iota dst=sbuf[0:64]:bf16[[1,300]] pattern=[[3,300]] offset=1001 channel_multiplier=7";
  const std::string stores = store("c", "bf16", 0, 64, 300, 0);
  const auto rne = unpackWords(runPool(instr, "", 0, stores, {})["c"], 2);
  core::CoreOptions stochastic;
  stochastic.rounding = RoundingMode::kStochastic;
  stochastic.seed = 123;
  const auto sr = unpackWords(runPool(instr, "", 0, stores, {}, stochastic)["c"], 2);
  EXPECT_EQ(unpackWords(runPool(instr, "", 0, stores, {}, stochastic)["c"], 2), sr);
  double exactSum = 0;
  double srSum = 0;
  for (int c = 0; c < 64; ++c) {
    for (int i = 0; i < 300; ++i) {
      const double v = 1001 + 7 * c + 3 * i;
      const std::size_t at = static_cast<std::size_t>(c * 300 + i);
      ASSERT_EQ(rne[at], encodeRne(v, kBf16)) << v;
      const double q = std::ldexp(1.0, std::ilogb(v) - 7);
      const double got = decode(sr[at], kBf16);
      ASSERT_TRUE(got == std::floor(v / q) * q || got == std::floor(v / q) * q + q) << v;
      exactSum += v;
      srSum += got;
    }
  }
  EXPECT_NEAR(srSum / exactSum, 1.0, 1e-3);  // unbiased on average
  const auto big =
      valuesOf<float>(runPool("iota dst=sbuf[0:1]:fp32[[1,2]] pattern=[[1,2]] offset=16777217", "",
                              0, store("c", "fp32", 0, 1, 2, 0), {})["c"]);
  EXPECT_EQ(big, (std::vector<float>{16777216.0f, 16777218.0f}));  // int32 -> fp32 nearest even
}

TEST(Iota, NegativeStrideDestination) {
  const auto got = valuesOf<std::int32_t>(
      runPool("iota dst=sbuf[64:66]+28:int32[[-1,8]] pattern=[[1,8]] channel_multiplier=100", "", 0,
              store("c", "int32", 64, 2, 8, 0), {})["c"]);
  EXPECT_EQ(got, (std::vector<std::int32_t>{7, 6, 5, 4, 3, 2, 1, 0,  //
                                            107, 106, 105, 104, 103, 102, 101, 100}));
}

// ---- affine_select ----

TEST(AffineSelect, CausalMaskKeepsTheLowerTriangle) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> scores(128 * 128);
  for (float& x : scores) {
    x = dist(rng);
  }
  const auto got = valuesOf<float>(
      runPool("affine_select dst=sbuf[0:128]+1024:fp32[[1,128]] pattern=[[-1,128]] offset=0 "
              "channel_multiplier=1 on_true_tile=sbuf[0:128]:fp32[[1,128]] on_false_value=-30000 "
              "cmp_op=greater_equal",
              load("a", "fp32", 0, 128, 128, 0), 1, store("c", "fp32", 0, 128, 128, 1024),
              {{"a", bytesOf(scores)}})["c"]);
  for (std::size_t c = 0; c < 128; ++c) {
    for (std::size_t i = 0; i < 128; ++i) {
      ASSERT_EQ(got[c * 128 + i], i <= c ? scores[c * 128 + i] : -30000.0f) << c << "," << i;
    }
  }
}

TEST(AffineSelect, EveryComparisonBitExactSelectionAndCasts) {
  std::mt19937 rng(7);
  std::vector<std::uint32_t> data(4 * 8);
  for (std::uint32_t& w : data) {
    w = rng() & 0xFFFF;
  }
  data[3] = 0x7F81;  // NaN payload survives a same-dtype selection
  const std::pair<std::string_view, bool (*)(int)> ops[] = {
      {"equal", [](int a) { return a == 0; }},  {"not_equal", [](int a) { return a != 0; }},
      {"greater", [](int a) { return a > 0; }}, {"greater_equal", [](int a) { return a >= 0; }},
      {"less", [](int a) { return a < 0; }},    {"less_equal", [](int a) { return a <= 0; }},
  };
  for (const auto& [op, pred] : ops) {
    SCOPED_TRACE(op);
    TensorBytes out = runPool(
        fmt::format("affine_select dst=sbuf[0:4]+256:bf16[[1,8]] pattern=[[1,8]] offset=-3 "
                    "channel_multiplier=-1 on_true_tile=sbuf[0:4]:bf16[[1,8]] on_false_value=2.5 "
                    "cmp_op={} wait(s0>=1)\n"
                    "pool: affine_select dst=sbuf[0:4]+512:fp32[[1,8]] pattern=[[1,8]] offset=-3 "
                    "channel_multiplier=-1 on_true_tile=sbuf[0:4]:bf16[[1,8]] on_false_value=2.5 "
                    "cmp_op={}",
                    op, op),
        load("a", "bf16", 0, 4, 8, 0), 0,
        store("c", "bf16", 0, 4, 8, 256) + store("f", "fp32", 0, 4, 8, 512),
        {{"a", packWords(data, 2)}});
    const auto same = unpackWords(out["c"], 2);
    const auto cast = valuesOf<float>(out["f"]);
    for (int c = 0; c < 4; ++c) {
      for (int i = 0; i < 8; ++i) {
        const auto at = static_cast<std::size_t>(c * 8 + i);
        const bool keep = pred(-3 + i - c);
        EXPECT_EQ(same[at], keep ? data[at] : 0x4020u) << c << "," << i;
        const double want = keep ? decode(data[at], kBf16) : 2.5;
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(cast[at]));
        } else {
          EXPECT_EQ(cast[at], want) << c << "," << i;
        }
      }
    }
  }
}

TEST(AffineSelect, StridedInputOnPartialPartitions) {
  // fp16 on_true read with stride 2 at partitions [32:48]; keep where -4 + c + i < 0.
  std::mt19937 rng(8);
  std::vector<std::uint32_t> data(16 * 16);
  for (std::uint32_t& w : data) {
    w = rng() & 0x7BFF;
  }
  const auto got = unpackWords(
      runPool("affine_select dst=sbuf[32:48]+128:fp16[[1,8]] pattern=[[1,8]] offset=-4 "
              "channel_multiplier=1 on_true_tile=sbuf[32:48]:fp16[[2,8]] on_false_value=-inf "
              "cmp_op=less",
              load("a", "fp16", 32, 16, 16, 0), 1, store("c", "fp16", 32, 16, 8, 128),
              {{"a", packWords(data, 2)}})["c"],
      2);
  for (std::size_t c = 0; c < 16; ++c) {
    for (std::size_t i = 0; i < 8; ++i) {
      const bool keep = -4 + static_cast<int>(c + i) < 0;
      EXPECT_EQ(got[c * 8 + i], keep ? data[c * 16 + 2 * i] : 0xFC00u) << c << "," << i;
    }
  }
}

// ---- tensor_partition_reduce ----

TEST(TensorPartitionReduce, AddMaxAndMeanInFp32PartitionOrder) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-10.0f, 10.0f);
  constexpr std::size_t kP = 128;
  constexpr std::size_t kF = 64;
  std::vector<float> x(kP * kF);
  for (float& v : x) {
    v = dist(rng);
  }
  x[5 * kF + 3] = std::numeric_limits<float>::quiet_NaN();
  const std::string loads = load("a", "fp32", 0, kP, kF, 0);
  const std::string stores = store("c", "fp32", 0, 1, kF, 4096);
  std::map<std::string, std::vector<float>> got;
  for (const std::string op : {"add", "max", "mean"}) {
    got[op] = valuesOf<float>(
        runPool(fmt::format("tensor_partition_reduce dst=sbuf[0:1]+4096:fp32[[1,64]] op={} "
                            "data=sbuf[0:128]:fp32[[1,64]]",
                            op),
                loads, 1, stores, {{"a", bytesOf(x)}})["c"]);
  }
  for (std::size_t j = 0; j < kF; ++j) {
    float sum = 0.0f;  // the defining order: partitions 0..127
    double sum64 = 0;
    double magnitude = 0;
    float max = -std::numeric_limits<float>::infinity();
    for (std::size_t p = 0; p < kP; ++p) {
      sum = p == 0 ? x[j] : sum + x[p * kF + j];
      sum64 += x[p * kF + j];
      magnitude += std::fabs(x[p * kF + j]);
      max = std::max(max, x[p * kF + j]);
    }
    if (j == 3) {
      EXPECT_TRUE(std::isnan(got["add"][j]) && std::isnan(got["max"][j]) &&
                  std::isnan(got["mean"][j]));
      continue;
    }
    EXPECT_EQ(got["add"][j], sum) << j;
    EXPECT_NEAR(got["add"][j], sum64, 128 * 0x1p-24 * magnitude) << j;
    EXPECT_EQ(got["max"][j], max) << j;
    EXPECT_EQ(got["mean"][j], sum / 128.0f) << j;
  }
}

TEST(TensorPartitionReduce, BitwiseOperatorsActOnRawIntegerBits) {
  std::mt19937 rng(9);
  std::vector<std::int32_t> x(16 * 8);
  for (std::int32_t& v : x) {
    v = static_cast<std::int32_t>(rng());  // most beyond 2^24: no fp32 round trip allowed
  }
  const std::string loads = load("a", "int32", 64, 16, 8, 0);
  for (const auto& [op, fn] :
       {std::pair<std::string_view, std::uint32_t (*)(std::uint32_t, std::uint32_t)>{
            "bitwise_or", [](std::uint32_t a, std::uint32_t b) { return a | b; }},
        {"bitwise_and", [](std::uint32_t a, std::uint32_t b) { return a & b; }},
        {"bitwise_xor", [](std::uint32_t a, std::uint32_t b) { return a ^ b; }}}) {
    const auto got = valuesOf<std::uint32_t>(
        runPool(fmt::format("tensor_partition_reduce dst=sbuf[96:97]+256:int32[[1,8]] op={} "
                            "data=sbuf[64:80]:int32[[1,8]]",
                            op),
                loads, 1, store("c", "int32", 96, 1, 8, 256), {{"a", bytesOf(x)}})["c"]);
    for (std::size_t j = 0; j < 8; ++j) {
      auto acc = static_cast<std::uint32_t>(x[j]);
      for (std::size_t p = 1; p < 16; ++p) {
        acc = fn(acc, static_cast<std::uint32_t>(x[p * 8 + j]));
      }
      EXPECT_EQ(got[j], acc) << op << " " << j;
    }
  }
  // int8 -1 is the bit pattern 0xFF, zero-extended into an int32 destination.
  const auto widened = valuesOf<std::int32_t>(
      runPool("tensor_partition_reduce dst=sbuf[0:1]+64:int32[[1,2]] op=bitwise_or "
              "data=sbuf[0:2]:int8[[1,2]]",
              load("a", "int8", 0, 2, 2, 0), 1, store("c", "int32", 0, 1, 2, 64),
              {{"a", bytesOf(std::vector<std::int8_t>{-1, 1, 0, 2})}})["c"]);
  EXPECT_EQ(widened, (std::vector<std::int32_t>{255, 3}));
}

TEST(TensorPartitionReduce, Bf16DestinationRoundsNearestEven) {
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(32 * 16);
  for (float& v : x) {
    v = dist(rng);
  }
  const auto got =
      unpackWords(runPool("tensor_partition_reduce dst=sbuf[0:1]+2048:bf16[[1,16]] op=add "
                          "data=sbuf[0:32]:fp32[[1,16]]",
                          load("a", "fp32", 0, 32, 16, 0), 1, store("c", "bf16", 0, 1, 16, 2048),
                          {{"a", bytesOf(x)}})["c"],
                  2);
  for (std::size_t j = 0; j < 16; ++j) {
    float sum = x[j];
    for (std::size_t p = 1; p < 32; ++p) {
      sum += x[p * 16 + j];
    }
    EXPECT_EQ(got[j], encodeRne(sum, kBf16)) << j;
  }
}

// ---- local_gather ----

/// The NKI NumPy semantics: per 16-partition core, indices flattened partition-first (order 'F'),
/// the first `valid` of them element offsets of `elems` contiguous elements of each partition.
std::vector<std::uint32_t> localGatherReference(const std::vector<std::uint32_t>& src,
                                                std::size_t partitions, std::size_t srcFree,
                                                const std::vector<std::uint32_t>& index,
                                                std::size_t k, std::size_t valid,
                                                std::size_t elems) {
  std::vector<std::uint32_t> out(partitions * valid * elems);
  for (std::size_t g = 0; g < partitions / 16; ++g) {
    std::vector<std::uint32_t> flat;
    for (std::size_t col = 0; col < k; ++col) {
      for (std::size_t q = 0; q < 16; ++q) {
        flat.push_back(index[(g * 16 + q) * k + col]);
      }
    }
    for (std::size_t q = 0; q < 16; ++q) {
      const std::size_t p = g * 16 + q;
      for (std::size_t j = 0; j < valid; ++j) {
        for (std::size_t e = 0; e < elems; ++e) {
          out[(p * valid + j) * elems + e] = src[p * srcFree + flat[j] + e];
        }
      }
    }
  }
  return out;
}

TEST(LocalGather, MatchesTheNkiNumpySemantics) {
  // The NKI example: src (128, 512, 4) fp32, index (16, 4) replicated to 128 partitions, rows
  // scaled by num_elem_per_idx = 4, all 64 indices per core.
  std::mt19937 rng(3);
  std::vector<std::uint32_t> src(128 * 2048);
  for (std::uint32_t& w : src) {
    w = static_cast<std::uint32_t>(rng());
  }
  std::vector<std::uint32_t> perCore(16 * 4);
  for (std::uint32_t& w : perCore) {
    w = (rng() % 512) * 4;
  }
  std::vector<std::uint32_t> index;
  for (int c = 0; c < 8; ++c) {
    index.insert(index.end(), perCore.begin(), perCore.end());
  }
  const auto got = unpackWords(
      runPool(
          "local_gather dst=sbuf[0:128]+16384:fp32[[1,256]] src_buffer=sbuf[0:128]:fp32[[1,2048]] "
          "index=sbuf[0:128]+8192:uint16[[1,4]] num_elem_per_idx=4",
          load("a", "fp32", 0, 128, 2048, 0) + load("i", "uint16", 0, 128, 4, 8192), 2,
          store("c", "fp32", 0, 128, 256, 16384),
          {{"a", packWords(src, 4)}, {"i", packWords(index, 2)}})["c"],
      4);
  EXPECT_EQ(got, localGatherReference(src, 128, 2048, index, 4, 64, 4));
}

TEST(LocalGather, DistinctCoresFewerValidIndicesAndPartialPartitions) {
  std::mt19937 rng(4);
  std::vector<std::uint32_t> src(64 * 300);
  for (std::uint32_t& w : src) {
    w = rng() & 0xFFFF;
  }
  std::vector<std::uint32_t> index(64 * 4);
  for (std::uint32_t& w : index) {
    w = rng() % 299;  // element offsets; two elements each must stay inside 300
  }
  const auto got = unpackWords(
      runPool(
          "local_gather dst=sbuf[64:128]+4096:bf16[[1,100]] src_buffer=sbuf[64:128]:bf16[[1,300]] "
          "index=sbuf[64:128]+1024:uint16[[1,4]] num_elem_per_idx=2 num_valid_indices=50",
          load("a", "bf16", 64, 64, 300, 0) + load("i", "uint16", 64, 64, 4, 1024), 2,
          store("c", "bf16", 64, 64, 100, 4096),
          {{"a", packWords(src, 2)}, {"i", packWords(index, 2)}})["c"],
      2);
  EXPECT_EQ(got, localGatherReference(src, 64, 300, index, 4, 50, 2));
}

TEST(LocalGather, OffsetsPastTheEndAreRunTimeErrors) {
  std::vector<std::uint16_t> index(16, 0);
  index[5] = 7;  // 7 + 2 elements > 8
  const std::string error =
      runError(load("a", "fp32", 0, 16, 8, 0) + load("i", "uint16", 0, 16, 1, 1024) +
                   "pool: local_gather dst=sbuf[0:16]+2048:fp32[[1,32]] "
                   "src_buffer=sbuf[0:16]:fp32[[1,8]] index=sbuf[0:16]+1024:uint16[[1,1]] "
                   "num_elem_per_idx=2 wait(s0>=2)\n",
               {{"a", bytesOf(std::vector<float>(128, 1.0f))}, {"i", bytesOf(index)}});
  EXPECT_NE(error.find("operand 'index': offset 7 (index 5 of the core at partitions [0:16]) plus "
                       "2 elements runs past src_buffer's 8 elements per partition"),
            std::string::npos)
      << error;
}

// ---- nc_n_gather ----

TEST(NcNGather, GathersWithinEachPartitionFromFlattenedStridedData) {
  // data is read backwards, so flat index i is stored element 999 - i; bf16 with NaN payloads.
  std::mt19937 rng(2);
  constexpr std::size_t kP = 128;
  std::vector<std::uint32_t> data(kP * 1000);
  for (std::uint32_t& w : data) {
    w = rng() & 0xFFFF;
  }
  data[17] = 0x7FC1;
  std::vector<std::uint32_t> indices(kP * 300);
  for (std::size_t i = 0; i < indices.size(); ++i) {
    indices[i] = i == 0 ? 999 - 17 : static_cast<std::uint32_t>(rng() % 1000);
  }
  const auto got = unpackWords(
      runPool(
          "nc_n_gather dst=sbuf[0:128]+8192:bf16[[1,300]] data=sbuf[0:128]+1998:bf16[[-1,1000]] "
          "indices=sbuf[0:128]+4096:uint32[[1,300]]",
          load("a", "bf16", 0, kP, 1000, 0) + load("i", "uint32", 0, kP, 300, 4096), 2,
          store("c", "bf16", 0, kP, 300, 8192),
          {{"a", packWords(data, 2)}, {"i", packWords(indices, 4)}})["c"],
      2);
  for (std::size_t p = 0; p < kP; ++p) {
    for (std::size_t i = 0; i < 300; ++i) {
      ASSERT_EQ(got[p * 300 + i], data[p * 1000 + 999 - indices[p * 300 + i]]) << p << "," << i;
    }
  }
  EXPECT_EQ(got[0], 0x7FC1u);
}

TEST(NcNGather, IndicesOutsideTheDataAreRunTimeErrors) {
  const std::string error = runError(
      load("a", "fp32", 32, 2, 10, 0) + load("i", "uint32", 32, 2, 3, 64) +
          "pool: nc_n_gather dst=sbuf[32:34]+128:fp32[[1,3]] data=sbuf[32:34]:fp32[[1,10]] "
          "indices=sbuf[32:34]+64:uint32[[1,3]] wait(s0>=2)\n",
      {{"a", bytesOf(std::vector<float>(20, 0.0f))},
       {"i", bytesOf(std::vector<std::uint32_t>{0, 1, 2, 3, 10, 4})}});
  EXPECT_NE(error.find("operand 'indices': index 10 (partition 33, entry 1) is outside data's 10 "
                       "elements per partition"),
            std::string::npos)
      << error;
}

// ---- verifier rules ----

TEST(GpSimdVerifier, IotaAndAffineSelectRules) {
  expectRejected("pool: iota dst=sbuf[0:4]:int32[[1,10]] pattern=[[1,8]]",
                 {"pool#0 'iota",
                  "operand 'pattern': generates 8 values per partition but dst "
                  "holds 10"});
  expectRejected("pool: iota dst=sbuf[0:4]:int32[[1,8]] pattern=[[1,8]] offset=4294967296",
                 {"operand 'offset': 4294967296 does not fit the engine's 32-bit integer"});
  expectRejected(
      "pool: iota dst=sbuf[0:4]:int32[[1,8]] pattern=[[1,8]] "
      "channel_multiplier=-3000000000",
      {"operand 'channel_multiplier': -3000000000 does not fit"});
  expectRejected("pool: iota dst=sbuf[0:4]:int32[[1,8]] pattern=[[3000000000,8]]",
                 {"operand 'pattern': 3000000000 does not fit"});
  expectRejected("pool: iota dst=psum[0:4]:int32[[1,8]] pattern=[[1,8]]",
                 {"the GpSimd engine cannot access PSUM"});
  expectRejected(
      "pool: affine_select dst=sbuf[0:4]:fp32[[1,8]] pattern=[[1,8]] "
      "on_true_tile=sbuf[0:4]+64:fp32[[1,8]] cmp_op=add",
      {"operand 'cmp_op': add is not a comparison"});
  expectRejected(
      "pool: affine_select dst=sbuf[0:4]:fp32[[1,8]] pattern=[[1,8]] "
      "on_true_tile=sbuf[0:2]+64:fp32[[1,8]]",
      {"operands 'dst' [4 partitions x 8] and 'on_true_tile' [2 partitions x 8] differ"});
}

TEST(GpSimdVerifier, PartitionReduceRules) {
  expectRejected(
      "pool: tensor_partition_reduce dst=sbuf[0:2]:fp32[[1,8]] op=add "
      "data=sbuf[0:4]+64:fp32[[1,8]]",
      {"operand 'dst': covers 2 partitions; the reduction across partitions writes one"});
  expectRejected(
      "pool: tensor_partition_reduce dst=sbuf[0:1]:fp32[[1,4]] op=add "
      "data=sbuf[0:4]+64:fp32[[1,8]]",
      {"operand 'dst': has 4 elements per partition but data has 8"});
  expectRejected(
      "pool: tensor_partition_reduce dst=sbuf[0:1]:int32[[1,8]] op=bitwise_xor "
      "data=sbuf[0:4]+64:fp32[[1,8]]",
      {"operand 'data': dtype fp32 is not an integer type; bitwise_xor"});
}

TEST(GpSimdVerifier, GatherRules) {
  const std::string_view base =
      "pool: local_gather dst=sbuf[0:32]+4096:fp32[[1,128]] "
      "src_buffer=sbuf[0:32]:fp32[[1,512]] "
      "index=sbuf[0:32]+2048:uint16[[1,4]]";
  EXPECT_EQ(verifyError(std::string(base) + " num_elem_per_idx=2"), "");
  expectRejected(std::string(base) + " num_elem_per_idx=3",
                 {"operand 'num_elem_per_idx': 3 is not one of 1, 2, 4, 8, 16, 32"});
  expectRejected(std::string(base) + " num_valid_indices=65",
                 {"operand 'num_valid_indices': 65 indices per core; index provides 64"});
  expectRejected(std::string(base),
                 {"operand 'dst': has 128 elements per partition; 64 indices x 1 elements "
                  "gather 64"});
  expectRejected(
      "pool: local_gather dst=sbuf[0:24]+4096:fp32[[1,64]] "
      "src_buffer=sbuf[0:24]:fp32[[1,512]] index=sbuf[0:24]+2048:uint16[[1,4]]",
      {"operand 'src_buffer': covers partitions [0:24]", "16-partition GpSimd core"});
  expectRejected(
      "pool: local_gather dst=sbuf[0:32]+4096:fp32[[1,64]] "
      "src_buffer=sbuf[0:32]:fp32[[1,512]] index=sbuf[32:64]+2048:uint16[[1,2]]",
      {"operand 'index': covers partitions [32:64] but src_buffer covers [0:32]"});
  expectRejected(
      "pool: local_gather dst=sbuf[0:32]+4096:fp32[[1,64]] "
      "src_buffer=sbuf[0:32]:fp32[[1,512]] index=sbuf[0:32]+2048:uint32[[1,4]]",
      {"operand 'index': dtype uint32 is not allowed here (allowed: uint16)"});
  expectRejected(
      "pool: local_gather dst=sbuf[0:32]+4096:bf16[[1,64]] "
      "src_buffer=sbuf[0:32]:fp32[[1,512]] index=sbuf[0:32]+2048:uint16[[1,4]]",
      {"operand 'dst': dtype bf16 differs from src_buffer's fp32; local_gather does "
       "not cast"});
  expectRejected(
      "pool: local_gather dst=sbuf[0:16]+8192:fp32[[1,4097]] "
      "src_buffer=sbuf[0:16]:fp32[[1,512]] index=sbuf[0:16]+2048:uint16[[1,300]] "
      "num_valid_indices=4097",
      {"operand 'num_valid_indices': 4097 indices per core", "at most 4096"});
  expectRejected(
      "pool: nc_n_gather dst=sbuf[0:4]:fp32[[1,8]] data=sbuf[0:4]+64:fp32[[1,8]] "
      "indices=sbuf[0:4]+128:int32[[1,8]]",
      {"operand 'indices': dtype int32 is not allowed here (allowed: uint32)"});
  expectRejected(
      "pool: nc_n_gather dst=sbuf[0:4]:bf16[[1,8]] data=sbuf[0:4]+64:fp32[[1,8]] "
      "indices=sbuf[0:4]+128:uint32[[1,8]]",
      {"operand 'dst': dtype bf16 differs from data's fp32; nc_n_gather does not cast"});
  expectRejected(
      "pool: nc_n_gather dst=sbuf[0:4]:fp32[[1,7]] data=sbuf[0:4]+64:fp32[[1,8]] "
      "indices=sbuf[0:4]+128:uint32[[1,8]]",
      {"operands 'dst' [4 partitions x 7] and 'indices' [4 partitions x 8] differ"});
  expectRejected(
      "pool: nc_n_gather dst=sbuf[0:4]:fp32[[1,8]] data=sbuf[0:2]+64:fp32[[1,8]] "
      "indices=sbuf[0:4]+128:uint32[[1,8]]",
      {"operand 'indices': covers 4 partitions but 'data' covers 2"});
}

}  // namespace
}  // namespace trn::isa
