// Golden tests of the DMA instructions against float64 references: dma_copy in every direction,
// with casts (nearest-even and stochastic), strided, negative-stride and partial-partition
// patterns, indirect gather and scatter with in-range, out-of-range and skipped indices;
// dma_transpose; dma_compute; and one test per instruction-specific verifier rule.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "dma_scalar_reference.h"
#include "run_program.h"
#include "trn/isa/program_text.h"
#include "trn/isa/verifier.h"

namespace trn::isa {
namespace {

using testref::decode;
using testref::expectSameValue;
using testref::kBf16;
using testref::kFp32;
using testref::roundNearestEven;
using trn::testing::fromBytes;
using trn::testing::TensorBytes;
using testref::run;
using trn::testing::toBytes;

Status runError(std::string_view text, const TensorBytes& inputs) {
  return trn::testing::runProgram(text, inputs).status();
}

std::vector<std::byte> randomBytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> bytes(n);
  for (std::byte& b : bytes) {
    b = static_cast<std::byte>(rng() & 0xff);
  }
  return bytes;
}

void expectContains(const Status& s, std::initializer_list<std::string_view> fragments) {
  ASSERT_FALSE(s.ok());
  for (const std::string_view f : fragments) {
    EXPECT_NE(s.message().find(f), std::string::npos) << "missing '" << f << "' in: " << s.message();
  }
}

TEST(DmaCopy, EveryDtypeMovesBitExactlyInEveryDirection) {
  for (const char* t : {"fp32", "tf32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "int8", "int16",
                        "int32", "uint8", "uint16", "uint32"}) {
    const int width = byteSize(parseDType(t).value());
    const std::string text = fmt::format(R"(
.tensor a input {0} [128, 16]
.tensor c output {0} [128, 16]
.tensor d output {0} [128, 16]
sp:   dma_copy dst=sbuf[0:128]+64:{0}[[1,16]] src=hbm:a:{0}[[16,128],[1,16]] signal(s0+=1)
act:  dma_copy dst=sbuf[0:128]+192:{0}[[1,16]] src=sbuf[0:128]+64:{0}[[1,16]] queue=3 wait(s0>=1) signal(s1+=1)
pool: dma_copy dst=hbm:c:{0}[[16,128],[1,16]] src=sbuf[0:128]+192:{0}[[1,16]] queue=15 wait(s1>=1)
pe:   dma_copy dst=hbm:d:{0}[[16,128],[1,16]] src=hbm:a:{0}[[16,128],[1,16]] queue=7
)",
                                         t);
    const std::vector<std::byte> a = randomBytes(128 * 16 * static_cast<std::size_t>(width), 1);
    const TensorBytes out = run(text, {{"a", a}});
    EXPECT_EQ(out.at("c"), a) << t;
    EXPECT_EQ(out.at("d"), a) << t;
  }
}

TEST(DmaCopy, StridedNegativeStrideAndPartialPartitionPatterns) {
  std::vector<float> a(8 * 32);
  for (int r = 0; r < 8; ++r) {
    for (int j = 0; j < 32; ++j) {
      a[static_cast<std::size_t>(r * 32 + j)] = static_cast<float>(r * 100 + j);
    }
  }
  // Row r of sbuf[32:40] gets a[r][31], a[r][29], ..., a[r][1]; reading it back reversed gives
  // c[r][j] = a[r][1 + 2j]. Every other row of a, two free dims, lands in partitions 97..100;
  // an SBUF pattern with a negative outer stride swaps the two halves on the way out.
  const std::string_view text = R"(
.tensor a input fp32 [8, 32]
.tensor c output fp32 [8, 16]
.tensor e output fp32 [4, 8]
sp: dma_copy dst=sbuf[32:40]:fp32[[1,16]] src=hbm:a+124:fp32[[32,8],[-2,16]] signal(s0+=1)
sp: dma_copy dst=hbm:c:fp32[[16,8],[1,16]] src=sbuf[32:40]+60:fp32[[-1,16]] wait(s0>=1)
sp: dma_copy dst=sbuf[97:101]+128:fp32[[1,8]] src=hbm:a+8:fp32[[64,4],[16,2],[1,4]] signal(s1+=1)
sp: dma_copy dst=hbm:e:fp32[[8,4],[1,8]] src=sbuf[97:101]+144:fp32[[-4,2],[1,4]] wait(s1>=1)
)";
  const TensorBytes out = run(text, {{"a", toBytes(a)}});
  const std::vector<float> c = fromBytes<float>(out.at("c"));
  const std::vector<float> e = fromBytes<float>(out.at("e"));
  for (int r = 0; r < 8; ++r) {
    for (int j = 0; j < 16; ++j) {
      EXPECT_EQ(c[static_cast<std::size_t>(r * 16 + j)], r * 100 + 1 + 2 * j) << r << "," << j;
    }
  }
  for (int r = 0; r < 4; ++r) {
    for (int i = 0; i < 2; ++i) {
      for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(e[static_cast<std::size_t>(r * 8 + i * 4 + k)],
                  2 * r * 100 + 2 + 16 * (1 - i) + k)
            << r << "," << i << "," << k;
      }
    }
  }
}

