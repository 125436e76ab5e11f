// Golden tests of the special Vector-engine instructions against float64 / independent
// references: bn_stats and bn_aggr (fp32 and bf16 inputs, odd sizes, strided, negative-stride and
// partial-partition tiles, stochastic output rounding), max8 (duplicates, NaN, -Inf),
// nc_find_index8 and nc_match_replace8 (duplicate values in the documented orders, missing values,
// bit-exact pass-through), nc_stream_shuffle (permutation, broadcast, keep, in place). One test per
// instruction-specific verifier rule.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "special_test_util.h"

namespace trn::isa {
namespace {

using namespace special_test;  // NOLINT(google-build-using-namespace): test helpers

std::vector<float> randomFloats(std::size_t n, float low, float high, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(low, high);
  std::vector<float> v(n);
  for (float& x : v) {
    x = dist(rng);
  }
  return v;
}

/// Runs `dve: <instruction>` between one loaded input tile `a` and a stored output tile `c`.
std::vector<std::byte> runDve(std::string_view instruction, const std::string& loads,
                              const TensorBytes& inputs, int loaded, const std::string& stores,
                              const core::CoreOptions& options = {}) {
  const std::string text =
      loads + fmt::format("dve: {} wait(s0>={}) signal(s9+=1)\n", instruction, loaded) + stores;
  return run(text, inputs, options)["c"];
}

// ---- bn_stats / bn_aggr ----

struct Stats {
  double count;
  double mean;
  double m2;
};
Stats float64Stats(const std::vector<double>& x) {
  Stats s{static_cast<double>(x.size()), 0, 0};
  if (x.empty()) {
    return s;
  }
  s.mean = std::accumulate(x.begin(), x.end(), 0.0) / s.count;
  for (const double v : x) {
    s.m2 += (v - s.mean) * (v - s.mean);
  }
  return s;
}

void expectStats(const float* got, const Stats& want, double scale, const std::string& where) {
  EXPECT_EQ(got[0], want.count) << where;
  EXPECT_NEAR(got[1], want.mean, 1e-5 * scale + 1e-6) << where;
  EXPECT_NEAR(got[2], want.m2, 3e-5 * (want.m2 + scale * scale) + 1e-6) << where;
}

TEST(BnStats, Fp32EvenAndOddStatisticsMatchFloat64) {
  constexpr std::size_t kP = 128;
  constexpr std::size_t kF = 512;
  std::vector<float> x = randomFloats(kP * kF, -3.0f, 5.0f, 1);
  const auto got = valuesOf<float>(runDve(
      "bn_stats dst=sbuf[0:128]+4096:fp32[[1,6]] data=sbuf[0:128]:fp32[[1,512]]",
      load("a", "fp32", 0, kP, kF, 0), {{"a", bytesOf(x)}}, 1, store("c", "fp32", 0, kP, 6, 4096)));
  ASSERT_EQ(got.size(), kP * 6);
  for (std::size_t p = 0; p < kP; ++p) {
    for (std::size_t parity = 0; parity < 2; ++parity) {
      std::vector<double> half;
      for (std::size_t j = parity; j < kF; j += 2) {
        half.push_back(x[p * kF + j]);
      }
      expectStats(&got[p * 6 + parity * 3], float64Stats(half), 5.0,
                  fmt::format("p{} parity {}", p, parity));
    }
  }
}

TEST(BnStats, Bf16OddSizeStridedAndPartialPartitions) {
  // 32 partitions at [32:64]; data read with stride 2 backwards (odd count 255); bf16 input.
  std::mt19937 rng(4);
  const Samples s = randomValues(kBf16, 32 * 510, -2, 3, rng);
  const auto got = valuesOf<float>(
      runDve("bn_stats dst=sbuf[32:64]+2048:fp32[[1,6]] data=sbuf[32:64]+1016:bf16[[-2,255]]",
             load("a", "bf16", 32, 32, 510, 0), {{"a", packWords(s.storage, 2)}}, 1,
             store("c", "fp32", 32, 32, 6, 2048)));
  for (std::size_t p = 0; p < 32; ++p) {
    std::vector<double> seq;  // element i of the pattern is stored element 508 - 2i
    for (std::size_t i = 0; i < 255; ++i) {
      seq.push_back(s.values[p * 510 + 508 - 2 * i]);
    }
    for (std::size_t parity = 0; parity < 2; ++parity) {
      std::vector<double> half;
      for (std::size_t j = parity; j < seq.size(); j += 2) {
        half.push_back(seq[j]);
      }
      expectStats(&got[p * 6 + parity * 3], float64Stats(half), 8.0,
                  fmt::format("p{} parity {}", p, parity));
    }
  }
}

TEST(BnStats, SingleElementHasAnEmptyOddHalf) {
  const auto got = valuesOf<float>(
      runDve("bn_stats dst=sbuf[0:2]+64:fp32[[1,6]] data=sbuf[0:2]:fp32[[1,1]]",
             load("a", "fp32", 0, 2, 1, 0), {{"a", bytesOf(std::vector<float>{7.5f, -1.0f})}}, 1,
             store("c", "fp32", 0, 2, 6, 64)));
  EXPECT_EQ(got, (std::vector<float>{1, 7.5f, 0, 0, 0, 0, 1, -1.0f, 0, 0, 0, 0}));
}

TEST(BnStats, Bf16OutputRoundsNearestEvenOrStochastically) {
  constexpr std::size_t kP = 64;
  constexpr std::size_t kF = 300;
  std::vector<float> x = randomFloats(kP * kF, 0.0f, 3.0f, 5);
  const std::string loads = load("a", "fp32", 0, kP, kF, 0);
  const std::string stores = store("c", "bf16", 0, kP, 6, 2048);
  const std::string_view instr =
      "bn_stats dst=sbuf[0:64]+2048:bf16[[1,6]] data=sbuf[0:64]:fp32[[1,300]]";
  const auto fp32 = valuesOf<float>(
      runDve("bn_stats dst=sbuf[0:64]+2048:fp32[[1,6]] data=sbuf[0:64]:fp32[[1,300]]", loads,
             {{"a", bytesOf(x)}}, 1, store("c", "fp32", 0, kP, 6, 2048)));
  const auto rne = unpackWords(runDve(instr, loads, {{"a", bytesOf(x)}}, 1, stores), 2);
  core::CoreOptions stochastic;
  stochastic.rounding = RoundingMode::kStochastic;
  stochastic.seed = 77;
  const auto sr1 = unpackWords(runDve(instr, loads, {{"a", bytesOf(x)}}, 1, stores, stochastic), 2);
  const auto sr2 = unpackWords(runDve(instr, loads, {{"a", bytesOf(x)}}, 1, stores, stochastic), 2);
  EXPECT_EQ(sr1, sr2);  // reproducible for a seed
  std::size_t roundedUp = 0;
  std::size_t inexact = 0;
  for (std::size_t i = 0; i < fp32.size(); ++i) {
    EXPECT_EQ(rne[i], encodeRne(fp32[i], kBf16)) << i;
    const double lowV = decode(encodeRne(fp32[i], kBf16), kBf16);
    const double exact = fp32[i];
    const double srV = decode(sr1[i], kBf16);
    if (lowV == exact) {
      EXPECT_EQ(srV, exact);
      continue;
    }
    ++inexact;
    // Stochastic results are one of the two neighbours of the fp32 value.
    const double q = std::ldexp(1.0, std::ilogb(exact) - 7);
    const double down = std::floor(exact / q) * q;
    EXPECT_TRUE(srV == down || srV == down + q) << i << ": " << exact << " -> " << srV;
    roundedUp += srV > exact ? 1 : 0;
  }
  EXPECT_GT(inexact, 100U);
  EXPECT_GT(roundedUp, inexact / 5);
  EXPECT_LT(roundedUp, inexact * 4 / 5);
}

TEST(BnStats, NanAndInfinityPropagateAndFp16OutputOverflowsToInfinity) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> data = {1,
                                   inf,
                                   3,
                                   5,  // odd half holds +Inf
                                   std::nanf(""),
                                   1,
                                   2,
                                   3,  // even half holds NaN
                                   60000,
                                   -60000,
                                   -60000,
                                   60000};  // M2 overflows fp16
  const auto got =
      unpackWords(runDve("bn_stats dst=sbuf[0:3]+64:fp16[[1,6]] data=sbuf[0:3]:fp32[[1,4]]",
                         load("a", "fp32", 0, 3, 4, 0), {{"a", bytesOf(data)}}, 1,
                         store("c", "fp16", 0, 3, 6, 64)),
                  2);
  std::vector<double> v(got.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    v[i] = decode(got[i], kFp16);
  }
  EXPECT_EQ(v[0], 2);
  EXPECT_EQ(v[1], 2);
  EXPECT_EQ(v[2], 2);
  EXPECT_EQ(v[4], inf);
  EXPECT_TRUE(std::isnan(v[5]));  // (inf - inf)^2
  EXPECT_TRUE(std::isnan(v[7]) && std::isnan(v[8]));
  EXPECT_EQ(v[10], 2);
  EXPECT_EQ(v[11], 2);
  EXPECT_EQ(v[13], 0);
  EXPECT_EQ(v[14], inf);  // 7.2e9 does not fit fp16
}

TEST(BnAggr, CombinesBnStatsChunksIntoMeanAndVariance) {
  // 2048 elements per partition as four 512-element bn_stats into one [P, 24] record.
  constexpr std::size_t kP = 64;
  constexpr std::size_t kF = 2048;
  std::vector<float> x = randomFloats(kP * kF, -1.0f, 9.0f, 8);
  std::string text = load("a", "fp32", 0, kP, kF, 0);
  for (int c = 0; c < 4; ++c) {
    text += fmt::format(
        "dve: bn_stats dst=sbuf[0:64]+{}:fp32[[1,6]] "
        "data=sbuf[0:64]+{}:fp32[[1,512]] {}\n",
        16384 + c * 24, c * 2048, c == 0 ? "wait(s0>=1)" : "");
  }
  text +=
      "dve: bn_aggr dst=sbuf[0:64]+20000:fp32[[1,2]] data=sbuf[0:64]+16384:fp32[[1,24]] "
      "signal(s9+=1)\n" +
      store("c", "fp32", 0, kP, 2, 20000);
  const auto got = valuesOf<float>(run(text, {{"a", bytesOf(x)}})["c"]);
  for (std::size_t p = 0; p < kP; ++p) {
    const Stats s = float64Stats(std::vector<double>(x.begin() + static_cast<long>(p * kF),
                                                     x.begin() + static_cast<long>((p + 1) * kF)));
    EXPECT_NEAR(got[p * 2], s.mean, 1e-5) << p;
    EXPECT_NEAR(got[p * 2 + 1], s.m2 / s.count, 1e-4) << p;
  }
}

TEST(BnAggr, SkipsEmptyTriplesAndMergesUnequalCounts) {
  // Triples given directly: (3, 1, 2), (0, 99, 99), (1, 5, 0) -> n 4, mean 2, M2 = 2 + 12 = 14.
  const std::vector<float> data = {3, 1, 2, 0, 99, 99, 1, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  const auto got = valuesOf<float>(runDve(
      "bn_aggr dst=sbuf[0:2]+128:fp32[[1,2]] data=sbuf[0:2]:fp32[[1,9]]",
      load("a", "fp32", 0, 2, 9, 0), {{"a", bytesOf(data)}}, 1, store("c", "fp32", 0, 2, 2, 128)));
  EXPECT_EQ(got[0], 2.0f);
  EXPECT_EQ(got[1], 3.5f);
  EXPECT_TRUE(std::isnan(got[2]) && std::isnan(got[3]));  // no elements at all
}

TEST(BnAggr, ReadsBf16RecordsAndWritesBf16) {
  // (2, 1.5, 0.5) and (2, 3.5, 0.5): n 4, mean 2.5, M2 = 1 + 4 * 2 * 2 / 4 = 5, variance 1.25.
  const std::vector<std::uint32_t> records = {0x4000, 0x3FC0, 0x3F00, 0x4000, 0x4060, 0x3F00};
  const auto got =
      unpackWords(runDve("bn_aggr dst=sbuf[96:97]+64:bf16[[1,2]] data=sbuf[96:97]:bf16[[1,6]]",
                         load("a", "bf16", 96, 1, 6, 0), {{"a", packWords(records, 2)}}, 1,
                         store("c", "bf16", 96, 1, 2, 64)),
                  2);
  EXPECT_EQ(got, (std::vector<std::uint32_t>{encodeRne(2.5, kBf16), encodeRne(1.25, kBf16)}));
}

// ---- max8 ----

std::vector<double> top8(std::vector<double> row) {
  std::stable_sort(row.begin(), row.end(), [](double a, double b) {
    if (std::isnan(a) != std::isnan(b)) {
      return std::isnan(a);
    }
    return a > b;
  });
  row.resize(8);
  return row;
}

TEST(Max8, FindsTheEightLargestDescendingWithDuplicatesNanAndInfinities) {
  constexpr std::size_t kP = 32;
  constexpr std::size_t kF = 1000;
  std::vector<float> x = randomFloats(kP * kF, -100.0f, 100.0f, 12);
  for (std::size_t p = 0; p < kP; ++p) {
    float* row = &x[p * kF];
    row[10] = row[20] = row[30] = 150.0f;  // duplicates among the top 8
    row[40] = -std::numeric_limits<float>::infinity();
    if (p % 4 == 1) {
      row[50] = std::numeric_limits<float>::infinity();
    }
    if (p % 4 == 2) {
      row[60] = std::numeric_limits<float>::quiet_NaN();
    }
  }
  const auto got =
      valuesOf<float>(runDve("max8 dst=sbuf[64:96]+8192:fp32[[1,8]] src=sbuf[64:96]:fp32[[1,1000]]",
                             load("a", "fp32", 64, kP, kF, 0), {{"a", bytesOf(x)}}, 1,
                             store("c", "fp32", 64, kP, 8, 8192)));
  for (std::size_t p = 0; p < kP; ++p) {
    const std::vector<double> want = top8(std::vector<double>(
        x.begin() + static_cast<long>(p * kF), x.begin() + static_cast<long>((p + 1) * kF)));
    for (std::size_t i = 0; i < 8; ++i) {
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(got[p * 8 + i])) << p << "," << i;
      } else {
        EXPECT_EQ(got[p * 8 + i], want[i]) << p << "," << i;
      }
    }
  }
}