/// Values that exercise rounding ties, overflow, denormals and specials of the narrow formats.
std::vector<float> castEdgeValues() {
  std::vector<float> v = {0.0f, -0.0f, 1.0f, 1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f,
                          1.0f + 0x1p-8f + 0x1p-20f, -1.5f, 3.14159265f, 65504.0f, 65519.0f,
                          65520.0f, 70000.0f, 1e-5f, 0x1p-25f, 3 * 0x1p-26f, 240.0f, 247.9f, 248.0f,
                          0x1p-9f, 0x1p-10f, 3 * 0x1p-11f, 1e-40f, -1e-45f, 0x1.fffffep127f,
                          -0x1.fffffep127f, 0x1.fep127f, 57344.0f, 61439.0f, 61440.0f, 1e20f,
                          INFINITY, -INFINITY, NAN, -NAN};
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> mantissa(-2.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-30, 30);
  while (v.size() < 512) {
    v.push_back(std::ldexp(mantissa(rng), exponent(rng)));
  }
  return v;
}

TEST(DmaCopy, CastsFromFp32RoundToNearestEven) {
  const std::vector<float> values = castEdgeValues();
  const std::size_t n = values.size();
  for (const auto& [name, format] : {std::pair{"bf16", kBf16}, std::pair{"fp16", testref::kFp16},
                                     std::pair{"fp8_e4m3", testref::kFp8E4m3},
                                     std::pair{"fp8_e5m2", testref::kFp8E5m2}}) {
    const std::string text = fmt::format(R"(
.tensor a input fp32 [1, {1}]
.tensor c output {0} [1, {1}]
.tensor d output {0} [1, {1}]
sp: dma_copy dst=sbuf[0:1]:{0}[[1,{1}]] src=hbm:a:fp32[[{1},1],[1,{1}]] signal(s0+=1)
sp: dma_copy dst=hbm:c:{0}[[{1},1],[1,{1}]] src=sbuf[0:1]:{0}[[1,{1}]] wait(s0>=1)
sp: dma_copy dst=hbm:d:{0}[[{1},1],[1,{1}]] src=hbm:a:fp32[[{1},1],[1,{1}]]
)",
                                         name, n);
    const TensorBytes out = run(text, {{"a", toBytes(values)}});
    const std::vector<double> c = testref::decodeAll(out.at("c"), format);
    const std::vector<double> d = testref::decodeAll(out.at("d"), format);
    for (std::size_t i = 0; i < n; ++i) {
      const double want = roundNearestEven(values[i], format);
      expectSameValue(c[i], want, fmt::format("{} hbm->sbuf of {}", name, values[i]));
      expectSameValue(d[i], want, fmt::format("{} hbm->hbm of {}", name, values[i]));
    }
  }
}

TEST(DmaCopy, CastToFp8E4m3FnSaturatesBecauseTheFormatHasNoInfinity) {
  // OCP e4m3fn: max 448 = 0x7e, NaN = 0x7f; overflow and +-Inf give +-448 (docs/numerics.md).
  const std::vector<float> values = {448.0f, 464.0f, 500.0f, 1e30f, INFINITY, -INFINITY, -600.0f,
                                     NAN, 0x1p-9f, 0x1p-10f, 416.0f, 432.0f};
  const std::vector<std::uint8_t> want = {0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0xfe, 0xfe,
                                          0x7f, 0x01, 0x00, 0x7d, 0x7e};
  const TensorBytes out = run(R"(
.tensor a input fp32 [1, 12]
.tensor c output fp8_e4m3fn [1, 12]
sp: dma_copy dst=hbm:c:fp8_e4m3fn[[12,1],[1,12]] src=hbm:a:fp32[[12,1],[1,12]]
)",
                              {{"a", toBytes(values)}});
  const std::vector<std::uint8_t> got = fromBytes<std::uint8_t>(out.at("c"));
  for (std::size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(got[i] & (std::isnan(values[i]) ? 0x7f : 0xff), want[i]) << values[i];
  }
}

TEST(DmaCopy, StochasticCastIsReproducibleAndUnbiased) {
  constexpr int kHalf = 4096;
  for (const auto& [name, format] :
       {std::pair{"bf16", kBf16}, std::pair{"fp8_e4m3", testref::kFp8E4m3}}) {
    // A value a quarter of a spacing above 1 and a negative one three quarters past 3.
    const auto q1 = static_cast<float>(std::ldexp(1.0, -format.mantissaBits));
    const float up = 1.0f + 0.25f * q1;
    const float down = -(3.0f + 0.75f * 2 * q1);
    std::vector<float> values(2 * kHalf, up);
    std::fill(values.begin() + kHalf, values.end(), down);
    const std::string text = fmt::format(R"(
.tensor a input fp32 [8, 1024]
.tensor c output {0} [8, 1024]
sp: dma_copy dst=sbuf[0:8]:{0}[[1,1024]] src=hbm:a:fp32[[1024,8],[1,1024]] signal(s0+=1)
sp: dma_copy dst=hbm:c:{0}[[1024,8],[1,1024]] src=sbuf[0:8]:{0}[[1,1024]] wait(s0>=1)
)",
                                         name);
    core::CoreOptions options;
    options.rounding = RoundingMode::kStochastic;
    options.seed = 11;
    const std::vector<std::byte> first = run(text, {{"a", toBytes(values)}}, options).at("c");
    const std::vector<std::byte> again = run(text, {{"a", toBytes(values)}}, options).at("c");
    EXPECT_EQ(first, again) << name << ": same seed, same bytes";
    options.seed = 12;
    EXPECT_NE(run(text, {{"a", toBytes(values)}}, options).at("c"), first) << name;
    const std::vector<double> c = testref::decodeAll(first, format);
    for (const int half : {0, 1}) {
      const float v = half == 0 ? up : down;
      const auto [low, high] = testref::neighbours(v, format);
      int away = 0;
      for (int i = 0; i < kHalf; ++i) {
        const double got = c[static_cast<std::size_t>(half * kHalf + i)];
        ASSERT_TRUE(got == low || got == high) << name << ": " << got << " for " << v;
        away += got == high ? 1 : 0;
      }
      // P(away from zero) is the discarded fraction: 0.25 and 0.75 (4.4 sigma bound).
      EXPECT_NEAR(static_cast<double>(away) / kHalf, half == 0 ? 0.25 : 0.75, 0.03) << name;
    }
  }
}