TEST(Max8, Bf16SourceToFp16DestinationAndTheSizeLimits) {
  std::mt19937 rng(6);
  for (const std::size_t f : {std::size_t{8}, std::size_t{16384}}) {
    const Samples s = randomValues(kBf16, 4 * f, -3, 6, rng);
    const auto got = unpackWords(
        runDve(fmt::format("max8 dst=sbuf[0:4]+40000:fp16[[1,8]] src=sbuf[0:4]:bf16[[1,{}]]", f),
               load("a", "bf16", 0, 4, static_cast<std::int64_t>(f), 0),
               {{"a", packWords(s.storage, 2)}}, 1, store("c", "fp16", 0, 4, 8, 40000)),
        2);
    for (std::size_t p = 0; p < 4; ++p) {
      const auto want =
          top8(std::vector<double>(s.values.begin() + static_cast<long>(p * f),
                                   s.values.begin() + static_cast<long>((p + 1) * f)));
      for (std::size_t i = 0; i < 8; ++i) {
        EXPECT_EQ(got[p * 8 + i], encodeRne(want[i], kFp16)) << f << ": " << p << "," << i;
      }
    }
  }
}

TEST(Max8, Int32NegativeStrideSaturatesIntoInt16) {
  std::mt19937 rng(14);
  std::vector<std::int32_t> x(32 * 40);
  for (std::int32_t& v : x) {
    v = static_cast<std::int32_t>(rng() % 200001) - 100000;
  }
  const auto got = valuesOf<std::int16_t>(
      runDve("max8 dst=sbuf[96:128]+512:int16[[1,8]] src=sbuf[96:128]+156:int32[[-1,40]]",
             load("a", "int32", 96, 32, 40, 0), {{"a", bytesOf(x)}}, 1,
             store("c", "int16", 96, 32, 8, 512)));
  for (std::size_t p = 0; p < 32; ++p) {
    const auto want = top8(std::vector<double>(x.begin() + static_cast<long>(p * 40),
                                               x.begin() + static_cast<long>((p + 1) * 40)));
    for (std::size_t i = 0; i < 8; ++i) {
      EXPECT_EQ(got[p * 8 + i], std::clamp(want[i], -32768.0, 32767.0)) << p << "," << i;
    }
  }
}

// ---- nc_find_index8 / nc_match_replace8 ----

TEST(NcFindIndex8, FirstOccurrencesDuplicatesAscendingMissingAllOnes) {
  // Partition 0 is the documented example; partition 1 has duplicates beyond the data's
  // occurrences, a missing value and -0 matching 0; indices in uint32 and uint16.
  std::vector<float> data(2 * 11, 0.0f);
  const float row0[] = {1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8};
  const float row1[] = {5, 6, 7, 6, 9, 1.00390625f, 6, -0.0f, 11, 12, 13};
  std::copy(std::begin(row0), std::end(row0), data.begin());
  std::copy(std::begin(row1), std::end(row1), data.begin() + 11);
  const std::vector<float> vals = {3, 8, 8, 8, 8,  8,           8,    8,  //
                                   6, 6, 6, 6, 42, 1.00390625f, 0.0f, 5};
  for (const auto& [type, width, none] :
       {std::tuple{"uint32", 4, 0xFFFFFFFFu}, std::tuple{"uint16", 2, 0xFFFFu}}) {
    const auto got = unpackWords(
        run(load("a", "fp32", 0, 2, 11, 0) + load("v", "fp32", 0, 2, 8, 256) +
                fmt::format("dve: nc_find_index8 dst=sbuf[0:2]+512:{0}[[1,8]] "
                            "data=sbuf[0:2]:fp32[[1,11]] vals=sbuf[0:2]+256:fp32[[1,8]] "
                            "wait(s0>=2) signal(s9+=1)\n",
                            type) +
                store("c", type, 0, 2, 8, 512),
            {{"a", bytesOf(data)}, {"v", bytesOf(vals)}})["c"],
        width);
    const std::vector<std::uint32_t> want = {2, 4, 5, 6,    7,    8, 9, 10,  //
                                             1, 3, 6, none, none, 5, 7, 0};
    EXPECT_EQ(got, want) << type;
  }
}