TEST(DmaCopy, WideningAndIntegerCasts) {
  // Every bf16 pattern widens exactly (HBM -> HBM with cast).
  std::vector<std::uint16_t> all(65536);
  for (std::size_t i = 0; i < all.size(); ++i) {
    all[i] = static_cast<std::uint16_t>(i);
  }
  const TensorBytes wide = run(R"(
.tensor a input bf16 [256, 256]
.tensor c output fp32 [256, 256]
sp: dma_copy dst=hbm:c:fp32[[256,256],[1,256]] src=hbm:a:bf16[[256,256],[1,256]]
)",
                               {{"a", toBytes(all)}});
  const std::vector<double> c = testref::decodeAll(wide.at("c"), kFp32);
  for (std::size_t i = 0; i < all.size(); ++i) {
    expectSameValue(c[i], decode(all[i], kBf16), fmt::format("bf16 {:#06x}", all[i]));
  }

  // int32 -> fp32 rounds to nearest even above 2^24; fp32 -> integers rounds to nearest even and
  // saturates, NaN giving 0; int16 -> bf16 rounds.
  const std::vector<std::int32_t> ints = {0, 1, -1, 16777217, 16777219, 2147483647, -2147483647 - 1,
                                          123456789};
  const std::vector<float> floats = {2.5f, 3.5f, -2.5f, -0.5f, 0.5f, 1.5f, 1e10f, -1e10f, NAN,
                                     127.5f, 300.0f, -300.0f, INFINITY, -129.0f, 254.5f, 255.5f};
  const std::vector<std::int16_t> shorts = {257, 259, -32768, 32767, 1, -1, 383, 385};
  const std::string text = R"(
.tensor i input int32 [1, 8]
.tensor f input fp32 [1, 16]
.tensor h input int16 [1, 8]
.tensor i2f output fp32 [1, 8]
.tensor f2i output int32 [1, 16]
.tensor f2b output int8 [1, 16]
.tensor f2u output uint8 [1, 16]
.tensor h2b output bf16 [1, 8]
sp: dma_copy dst=sbuf[0:1]:fp32[[1,8]] src=hbm:i:int32[[8,1],[1,8]] signal(s0+=1)
sp: dma_copy dst=hbm:i2f:fp32[[8,1],[1,8]] src=sbuf[0:1]:fp32[[1,8]] wait(s0>=1)
sp: dma_copy dst=sbuf[1:2]:int32[[1,16]] src=hbm:f:fp32[[16,1],[1,16]] signal(s1+=1)
sp: dma_copy dst=hbm:f2i:int32[[16,1],[1,16]] src=sbuf[1:2]:int32[[1,16]] wait(s1>=1)
sp: dma_copy dst=hbm:f2b:int8[[16,1],[1,16]] src=hbm:f:fp32[[16,1],[1,16]]
sp: dma_copy dst=hbm:f2u:uint8[[16,1],[1,16]] src=hbm:f:fp32[[16,1],[1,16]]
sp: dma_copy dst=hbm:h2b:bf16[[8,1],[1,8]] src=hbm:h:int16[[8,1],[1,8]]
)";
  const TensorBytes out =
      run(text, {{"i", toBytes(ints)}, {"f", toBytes(floats)}, {"h", toBytes(shorts)}});
  const std::vector<float> i2f = fromBytes<float>(out.at("i2f"));
  for (std::size_t k = 0; k < ints.size(); ++k) {
    EXPECT_EQ(i2f[k], roundNearestEven(ints[k], kFp32)) << ints[k];
  }
  auto toInteger = [](float x, double lo, double hi) {
    return std::isnan(x) ? 0.0 : std::clamp(std::nearbyint(static_cast<double>(x)), lo, hi);
  };
  const std::vector<std::int32_t> f2i = fromBytes<std::int32_t>(out.at("f2i"));
  const std::vector<std::int8_t> f2b = fromBytes<std::int8_t>(out.at("f2b"));
  const std::vector<std::uint8_t> f2u = fromBytes<std::uint8_t>(out.at("f2u"));
  for (std::size_t k = 0; k < floats.size(); ++k) {
    EXPECT_EQ(f2i[k], toInteger(floats[k], -2147483648.0, 2147483647.0)) << floats[k];
    EXPECT_EQ(f2b[k], toInteger(floats[k], -128.0, 127.0)) << floats[k];
    EXPECT_EQ(f2u[k], toInteger(floats[k], 0.0, 255.0)) << floats[k];
  }
  const std::vector<double> h2b = testref::decodeAll(out.at("h2b"), kBf16);
  for (std::size_t k = 0; k < shorts.size(); ++k) {
    EXPECT_EQ(h2b[k], roundNearestEven(shorts[k], kBf16)) << shorts[k];
  }
}

// ---- indirect (gather / scatter) ----

std::vector<float> tableValues(int rows, int cols) {
  std::vector<float> t(static_cast<std::size_t>(rows * cols));
  std::mt19937 rng(9);
  std::normal_distribution<float> dist(0.0f, 10.0f);
  for (float& x : t) {
    x = dist(rng);
  }
  return t;
}

TEST(DmaCopy, GatherReadsTheIndexedRows) {
  const std::vector<float> table = tableValues(64, 8);
  const std::vector<std::int32_t> idx = {5, 0, 63, 5, 17, 42, 1, 2, 62, 9, 9, 30, 31, 32, 33, 7};
  for (const char* it : {"int32", "uint32"}) {
    const std::string text = fmt::format(R"(
.tensor table input fp32 [64, 8]
.tensor idx input {0} [16, 1]
.tensor out output fp32 [16, 4]
.tensor outb output bf16 [16, 8]
.tensor outh output fp32 [16, 8]
sp: dma_copy dst=sbuf[0:16]:{0}[[1,1]] src=hbm:idx:{0}[[1,16],[1,1]] signal(s0+=1)
sp: dma_copy dst=sbuf[0:16]+64:fp32[[1,4]] src=hbm:table+8:fp32[[8,64],[1,4]] src_index=sbuf[0:16]:{0}[[1,1]] wait(s0>=1) signal(s1+=1)
sp: dma_copy dst=hbm:out:fp32[[4,16],[1,4]] src=sbuf[0:16]+64:fp32[[1,4]] wait(s1>=1)
act: dma_copy dst=sbuf[0:16]+128:bf16[[1,8]] src=hbm:table:fp32[[8,64],[1,8]] src_index=sbuf[0:16]:{0}[[1,1]] wait(s0>=1) signal(s2+=1)
act: dma_copy dst=hbm:outb:bf16[[8,16],[1,8]] src=sbuf[0:16]+128:bf16[[1,8]] wait(s2>=1)
pool: dma_copy dst=hbm:outh:fp32[[8,16],[1,8]] src=hbm:table:fp32[[8,64],[1,8]] src_index=sbuf[0:16]:{0}[[1,1]] wait(s0>=1)
)",
                                         it);
    const TensorBytes out = run(text, {{"table", toBytes(table)}, {"idx", toBytes(idx)}});
    const std::vector<float> narrow = fromBytes<float>(out.at("out"));
    const std::vector<double> cast = testref::decodeAll(out.at("outb"), kBf16);
    const std::vector<float> hbm = fromBytes<float>(out.at("outh"));
    for (std::size_t r = 0; r < idx.size(); ++r) {
      const auto row = static_cast<std::size_t>(idx[r]) * 8;
      for (std::size_t j = 0; j < 8; ++j) {
        if (j < 4) {
          EXPECT_EQ(narrow[r * 4 + j], table[row + 2 + j]) << it << " row " << r;
        }
        EXPECT_EQ(cast[r * 8 + j], roundNearestEven(table[row + j], kBf16)) << it << " row " << r;
        EXPECT_EQ(hbm[r * 8 + j], table[row + j]) << it << " row " << r;
      }
    }
  }
}

TEST(DmaCopy, GatherWithSkipLeavesOutOfRangeRowsUntouched) {
  const std::vector<float> table = tableValues(64, 8);
  const std::vector<float> fill(8 * 8, -7.0f);
  const std::vector<std::int32_t> signedIdx = {3, -1, 64, 10, 2147483647, 63, -2147483647 - 1, 0};
  const std::vector<std::uint32_t> unsignedIdx = {3, 4294967295u, 64, 10, 4000000000u, 63, 65, 0};
  for (const bool isSigned : {true, false}) {
    const char* it = isSigned ? "int32" : "uint32";
    const std::string text = fmt::format(R"(
.tensor table input fp32 [64, 8]
.tensor idx input {0} [8, 1]
.tensor fill input fp32 [8, 8]
.tensor out output fp32 [8, 8]
sp: dma_copy dst=sbuf[0:8]:{0}[[1,1]] src=hbm:idx:{0}[[1,8],[1,1]]
sp: dma_copy dst=sbuf[0:8]+64:fp32[[1,8]] src=hbm:fill:fp32[[8,8],[1,8]]
sp: dma_copy dst=sbuf[0:8]+64:fp32[[1,8]] src=hbm:table:fp32[[8,64],[1,8]] src_index=sbuf[0:8]:{0}[[1,1]] oob_mode=skip
sp: dma_copy dst=hbm:out:fp32[[8,8],[1,8]] src=sbuf[0:8]+64:fp32[[1,8]]
)",
                                         it);
    const std::vector<std::byte> idxBytes = isSigned ? toBytes(signedIdx) : toBytes(unsignedIdx);
    const TensorBytes out =
        run(text, {{"table", toBytes(table)}, {"idx", idxBytes}, {"fill", toBytes(fill)}});
    const std::vector<float> got = fromBytes<float>(out.at("out"));
    for (std::size_t r = 0; r < 8; ++r) {
      const std::int64_t index = isSigned ? std::int64_t{signedIdx[r]} : std::int64_t{unsignedIdx[r]};
      const bool inRange = index >= 0 && index < 64;
      for (std::size_t j = 0; j < 8; ++j) {
        EXPECT_EQ(got[r * 8 + j], inRange ? table[static_cast<std::size_t>(index) * 8 + j] : -7.0f)
            << it << " row " << r << " index " << index;
      }
    }
  }
}