TEST(NcFindIndex8, Bf16StridedDataOnPartialPartitions) {
  // data is every other element of a bf16 row at partitions [32:64]; vals picked from it.
  std::mt19937 rng(15);
  std::vector<std::uint32_t> raw(32 * 40);
  for (std::uint32_t& w : raw) {
    w = 0x3F80 + (rng() % 24);  // few distinct values: plenty of duplicates
  }
  std::vector<std::uint32_t> vals(32 * 8);
  for (std::uint32_t& w : vals) {
    w = 0x3F80 + (rng() % 30);
  }
  const auto got = unpackWords(
      run(load("a", "bf16", 32, 32, 40, 0) + load("v", "bf16", 32, 32, 8, 128) +
              "dve: nc_find_index8 dst=sbuf[32:64]+256:uint32[[1,8]] "
              "data=sbuf[32:64]:bf16[[2,20]] vals=sbuf[32:64]+128:bf16[[1,8]] wait(s0>=2) "
              "signal(s9+=1)\n" +
              store("c", "uint32", 32, 32, 8, 256),
          {{"a", packWords(raw, 2)}, {"v", packWords(vals, 2)}})["c"],
      4);
  for (std::size_t p = 0; p < 32; ++p) {
    std::vector<bool> claimed(20);
    for (std::size_t i = 0; i < 8; ++i) {
      std::uint32_t want = 0xFFFFFFFFu;
      for (std::size_t j = 0; j < 20; ++j) {
        if (!claimed[j] && raw[p * 40 + 2 * j] == vals[p * 8 + i]) {
          claimed[j] = true;
          want = static_cast<std::uint32_t>(j);
          break;
        }
      }
      EXPECT_EQ(got[p * 8 + i], want) << p << "," << i;
    }
  }
}