TEST(DmaCopy, OutOfRangeGatherIndexIsAnErrorNamingTheIndexAndTheBound) {
  const std::vector<float> table = tableValues(64, 8);
  for (const std::int32_t bad : {64, -1}) {
    const std::vector<std::int32_t> idx = {0, 1, 2, bad};
    const Status s = runError(R"(
.tensor table input fp32 [64, 8]
.tensor idx input int32 [4, 1]
.tensor out output fp32 [4, 8]
sp: dma_copy dst=sbuf[0:4]:int32[[1,1]] src=hbm:idx:int32[[1,4],[1,1]]
sp: dma_copy dst=sbuf[0:4]+64:fp32[[1,8]] src=hbm:table:fp32[[8,64],[1,8]] src_index=sbuf[0:4]:int32[[1,1]]
)",
                              {{"table", toBytes(table)}, {"idx", toBytes(idx)}});
    EXPECT_EQ(s.code(), ErrorCode::kOutOfRange);
    expectContains(s, {"sp#1 'dma_copy", fmt::format("row index {} (entry 3)", bad),
                       "outside the 64 rows of 'src' (valid 0..63); oob_mode=error"});
  }
}

TEST(DmaCopy, ScatterWritesTheIndexedRowsInOrder) {
  const std::vector<float> rows = tableValues(8, 4);
  const std::vector<std::int32_t> idx = {3, 31, 0, 3, -5, 32, 7, 8};
  const std::vector<float> fill(32 * 4, -1.0f);
  const std::vector<std::uint16_t> zeros(32 * 4, 0);
  const std::string_view text = R"(
.tensor rows input fp32 [8, 4]
.tensor idx input int32 [8, 1]
.tensor table output fp32 [32, 4]
.tensor tableb output bf16 [32, 4]
sp: dma_copy dst=sbuf[0:8]:fp32[[1,4]] src=hbm:rows:fp32[[4,8],[1,4]]
sp: dma_copy dst=sbuf[0:8]+64:int32[[1,1]] src=hbm:idx:int32[[1,8],[1,1]]
sp: dma_copy dst=hbm:table:fp32[[4,32],[1,4]] src=sbuf[0:8]:fp32[[1,4]] dst_index=sbuf[0:8]+64:int32[[1,1]] oob_mode=skip
sp: dma_copy dst=hbm:tableb:bf16[[4,32],[1,4]] src=sbuf[0:8]:fp32[[1,4]] dst_index=sbuf[0:8]+64:int32[[1,1]] oob_mode=skip
)";
  const TensorBytes out = run(text, {{"rows", toBytes(rows)},
                                     {"idx", toBytes(idx)},
                                     {"table", toBytes(fill)},
                                     {"tableb", toBytes(zeros)}});
  std::vector<float> want = fill;
  std::vector<double> wantCast(32 * 4, 0.0);
  for (std::size_t r = 0; r < idx.size(); ++r) {
    if (idx[r] < 0 || idx[r] >= 32) {
      continue;
    }
    for (std::size_t j = 0; j < 4; ++j) {
      want[static_cast<std::size_t>(idx[r]) * 4 + j] = rows[r * 4 + j];  // later rows win
      wantCast[static_cast<std::size_t>(idx[r]) * 4 + j] = roundNearestEven(rows[r * 4 + j], kBf16);
    }
  }
  EXPECT_EQ(fromBytes<float>(out.at("table")), want);
  EXPECT_EQ(testref::decodeAll(out.at("tableb"), kBf16), wantCast);

  // Without skip the first out-of-range index fails the instruction before anything moves.
  std::string strict(text);
  strict = strict.substr(0, strict.find(" oob_mode=skip")) + "\n";
  const Status s = runError(strict, {{"rows", toBytes(rows)}, {"idx", toBytes(idx)}});
  EXPECT_EQ(s.code(), ErrorCode::kOutOfRange);
  expectContains(s, {"sp#2 'dma_copy", "operand 'dst_index': row index -5 (entry 4) is outside "
                                       "the 32 rows of 'dst' (valid 0..31)"});
}

// ---- dma_transpose ----

TEST(DmaTranspose, HbmToSbufIsABitExactTransposeForTwoAndFourByteTypes) {
  for (const char* t : {"bf16", "fp16", "int16", "uint16", "fp32", "int32", "uint32"}) {
    const auto width = static_cast<std::size_t>(byteSize(parseDType(t).value()));
    const std::string text = fmt::format(R"(
.tensor a input {0} [32, 48]
.tensor c output {0} [48, 32]
.tensor d output {0} [48, 32]
sp: dma_copy dst=sbuf[0:32]:{0}[[1,48]] src=hbm:a:{0}[[48,32],[1,48]]
sp: dma_transpose dst=sbuf[64:112]+256:{0}[[1,32]] src=hbm:a:{0}[[48,32],[1,48]] queue=2
sp: dma_transpose dst=sbuf[0:48]+512:{0}[[1,32]] src=sbuf[0:32]:{0}[[1,48]]
sp: dma_copy dst=hbm:c:{0}[[32,48],[1,32]] src=sbuf[64:112]+256:{0}[[1,32]] queue=2
sp: dma_copy dst=hbm:d:{0}[[32,48],[1,32]] src=sbuf[0:48]+512:{0}[[1,32]]
)",
                                         t);
    const std::vector<std::byte> a = randomBytes(32 * 48 * width, 4);
    const TensorBytes out = run(text, {{"a", a}});
    for (const char* name : {"c", "d"}) {
      const std::vector<std::byte>& got = out.at(name);
      for (std::size_t i = 0; i < 32; ++i) {
        for (std::size_t j = 0; j < 48; ++j) {
          ASSERT_EQ(std::memcmp(got.data() + (j * 32 + i) * width, a.data() + (i * 48 + j) * width,
                                width),
                    0)
              << t << " " << name << " (" << i << "," << j << ")";
        }
      }
    }
  }
}