TEST(NcMatchReplace8, DocumentedDuplicateOrderAndBitExactPassThrough) {
  // bf16 data with a NaN payload that must survive; replaced positions get imm.
  std::vector<std::uint32_t> data = {0x3F80, 0x4000, 0x4040, 0x4080, 0x4100, 0x4100,
                                     0x4100, 0x4100, 0x4100, 0x4100, 0x4100, 0x7F81};
  const std::vector<std::uint32_t> vals = {0x4040, 0x4100, 0x4100, 0x4100,
                                           0x4100, 0x4100, 0x4100, 0x4100};
  const std::string text = load("a", "bf16", 0, 1, 12, 0) + load("v", "bf16", 0, 1, 8, 256) +
                           "dve: nc_match_replace8 dst=sbuf[0:1]+512:bf16[[1,12]] "
                           "data=sbuf[0:1]:bf16[[1,12]] vals=sbuf[0:1]+256:bf16[[1,8]] imm=-7.5 "
                           "dst_idx=sbuf[0:1]+1024:uint32[[1,8]] wait(s0>=2) signal(s9+=1)\n" +
                           store("c", "bf16", 0, 1, 12, 512) + store("i", "uint32", 0, 1, 8, 1024);
  TensorBytes out = run(text, {{"a", packWords(data, 2)}, {"v", packWords(vals, 2)}});
  EXPECT_EQ(unpackWords(out["i"], 4), (std::vector<std::uint32_t>{2, 10, 9, 8, 7, 6, 5, 4}));
  std::vector<std::uint32_t> want = data;
  for (const std::size_t j : {2, 4, 5, 6, 7, 8, 9, 10}) {
    want[j] = 0xC0F0;  // bf16 -7.5
  }
  EXPECT_EQ(unpackWords(out["c"], 2), want);
}