TEST(DmaTranspose, FlattensStridedFreeDimensionsOfAPartialPartitionSource) {
  std::vector<float> a(16 * 32);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(i);
  }
  // Source: partitions 40..55, free elements 16*i + k (i < 2, k < 8): a [16, 16] block.
  const TensorBytes out = run(R"(
.tensor a input fp32 [16, 32]
.tensor c output fp32 [16, 16]
sp: dma_copy dst=sbuf[40:56]:fp32[[1,32]] src=hbm:a:fp32[[32,16],[1,32]]
sp: dma_transpose dst=sbuf[64:80]:fp32[[1,16]] src=sbuf[40:56]:fp32[[16,2],[1,8]]
sp: dma_copy dst=hbm:c:fp32[[16,16],[1,16]] src=sbuf[64:80]:fp32[[1,16]]
)",
                              {{"a", toBytes(a)}});
  const std::vector<float> c = fromBytes<float>(out.at("c"));
  for (std::size_t f = 0; f < 16; ++f) {
    for (std::size_t p = 0; p < 16; ++p) {
      EXPECT_EQ(c[f * 16 + p], a[p * 32 + 16 * (f / 8) + f % 8]) << f << "," << p;
    }
  }
}

// ---- dma_compute ----

TEST(DmaCompute, ScaledSumIsComputedInFp32InSourceOrder) {
  constexpr std::size_t kN = 128 * 64;
  std::mt19937 rng(21);
  std::normal_distribution<float> dist(0.0f, 100.0f);
  std::vector<float> a(kN);
  std::vector<float> c(kN);
  std::vector<float> d(kN);
  std::vector<std::uint16_t> b(kN);
  for (std::size_t i = 0; i < kN; ++i) {
    a[i] = dist(rng);
    c[i] = dist(rng);
    d[i] = dist(rng);
    b[i] = static_cast<std::uint16_t>(rng() & 0x7fff);  // positive bf16 patterns, some huge
  }
  a[0] = INFINITY;  // + (-Inf) below gives NaN
  c[0] = -INFINITY;
  a[1] = NAN;
  a[2] = 3e38f;  // * 2 overflows fp32
  const TensorBytes out = run(R"(
.tensor a input fp32 [128, 64]
.tensor b input bf16 [128, 64]
.tensor c input fp32 [128, 64]
.tensor d input fp32 [128, 64]
.tensor two output fp32 [128, 64]
.tensor four output bf16 [128, 64]
.tensor one output fp16 [128, 64]
sp: dma_copy dst=sbuf[0:128]:bf16[[1,64]] src=hbm:b:bf16[[64,128],[1,64]] signal(s0+=1)
sp: dma_compute dst=hbm:two:fp32[[64,128],[1,64]] src0=hbm:a:fp32[[64,128],[1,64]] src1=sbuf[0:128]:bf16[[1,64]] scale1=0.5 wait(s0>=1)
act: dma_compute dst=sbuf[0:128]+256:bf16[[1,64]] src0=hbm:a:fp32[[64,128],[1,64]] src1=sbuf[0:128]:bf16[[1,64]] src2=hbm:c:fp32[[64,128],[1,64]] src3=hbm:d:fp32[[64,128],[1,64]] scale0=2 scale1=-1 scale2=0.25 scale3=3 queue=9 wait(s0>=1) signal(s1+=1)
act: dma_copy dst=hbm:four:bf16[[64,128],[1,64]] src=sbuf[0:128]+256:bf16[[1,64]] wait(s1>=1)
pool: dma_compute dst=hbm:one:fp16[[64,128],[1,64]] src0=hbm:c:fp32[[64,128],[1,64]] scale0=-0.125
)",
                              {{"a", toBytes(a)}, {"b", toBytes(b)}, {"c", toBytes(c)},
                               {"d", toBytes(d)}});
  const std::vector<double> two = testref::decodeAll(out.at("two"), kFp32);
  const std::vector<double> four = testref::decodeAll(out.at("four"), kBf16);
  const std::vector<double> one = testref::decodeAll(out.at("one"), testref::kFp16);
  for (std::size_t i = 0; i < kN; ++i) {
    const auto bv = static_cast<float>(decode(b[i], kBf16));
    // The definition: every product and every partial sum rounded to fp32.
    const float sum2 = a[i] + bv * 0.5f;
    float sum4 = a[i] * 2.0f;
    sum4 = sum4 + bv * -1.0f;
    sum4 = sum4 + c[i] * 0.25f;
    sum4 = sum4 + d[i] * 3.0f;
    expectSameValue(two[i], sum2, fmt::format("two[{}]", i));
    expectSameValue(four[i], roundNearestEven(sum4, kBf16), fmt::format("four[{}]", i));
    expectSameValue(one[i], roundNearestEven(c[i] * -0.125, testref::kFp16),
                    fmt::format("one[{}]", i));
    if (std::isfinite(sum4) && std::fabs(sum4) < 1e30f) {
      // And it agrees with the float64 sum to within the fp32 rounding of three additions.
      const double exact = 2.0 * a[i] - bv + 0.25 * c[i] + 3.0 * d[i];
      const double magnitude =
          2.0 * std::fabs(a[i]) + std::fabs(bv) + 0.25 * std::fabs(c[i]) + 3.0 * std::fabs(d[i]);
      EXPECT_NEAR(sum4, exact, 4 * 0x1p-24 * magnitude) << i;
    }
  }
  EXPECT_TRUE(std::isnan(four[0]));  // 2 * Inf + ... + 0.25 * -Inf
  EXPECT_TRUE(std::isnan(two[1]));
  EXPECT_TRUE(std::isinf(four[2]) || std::isnan(four[2]));  // 3e38 * 2 overflows
}

TEST(DmaCompute, StochasticRoundingOfTheSumIsReproducible) {
  std::vector<float> a(1024, 1.0f);
  std::vector<float> b(1024, 0.25f * 0x1p-7f);
  const std::string_view text = R"(
.tensor a input fp32 [8, 128]
.tensor b input fp32 [8, 128]
.tensor c output bf16 [8, 128]
sp: dma_compute dst=hbm:c:bf16[[128,8],[1,128]] src0=hbm:a:fp32[[128,8],[1,128]] src1=hbm:b:fp32[[128,8],[1,128]]
)";
  core::CoreOptions options;
  options.rounding = RoundingMode::kStochastic;
  options.seed = 5;
  const std::vector<std::byte> first = run(text, {{"a", toBytes(a)}, {"b", toBytes(b)}}, options).at("c");
  EXPECT_EQ(run(text, {{"a", toBytes(a)}, {"b", toBytes(b)}}, options).at("c"), first);
  const std::vector<double> c = testref::decodeAll(first, kBf16);
  const double ups = static_cast<double>(std::count(c.begin(), c.end(), 1.0 + 0x1p-7));
  EXPECT_EQ(ups + static_cast<double>(std::count(c.begin(), c.end(), 1.0)), 1024.0);
  EXPECT_NEAR(ups / 1024, 0.25, 0.06);
}

// ---- verifier rules ----

Status verifyLine(std::string_view line) {
  const std::string text = fmt::format(".tensor a input fp32 [128, 64]\n.tensor i input int32 "
                                       "[128, 1]\n{}\n",
                                       line);
  const Result<Program> program = parseProgramText(text, "v.tasm");
  TRN_CHECK(program.ok()) << program.status().toString();
  return verifyProgram(*program, CoreLimits{});
}

void expectRejected(std::string_view line, std::initializer_list<std::string_view> fragments) {
  const Status s = verifyLine(line);
  ASSERT_FALSE(s.ok()) << "accepted: " << line;
  EXPECT_EQ(s.code(), ErrorCode::kFailedPrecondition);
  expectContains(s, fragments);
}

TEST(DmaVerifier, QueueMustExist) {
  expectRejected("sp: dma_copy dst=sbuf[0:1]:fp32[[1,4]] src=hbm:a:fp32[[64,1],[1,4]] queue=16",
                 {"sp#0 'dma_copy", "operand 'queue': DMA queue 16 does not exist (0..15)"});
  expectRejected("sp: dma_transpose dst=sbuf[0:4]:fp32[[1,1]] src=hbm:a:fp32[[64,1],[1,4]] "
                 "queue=-1",
                 {"operand 'queue': DMA queue -1 does not exist"});
  expectRejected("sp: dma_compute dst=sbuf[0:1]:fp32[[1,4]] src0=hbm:a:fp32[[64,1],[1,4]] "
                 "queue=99",
                 {"operand 'queue': DMA queue 99 does not exist"});
}

TEST(DmaVerifier, ElementCountsMustMatch) {
  expectRejected("sp: dma_copy dst=sbuf[0:2]:fp32[[1,8]] src=hbm:a:fp32[[64,2],[1,16]]",
                 {"operands 'dst' (16 elements) and 'src' (32 elements) differ in element count"});
  expectRejected("sp: dma_compute dst=sbuf[0:2]:fp32[[1,8]] src0=hbm:a:fp32[[64,2],[1,8]] "
                 "src1=sbuf[4:6]:fp32[[1,9]]",
                 {"operands 'dst' (16 elements) and 'src1' (18 elements) differ"});
  EXPECT_TRUE(verifyLine("sp: dma_copy dst=sbuf[0:4]:bf16[[1,8]] src=hbm:a:fp32[[64,2],[1,16]]")
                  .ok());
}

TEST(DmaVerifier, DmaNeverReachesPsum) {
  expectRejected("sp: dma_copy dst=sbuf[0:1]:fp32[[1,4]] src=psum[0:1]:fp32[[1,4]]",
                 {"operand 'src'", "DMA transfers reach HBM and SBUF, not PSUM"});
  expectRejected("sp: dma_transpose dst=psum[0:4]:fp32[[1,1]] src=hbm:a:fp32[[64,1],[1,4]]",
                 {"operand 'dst'", "not PSUM"});
  expectRejected("sp: dma_compute dst=sbuf[0:1]:fp32[[1,4]] src0=hbm:a:fp32[[64,1],[1,4]] "
                 "src1=psum[0:1]:fp32[[1,4]]",
                 {"operand 'src1'", "not PSUM"});
}