TEST(NcMatchReplace8, CastsToANewDtypeAndReportsMissingValues) {
  std::mt19937 rng(10);
  constexpr std::size_t kP = 32;
  constexpr std::size_t kF = 64;
  std::vector<float> data = randomFloats(kP * kF, -1.0f, 1.0f, 3);
  std::vector<float> vals(kP * 8);
  for (std::size_t p = 0; p < kP; ++p) {
    for (std::size_t i = 0; i < 8; ++i) {
      vals[p * 8 + i] = i == 3 ? 5.0f : data[p * kF + (rng() % kF)];
    }
  }
  const std::string text =
      load("a", "fp32", 32, kP, kF, 0) + load("v", "fp32", 32, kP, 8, 512) +
      "dve: nc_match_replace8 dst=psum[32:64]:bf16[[1,64]] data=sbuf[32:64]:fp32[[1,64]] "
      "vals=sbuf[32:64]+512:fp32[[1,8]] imm=0 dst_idx=sbuf[32:64]+1024:uint16[[1,8]] "
      "wait(s0>=2) signal(s1+=1)\n"
      "dve: tensor_copy dst=sbuf[32:64]+2048:bf16[[1,64]] src=psum[32:64]:bf16[[1,64]] "
      "signal(s9+=1)\n" +
      store("c", "bf16", 32, kP, kF, 2048) + store("i", "uint16", 32, kP, 8, 1024);
  TensorBytes out = run(text, {{"a", bytesOf(data)}, {"v", bytesOf(vals)}});
  const auto got = unpackWords(out["c"], 2);
  const auto idx = unpackWords(out["i"], 2);
  for (std::size_t p = 0; p < kP; ++p) {
    std::vector<bool> claimed(kF);
    std::vector<std::uint32_t> wantIdx(8, 0xFFFF);
    for (std::size_t i = 8; i-- > 0;) {
      for (std::size_t j = 0; j < kF; ++j) {
        if (!claimed[j] && data[p * kF + j] == vals[p * 8 + i]) {
          claimed[j] = true;
          wantIdx[i] = static_cast<std::uint32_t>(j);
          break;
        }
      }
    }
    for (std::size_t i = 0; i < 8; ++i) {
      EXPECT_EQ(idx[p * 8 + i], wantIdx[i]) << p << "," << i;
    }
    for (std::size_t j = 0; j < kF; ++j) {
      EXPECT_EQ(got[p * kF + j], claimed[j] ? 0u : encodeRne(data[p * kF + j], kBf16)) << p << j;
    }
  }
}

// ---- nc_stream_shuffle ----

TEST(NcStreamShuffle, PermutesWithinQuadrantsAndKeepsMaskedPartitions) {
  // 128 partitions: mask reverses each quadrant, except entries 5 and 6 keep dst.
  constexpr std::size_t kF = 10;
  std::mt19937 rng(13);
  std::vector<std::uint32_t> src(128 * kF);
  std::vector<std::uint32_t> old(128 * kF);
  for (std::size_t i = 0; i < src.size(); ++i) {
    src[i] = rng() & 0xFFFF;
    old[i] = rng() & 0xFFFF;
  }
  src[3] = 0x7F81;  // NaN payload copied bit for bit
  std::vector<std::int64_t> mask(32);
  for (std::size_t i = 0; i < 32; ++i) {
    mask[i] = 31 - static_cast<std::int64_t>(i);
  }
  mask[5] = mask[6] = 255;
  const std::string text =
      load("a", "bf16", 0, 128, kF, 0) + load("d", "bf16", 0, 128, kF, 64) +
      fmt::format(
          "dve: nc_stream_shuffle dst=sbuf[0:128]+64:bf16[[1,10]] "
          "src=sbuf[0:128]:bf16[[1,10]] shuffle_mask=[{}] wait(s0>=2) signal(s9+=1)\n",
          fmt::join(mask, ",")) +
      store("c", "bf16", 0, 128, kF, 64);
  const auto got =
      unpackWords(run(text, {{"a", packWords(src, 2)}, {"d", packWords(old, 2)}})["c"], 2);
  for (std::size_t d = 0; d < 128; ++d) {
    const std::int64_t m = mask[d % 32];
    for (std::size_t j = 0; j < kF; ++j) {
      const std::uint32_t want =
          m == 255 ? old[d * kF + j] : src[(d / 32 * 32 + static_cast<std::size_t>(m)) * kF + j];
      ASSERT_EQ(got[d * kF + j], want) << d << "," << j;
    }
  }
}

TEST(NcStreamShuffle, BroadcastsAcrossQuadrantsAndShufflesInPlace) {
  // src [0:32] broadcast of partition 7 to dst [64:96]; then an in-place rotation of [0:32].
  std::vector<std::int32_t> src(32 * 3);
  std::iota(src.begin(), src.end(), 1000);
  std::vector<std::int64_t> rotate(32);
  for (std::size_t i = 0; i < 32; ++i) {
    rotate[i] = static_cast<std::int64_t>((i + 1) % 32);
  }
  const std::string text =
      load("a", "int32", 0, 32, 3, 0) +
      fmt::format(
          "dve: nc_stream_shuffle dst=sbuf[64:96]+256:int32[[1,3]] "
          "src=sbuf[0:32]:int32[[1,3]] shuffle_mask=[{}] wait(s0>=1)\n"
          "dve: nc_stream_shuffle dst=sbuf[0:32]:int32[[1,3]] src=sbuf[0:32]:int32[[1,3]] "
          "shuffle_mask=[{}] signal(s9+=1)\n",
          fmt::join(std::vector<int>(32, 7), ","), fmt::join(rotate, ",")) +
      store("c", "int32", 64, 32, 3, 256) + store("r", "int32", 0, 32, 3, 0);
  TensorBytes out = run(text, {{"a", bytesOf(src)}});
  const auto broadcast = valuesOf<std::int32_t>(out["c"]);
  const auto rotated = valuesOf<std::int32_t>(out["r"]);
  for (std::size_t d = 0; d < 32; ++d) {
    for (std::size_t j = 0; j < 3; ++j) {
      EXPECT_EQ(broadcast[d * 3 + j], src[7 * 3 + j]);
      EXPECT_EQ(rotated[d * 3 + j], src[((d + 1) % 32) * 3 + j]);
    }
  }
}

TEST(NcStreamShuffle, StridedSourceAndNegativeStrideDestination) {
  // fp8 rows: src takes every other byte, dst is written backwards; mask swaps neighbours.
  std::vector<std::uint32_t> src(32 * 12);
  for (std::size_t i = 0; i < src.size(); ++i) {
    src[i] = static_cast<std::uint32_t>(i * 37) & 0xFF;
  }
  std::vector<std::int64_t> mask(32);
  for (std::size_t i = 0; i < 32; ++i) {
    mask[i] = static_cast<std::int64_t>(i ^ 1);
  }
  const auto got = unpackWords(
      run(load("a", "fp8_e4m3", 0, 32, 12, 0) +
              fmt::format("dve: nc_stream_shuffle dst=sbuf[0:32]+69:fp8_e4m3[[-1,6]] "
                          "src=sbuf[0:32]:fp8_e4m3[[2,6]] shuffle_mask=[{}] wait(s0>=1) "
                          "signal(s9+=1)\n",
                          fmt::join(mask, ",")) +
              store("c", "fp8_e4m3", 0, 32, 6, 64),
          {{"a", packWords(src, 1)}})["c"],
      1);
  for (std::size_t d = 0; d < 32; ++d) {
    for (std::size_t j = 0; j < 6; ++j) {
      EXPECT_EQ(got[d * 6 + (5 - j)], src[(d ^ 1) * 12 + 2 * j]) << d << "," << j;
    }
  }
}

// ---- verifier rules ----

TEST(VectorSpecialVerifier, BnStatsAndBnAggrShapes) {
  expectRejected(
      "dve: bn_stats dst=sbuf[0:4]:fp32[[1,5]] data=sbuf[0:4]+64:fp32[[1,8]]",
      {"dve#0 'bn_stats", "operand 'dst': has 5 elements per partition; it must have 6"});
  expectRejected("dve: bn_stats dst=sbuf[0:4]:fp32[[1,6]] data=sbuf[0:4]+64:fp32[[1,513]]",
                 {"operand 'data': free size 513 exceeds 512 (bn_stats_fmax)"});
  expectRejected("dve: bn_stats dst=sbuf[0:8]:fp32[[1,6]] data=sbuf[0:4]+64:fp32[[1,8]]",
                 {"operand 'dst': covers 8 partitions but 'data' covers 4"});
  expectRejected("dve: bn_aggr dst=sbuf[0:4]:fp32[[1,2]] data=sbuf[0:4]+64:fp32[[1,7]]",
                 {"operand 'data': has 7 elements per partition", "multiple of 3"});
  expectRejected("dve: bn_aggr dst=sbuf[0:4]:fp32[[1,3]] data=sbuf[0:4]+64:fp32[[1,6]]",
                 {"operand 'dst': has 3 elements per partition; it must have 2"});
}