TEST(DmaVerifier, IndirectCopyRules) {
  const std::string_view gather =
      "sp: dma_copy dst=sbuf[0:4]:fp32[[1,8]] src=hbm:a:fp32[[64,128],[1,8]] ";
  EXPECT_TRUE(verifyLine(fmt::format("{}src_index=sbuf[0:4]+64:int32[[1,1]]", gather)).ok());
  expectRejected(fmt::format("{}src_index=sbuf[0:4]+64:int32[[1,1]] "
                             "dst_index=sbuf[0:4]+64:int32[[1,1]]",
                             gather),
                 {"operand 'dst_index': a DMA copy indexes one side only"});
  expectRejected(fmt::format("{}src_index=hbm:i:int32[[1,4],[1,1]]", gather),
                 {"operand 'src_index': is in hbm; this instruction needs sbuf"});
  expectRejected(fmt::format("{}src_index=sbuf[0:4]+64:fp32[[1,1]]", gather),
                 {"operand 'src_index': dtype fp32 is not allowed here (allowed: int32, uint32)"});
  expectRejected(fmt::format("{}src_index=sbuf[0:4]+64:int32[[1,2]]", gather),
                 {"operand 'src_index': a row-index operand is [P, 1], not [4, 2]"});
  expectRejected("sp: dma_copy dst=hbm:a:fp32[[64,4],[1,8]] src=sbuf[0:4]:fp32[[1,8]] "
                 "src_index=sbuf[0:4]+64:int32[[1,1]]",
                 {"operand 'src': is in sbuf; only an HBM operand can be indexed by src_index"});
  expectRejected(fmt::format("{}src_index=sbuf[0:8]+64:int32[[1,1]]", gather),
                 {"operand 'dst': has 4 partitions (or rows) but 'src_index' holds 8 row indices"});
  expectRejected("sp: dma_copy dst=hbm:a:fp32[[64,128],[1,8]] src=sbuf[0:4]:fp32[[1,16]] "
                 "dst_index=sbuf[0:4]+64:int32[[1,1]]",
                 {"operand 'src': has 16 elements per partition (or row) but a row of 'dst' has 8"});
}

TEST(DmaVerifier, TransposeRules) {
  EXPECT_TRUE(verifyLine("sp: dma_transpose dst=sbuf[0:8]:fp32[[1,4]] src=hbm:a:fp32[[64,4],[1,8]]")
                  .ok());
  for (const char* t : {"fp8_e4m3", "int8", "uint8"}) {
    expectRejected(fmt::format("sp: dma_transpose dst=sbuf[0:8]:{0}[[1,4]] src=sbuf[0:4]:{0}[[1,8]]",
                               t),
                   {fmt::format("operand 'src': dtype {} has 1-byte elements; this chip's DMA "
                                "transposes 2- or 4-byte elements",
                                t)});
  }
  expectRejected("sp: dma_transpose dst=sbuf[0:8]:bf16[[1,4]] src=hbm:a:fp32[[64,4],[1,8]]",
                 {"operand 'dst': dtype bf16 differs from src's fp32; a DMA transpose does not "
                  "cast"});
  expectRejected("sp: dma_transpose dst=sbuf[0:8]:fp32[[1,8]] src=hbm:a:fp32[[64,4],[1,8]]",
                 {"operand 'dst': is [8 x 8] but the transpose of src [4 x 8] is [8 x 4]"});
  expectRejected("sp: dma_transpose dst=hbm:a:fp32[[64,8],[1,4]] src=sbuf[0:4]:fp32[[1,8]]",
                 {"operand 'dst': is in hbm; this instruction needs sbuf"});
}

TEST(DmaVerifier, TransposeNeedsAChipThatHasIt) {
  // Trn1 has no DMA transpose (core.dma.transpose.supported: false): the instruction is rejected
  // before it runs, instead of running at a zero rate.
  CoreLimits trn1;
  trn1.dmaTransposeElementBytes = 0;
  const Result<Program> program = parseProgramText(
      ".tensor a input fp32 [128, 64]\n"
      "sp: dma_transpose dst=sbuf[0:8]:fp32[[1,4]] src=hbm:a:fp32[[64,4],[1,8]]\n",
      "v.tasm");
  ASSERT_TRUE(program.ok()) << program.status().toString();
  const Status s = verifyProgram(*program, trn1);
  ASSERT_FALSE(s.ok());
  expectContains(s, {"sp#0 'dma_transpose", "this chip has no DMA transpose",
                     "transpose on the tensor engine with nc_transpose"});
  // A chip that transposes only 2-byte elements rejects fp32.
  CoreLimits twoBytes;
  twoBytes.dmaTransposeElementBytes = 1u << 2;
  expectContains(verifyProgram(*program, twoBytes),
                 {"dtype fp32 has 4-byte elements; this chip's DMA transposes 2-byte elements"});
}

TEST(DmaVerifier, ComputeRules) {
  const std::string_view ok = "sp: dma_compute dst=sbuf[0:1]:fp32[[1,4]] "
                              "src0=hbm:a:fp32[[64,1],[1,4]] src1=sbuf[1:2]:bf16[[1,4]]";
  EXPECT_TRUE(verifyLine(ok).ok());
  expectRejected(fmt::format("{} reduce_op=max", ok),
                 {"operand 'reduce_op': max is not supported; the DMA engines reduce with add "
                  "only"});
  expectRejected("sp: dma_compute dst=sbuf[0:1]:fp32[[1,4]] src1=hbm:a:fp32[[64,1],[1,4]]",
                 {"operand 'src0': dma_compute needs at least one source"});
  expectRejected("sp: dma_compute dst=sbuf[0:1]:fp32[[1,4]] src0=hbm:a:fp32[[64,1],[1,4]] "
                 "src2=hbm:a:fp32[[64,1],[1,4]]",
                 {"operand 'src2': is given but src1 is not; sources are consecutive from src0"});
}

}  // namespace
}  // namespace trn::isa