TEST(VectorSpecialVerifier, SearchInstructionShapesAndDtypes) {
  expectRejected(
      "dve: max8 dst=sbuf[0:4]:fp32[[1,8]] src=sbuf[0:4]+64:fp32[[1,7]]",
      {"operand 'src': has 7 elements per partition; this instruction takes 8 to 16384"});
  expectRejected("dve: max8 dst=sbuf[0:4]:fp32[[1,9]] src=sbuf[0:4]+64:fp32[[1,70]]",
                 {"operand 'dst': has 9 elements per partition; it must have 8"});
  expectRejected(
      "dve: nc_find_index8 dst=sbuf[0:4]:fp32[[1,8]] data=sbuf[0:4]+64:fp32[[1,16]] "
      "vals=sbuf[0:4]+256:fp32[[1,8]]",
      {"operand 'dst': dtype fp32 is not allowed here (allowed: uint16, uint32)"});
  expectRejected(
      "dve: nc_find_index8 dst=sbuf[0:4]:uint32[[1,8]] data=sbuf[0:4]+64:fp32[[1,16]] "
      "vals=sbuf[0:4]+256:fp32[[1,7]]",
      {"operand 'vals': has 7 elements per partition; it must have 8"});
  expectRejected(
      "dve: nc_find_index8 dst=sbuf[0:4]:uint32[[1,8]] data=sbuf[0:4]+64:fp32[[1,16]] "
      "vals=sbuf[0:2]+256:fp32[[1,8]]",
      {"operand 'vals': covers 2 partitions but 'data' covers 4"});
  expectRejected(
      "dve: nc_match_replace8 dst=sbuf[0:4]:fp32[[1,16]] data=sbuf[0:4]+64:fp32[[1,17]] "
      "vals=sbuf[0:4]+256:fp32[[1,8]]",
      {"operands 'dst' [4 partitions x 16] and 'data' [4 partitions x 17] differ"});
  expectRejected(
      "dve: nc_match_replace8 dst=sbuf[0:4]:fp32[[1,16]] data=sbuf[0:4]+64:fp32[[1,16]] "
      "vals=sbuf[0:4]+256:fp32[[1,8]] dst_idx=sbuf[0:4]+512:int32[[1,8]]",
      {"operand 'dst_idx': dtype int32 is not allowed here (allowed: uint16, uint32)"});
  expectRejected(
      "dve: nc_match_replace8 dst=sbuf[0:4]:fp32[[1,16385]] "
      "data=sbuf[0:4]+65600:fp32[[1,16385]] vals=sbuf[0:4]+131200:fp32[[1,8]]",
      {"operand 'data': has 16385 elements per partition; this instruction takes 1 to "
       "16384"});
}

TEST(VectorSpecialVerifier, StreamShuffleRules) {
  const std::string identity = fmt::format("[{}]", fmt::join(std::vector<int>(32, 0), ","));
  expectRejected("dve: nc_stream_shuffle dst=sbuf[0:32]:fp32[[1,4]] src=sbuf[0:32]+64:bf16[[1,4]]",
                 {"operand 'dst': dtype fp32 differs from src's bf16"});
  expectRejected("dve: nc_stream_shuffle dst=sbuf[0:32]:fp32[[1,4]] src=sbuf[0:32]+64:fp32[[1,5]]",
                 {"operand 'dst': has 4 elements per partition but src has 5"});
  std::vector<int> bad(32, 0);
  bad[9] = 40;
  expectRejected(fmt::format("dve: nc_stream_shuffle dst=sbuf[0:32]:fp32[[1,4]] "
                             "src=sbuf[0:32]+64:fp32[[1,4]] shuffle_mask=[{}]",
                             fmt::join(bad, ",")),
                 {"operand 'shuffle_mask': entry 9 is 40"});
  expectRejected(
      "dve: nc_stream_shuffle dst=sbuf[0:64]:fp32[[1,4]] src=sbuf[32:48]+64:fp32[[1,4]] "
      "shuffle_mask=" +
          identity,
      {"operand 'src': starts at partition 32, but a shuffle with 64 active partitions",
       "must start at 0 or 64"});
  expectRejected(
      "dve: nc_stream_shuffle dst=sbuf[0:64]:fp32[[1,4]] src=sbuf[0:32]+64:fp32[[1,4]] "
      "shuffle_mask=" +
          identity,
      {"operand 'shuffle_mask': entry 0 sends src partition 32 to dst partition 32, "
       "but src covers only 32 partitions"});
  EXPECT_EQ(verifyError("dve: nc_stream_shuffle dst=sbuf[64:80]:fp32[[1,4]] "
                        "src=sbuf[0:32]+64:fp32[[1,4]] shuffle_mask=" +
                        identity),
            "");
}

}  // namespace
}  // namespace trn::isa
