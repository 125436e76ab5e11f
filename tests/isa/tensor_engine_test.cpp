// Golden tests of the tensor-engine instructions. nc_matmul: every operand dtype against float64
// (within the fp32 accumulation bound) and bit for bit against the defining fp32 FMA chain written
// here; accumulation groups; fp8 double-row mode; IEEE special values; partial-partition, strided
// and negative-stride operands; tiling mode; transpose mode. nc_transpose on PE and DVE, bit-exact
// with NaN payloads, infinities and denormals. One test per instruction-specific verifier rule.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "special_test_util.h"

namespace trn::isa {
namespace {

using namespace special_test;  // NOLINT(google-build-using-namespace): test helpers

struct OperandType {
  std::string_view name;
  Format format;
  int width;
};
constexpr OperandType kTypeFp32{"fp32", kFp32, 4};
constexpr OperandType kTypeTf32{"tf32", kTf32, 4};
constexpr OperandType kTypeBf16{"bf16", kBf16, 2};
constexpr OperandType kTypeFp16{"fp16", kFp16, 2};
constexpr OperandType kTypeE4m3{"fp8_e4m3", kFp8E4m3, 1};
constexpr OperandType kTypeE5m2{"fp8_e5m2", kFp8E5m2, 1};

/// The defining computation: out[m][n] = fp32 FMA chain over rows r = 0..R-1 of s[r][m] * v[r][n]
/// starting from 0, then optionally added to `prior` with one fp32 addition.
std::vector<float> fmaChain(const std::vector<double>& s, const std::vector<double>& v,
                            std::size_t rows, std::size_t m, std::size_t n,
                            const std::vector<float>* prior = nullptr) {
  std::vector<float> out(m * n);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (std::size_t r = 0; r < rows; ++r) {
        acc = std::fma(static_cast<float>(s[r * m + i]), static_cast<float>(v[r * n + j]), acc);
      }
      out[i * n + j] = prior != nullptr ? (*prior)[i * n + j] + acc : acc;
    }
  }
  return out;
}

/// Expects `got` to be within the fp32 sequential-accumulation bound of the float64 product.
void expectNearFloat64(const std::vector<float>& got, const std::vector<double>& s,
                       const std::vector<double>& v, std::size_t rows, std::size_t m,
                       std::size_t n) {
  ASSERT_EQ(got.size(), m * n);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double sum = 0;
      double magnitude = 0;
      for (std::size_t r = 0; r < rows; ++r) {
        sum += s[r * m + i] * v[r * n + j];
        magnitude += std::fabs(s[r * m + i] * v[r * n + j]);
      }
      ASSERT_NEAR(got[i * n + j], sum, static_cast<double>(rows) * 0x1p-24 * magnitude + 1e-30)
          << i << "," << j;
    }
  }
}

void expectSameBits(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << i;
    } else {
      ASSERT_EQ(bitsOf(got[i]), bitsOf(want[i])) << i << ": " << got[i] << " vs " << want[i];
    }
  }
}

/// A program: load a [k, m] as stationary and b [k, n] as moving, one matmul, PSUM -> SBUF -> c.
std::string matmulProgram(const OperandType& st, const OperandType& mv, std::int64_t k,
                          std::int64_t m, std::int64_t n, std::string_view extra = "") {
  return load("a", st.name, 0, k, m, 0) + load("b", mv.name, 0, k, n, 4096) +
         fmt::format(
             "pe: nc_matmul dst=psum[0:{0}]:fp32[[1,{1}]] stationary={2} moving={3} {4} "
             "wait(s0>=2) signal(s1+=1)\n"
             "dve: tensor_copy dst=sbuf[0:{0}]+65536:fp32[[1,{1}]] "
             "src=psum[0:{0}]:fp32[[1,{1}]] wait(s1>=1) signal(s9+=1)\n",
             m, n, tile("sbuf", 0, k, 0, st.name, m), tile("sbuf", 0, k, 4096, mv.name, n), extra) +
         store("c", "fp32", 0, m, n, 65536);
}

TEST(NcMatmul, MatchesFloat64AndTheFmaChainForEveryOperandDtype) {
  const std::pair<OperandType, OperandType> pairs[] = {
      {kTypeFp32, kTypeFp32}, {kTypeTf32, kTypeTf32}, {kTypeFp32, kTypeTf32},
      {kTypeBf16, kTypeBf16}, {kTypeFp16, kTypeFp16}, {kTypeBf16, kTypeFp16},
      {kTypeE4m3, kTypeE4m3}, {kTypeE5m2, kTypeE5m2}, {kTypeE4m3, kTypeBf16},
  };
  constexpr std::size_t kK = 128;
  constexpr std::size_t kM = 64;
  constexpr std::size_t kN = 96;
  std::mt19937 rng(11);
  for (const auto& [st, mv] : pairs) {
    SCOPED_TRACE(fmt::format("{} x {}", st.name, mv.name));
    const Samples s = randomValues(st.format, kK * kM, -4, 4, rng);
    const Samples v = randomValues(mv.format, kK * kN, -4, 4, rng);
    const TensorBytes inputs = {{"a", packWords(s.storage, st.width)},
                                {"b", packWords(v.storage, mv.width)}};
    const std::string text = matmulProgram(st, mv, kK, kM, kN);
    const std::vector<float> got = valuesOf<float>(run(text, inputs)["c"]);
    ASSERT_EQ(got.size(), kM * kN);
    expectSameBits(got, fmaChain(s.values, v.values, kK, kM, kN));
    expectNearFloat64(got, s.values, v.values, kK, kM, kN);
    if (st.name == "bf16") {  // PSUM is fp32: stochastic rounding has nothing to round
      core::CoreOptions stochastic;
      stochastic.rounding = RoundingMode::kStochastic;
      stochastic.seed = 5;
      EXPECT_EQ(valuesOf<float>(run(text, inputs, stochastic)["c"]), got);
    }
  }
}

TEST(NcMatmul, AccumulationGroupOverwritesFirstThenAddsInFp32) {
  // K = 384 as three 128-row matmuls into one PSUM tile that a memset filled with garbage.
  constexpr std::size_t kK = 128;
  constexpr std::size_t kM = 32;
  constexpr std::size_t kN = 64;
  std::mt19937 rng(3);
  std::string text;
  TensorBytes inputs;
  std::vector<Samples> s;
  std::vector<Samples> v;
  for (int g = 0; g < 3; ++g) {
    s.push_back(randomValues(kBf16, kK * kM, -3, 3, rng));
    v.push_back(randomValues(kBf16, kK * kN, -3, 3, rng));
    inputs[fmt::format("a{}", g)] = packWords(s.back().storage, 2);
    inputs[fmt::format("b{}", g)] = packWords(v.back().storage, 2);
    text += load(fmt::format("a{}", g), "bf16", 0, kK, kM, g * 1024) +
            load(fmt::format("b{}", g), "bf16", 0, kK, kN, 8192 + g * 1024);
  }
  text += "dve: memset dst=psum[0:32]+2048:fp32[[1,64]] value=1000 signal(s2+=1)\n";
  for (int g = 0; g < 3; ++g) {
    text += fmt::format(
        "pe: nc_matmul dst=psum[0:32]+2048:fp32[[1,64]] stationary={} moving={} "
        "accumulate={} {}\n",
        tile("sbuf", 0, kK, g * 1024, "bf16", kM), tile("sbuf", 0, kK, 8192 + g * 1024, "bf16", kN),
        g > 0,
        g == 0   ? "wait(s0>=6) wait(s2>=1)"
        : g == 2 ? "signal(s1+=1)"
                 : "");
  }
  text +=
      "dve: tensor_copy dst=sbuf[0:32]+65536:fp32[[1,64]] src=psum[0:32]+2048:fp32[[1,64]] "
      "wait(s1>=1) signal(s9+=1)\n" +
      store("c", "fp32", 0, kM, kN, 65536);
  const std::vector<float> got = valuesOf<float>(run(text, inputs)["c"]);
  std::vector<float> want = fmaChain(s[0].values, v[0].values, kK, kM, kN);
  want = fmaChain(s[1].values, v[1].values, kK, kM, kN, &want);
  want = fmaChain(s[2].values, v[2].values, kK, kM, kN, &want);
  expectSameBits(got, want);
  std::vector<double> allS;
  std::vector<double> allV;
  for (int g = 0; g < 3; ++g) {
    allS.insert(allS.end(), s[g].values.begin(), s[g].values.end());
    allV.insert(allV.end(), v[g].values.begin(), v[g].values.end());
  }
  expectNearFloat64(got, allS, allV, 3 * kK, kM, kN);
}

TEST(NcMatmul, DoubleRowFp8ContractsOverTwiceThePartitions) {
  // Operands [K, 2, F]: element (p, h, f) is contraction row 2p + h (docs/isa/special.md).
  constexpr std::size_t kK = 128;
  constexpr std::size_t kM = 32;
  constexpr std::size_t kN = 64;
  std::mt19937 rng(8);
  const Samples s = randomValues(kFp8E4m3, kK * 2 * kM, -3, 3, rng);
  const Samples v = randomValues(kFp8E5m2, kK * 2 * kN, -3, 3, rng);
  const std::string text =
      load("a", "fp8_e4m3", 0, kK, 2 * kM, 0) + load("b", "fp8_e5m2", 0, kK, 2 * kN, 1024) +
      "pe: nc_matmul dst=psum[0:32]:fp32[[1,64]] stationary=sbuf[0:128]:fp8_e4m3[[32,2],[1,32]] "
      "moving=sbuf[0:128]+1024:fp8_e5m2[[64,2],[1,64]] perf_mode=double_row wait(s0>=2) "
      "signal(s1+=1)\n"
      "dve: tensor_copy dst=sbuf[0:32]+65536:fp32[[1,64]] src=psum[0:32]:fp32[[1,64]] "
      "wait(s1>=1) signal(s9+=1)\n" +
      store("c", "fp32", 0, kM, kN, 65536);
  const std::vector<float> got = valuesOf<float>(
      run(text, {{"a", packWords(s.storage, 1)}, {"b", packWords(v.storage, 1)}})["c"]);
  // Row-major [K][2][F] storage is already the (2K x F) matrix with row 2p + h.
  expectSameBits(got, fmaChain(s.values, v.values, 2 * kK, kM, kN));
  expectNearFloat64(got, s.values, v.values, 2 * kK, kM, kN);
}

TEST(NcMatmul, SpecialValuesFollowIeeeFp32) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // stationary [4, 2], moving [4, 4]
  const std::vector<float> a = {inf, 1.0f, 0.0f, 0x1p-130f, 2.0f, -inf, 1.0f, 1.0f};
  const std::vector<float> b = {1.0f, 0.0f, nan,  1.0f,                              //
                                1.0f, 1.0f, 1.0f, 0x1p-20f, 5.0f, 5.0f, 5.0f, 5.0f,  //
                                1.0f, 1.0f, 1.0f, 1.0f};
  const std::string text = matmulProgram(kTypeFp32, kTypeFp32, 4, 2, 4);
  const std::vector<float> got =
      valuesOf<float>(run(text, {{"a", bytesOf(a)}, {"b", bytesOf(b)}})["c"]);
  std::vector<double> s(a.begin(), a.end());
  std::vector<double> v(b.begin(), b.end());
  const std::vector<float> want = fmaChain(s, v, 4, 2, 4);
  expectSameBits(got, want);
  EXPECT_TRUE(std::isnan(got[1]));  // inf * 0
  EXPECT_TRUE(std::isnan(got[2]));  // nan propagates
  EXPECT_EQ(got[0], inf);           // inf * 1 + finite
  EXPECT_EQ(got[4], -inf);          // -inf * 1 + finite
}

TEST(NcMatmul, PartialPartitionsStridedAndNegativeStrideOperands) {
  // K = 32 at partitions [32:64]; stationary takes every other element; moving is read
  // backwards; dst is psum[64:80].
  constexpr std::size_t kK = 32;
  constexpr std::size_t kM = 16;
  constexpr std::size_t kN = 24;
  std::mt19937 rng(21);
  const Samples s = randomValues(kFp16, kK * 2 * kM, -2, 2, rng);
  const Samples v = randomValues(kBf16, kK * kN, -2, 2, rng);
  const std::string text =
      load("a", "fp16", 32, kK, 2 * kM, 0) + load("b", "bf16", 32, kK, kN, 512) +
      fmt::format(
          "pe: nc_matmul dst=psum[64:80]+256:fp32[[1,{1}]] "
          "stationary=sbuf[32:64]:fp16[[2,{0}]] moving=sbuf[32:64]+{2}:bf16[[-1,{1}]] "
          "wait(s0>=2) signal(s1+=1)\n"
          "dve: tensor_copy dst=sbuf[64:80]+4096:fp32[[1,{1}]] "
          "src=psum[64:80]+256:fp32[[1,{1}]] wait(s1>=1) signal(s9+=1)\n",
          kM, kN, 512 + 2 * (kN - 1)) +
      store("c", "fp32", 64, 16, kN, 4096);
  const std::vector<float> got = valuesOf<float>(
      run(text, {{"a", packWords(s.storage, 2)}, {"b", packWords(v.storage, 2)}})["c"]);
  std::vector<double> st(kK * kM);
  std::vector<double> mv(kK * kN);
  for (std::size_t k = 0; k < kK; ++k) {
    for (std::size_t m = 0; m < kM; ++m) {
      st[k * kM + m] = s.values[k * 2 * kM + 2 * m];
    }
    for (std::size_t n = 0; n < kN; ++n) {
      mv[k * kN + n] = v.values[k * kN + (kN - 1 - n)];
    }
  }
  expectSameBits(got, fmaChain(st, mv, kK, kM, kN));
  expectNearFloat64(got, st, mv, kK, kM, kN);
}

TEST(NcMatmul, TilingModeLeavesTheResultUnchanged) {
  std::mt19937 rng(4);
  const Samples s = randomValues(kBf16, 32 * 32, -2, 2, rng);
  const Samples v = randomValues(kBf16, 32 * 48, -2, 2, rng);
  const TensorBytes inputs = {{"a", packWords(s.storage, 2)}, {"b", packWords(v.storage, 2)}};
  const auto full = run(matmulProgram(kTypeBf16, kTypeBf16, 32, 32, 48), inputs)["c"];
  for (const std::string_view tiling :
       {"tile_position=[64,32] tile_size=[32,32]", "tile_position=[0,64] tile_size=[64,64]",
        "tile_position=[96,0] tile_size=[32,128]"}) {
    EXPECT_EQ(run(matmulProgram(kTypeBf16, kTypeBf16, 32, 32, 48, tiling), inputs)["c"], full)
        << tiling;
  }
  expectSameBits(valuesOf<float>(full), fmaChain(s.values, v.values, 32, 32, 48));
}

/// Transposes stationary [k, m] of `type` in PE transpose mode against a bf16 identity moving.
std::vector<std::uint32_t> transposeMode(std::string_view type, int width, std::string_view dstType,
                                         int dstWidth, std::int64_t k, std::int64_t m,
                                         const std::vector<std::uint32_t>& data) {
  std::vector<std::uint32_t> identity(static_cast<std::size_t>(k * k), 0);
  for (std::int64_t i = 0; i < k; ++i) {
    identity[static_cast<std::size_t>(i * k + i)] = 0x3F80;  // bf16 1.0
  }
  const std::string text =
      load("a", type, 0, k, m, 0) + load("id", "bf16", 0, k, k, 2048) +
      fmt::format(
          "pe: nc_matmul dst=psum[0:{1}]:{3}[[1,{0}]] stationary={4} "
          "moving=sbuf[0:{0}]+2048:bf16[[1,{0}]] is_transpose=true wait(s0>=2) "
          "signal(s1+=1)\n"
          "dve: tensor_copy dst=sbuf[0:{1}]+8192:{3}[[1,{0}]] src=psum[0:{1}]:{3}[[1,{0}]] "
          "wait(s1>=1) signal(s9+=1)\n",
          k, m, type, dstType, tile("sbuf", 0, k, 0, type, m)) +
      store("c", dstType, 0, m, k, 8192);
  return unpackWords(
      run(text, {{"a", packWords(data, width)}, {"id", packWords(identity, 2)}})["c"], dstWidth);
}

TEST(NcMatmul, TransposeModeMovesBitsExactly) {
  std::mt19937 rng(9);
  constexpr std::int64_t kK = 64;
  constexpr std::int64_t kM = 48;
  std::vector<std::uint32_t> bf16(kK * kM);
  std::vector<std::uint32_t> fp32(kK * kM);
  std::vector<std::uint32_t> fp8(kK * kM);
  const std::uint32_t bf16Specials[] = {0x7F81, 0xFFC3, 0x7F80, 0xFF80, 0x8000, 0x0001, 0x807F};
  for (std::size_t i = 0; i < bf16.size(); ++i) {
    bf16[i] = i < 7 ? bf16Specials[i] : rng() & 0xFFFF;
    fp32[i] = i == 0 ? 0x7FA00001u : i == 1 ? 0x00000003u : static_cast<std::uint32_t>(rng());
    fp8[i] = rng() & 0xFF;
  }
  const auto check = [&](const std::vector<std::uint32_t>& in,
                         const std::vector<std::uint32_t>& out) {
    ASSERT_EQ(out.size(), in.size());
    for (std::int64_t k = 0; k < kK; ++k) {
      for (std::int64_t m = 0; m < kM; ++m) {
        ASSERT_EQ(out[static_cast<std::size_t>(m * kK + k)],
                  in[static_cast<std::size_t>(k * kM + m)])
            << k << "," << m;
      }
    }
  };
  check(bf16, transposeMode("bf16", 2, "bf16", 2, kK, kM, bf16));
  check(fp32, transposeMode("fp32", 4, "fp32", 4, kK, kM, fp32));
  // 1-byte input: 16-bit PSUM words with the upper byte zero.
  check(fp8, transposeMode("fp8_e4m3", 1, "uint16", 2, kK, kM, fp8));
}

TEST(NcMatmul, TransposeModeNeedsAnIdentityMovingOperand) {
  std::vector<std::uint16_t> notIdentity(4 * 4, 0);
  for (int i = 0; i < 4; ++i) {
    notIdentity[static_cast<std::size_t>(i * 4 + i)] = 0x3F80;
  }
  notIdentity[1] = 0x4000;  // [0, 1] = 2.0
  const std::string text =
      load("a", "bf16", 0, 4, 8, 0) + load("id", "bf16", 0, 4, 4, 2048) +
      "pe: nc_matmul dst=psum[0:8]:bf16[[1,4]] stationary=sbuf[0:4]:bf16[[1,8]] "
      "moving=sbuf[0:4]+2048:bf16[[1,4]] is_transpose=true wait(s0>=2)\n";
  const std::string error = runError(
      text, {{"a", bytesOf(std::vector<std::uint16_t>(32, 0x3F80))}, {"id", bytesOf(notIdentity)}});
  EXPECT_NE(error.find("operand 'moving': is_transpose needs the identity matrix, but element "
                       "[0, 1] is 2 (expected 0)"),
            std::string::npos)
      << error;
}

// ---- nc_transpose ----

/// Runs `engine: nc_transpose` of data [p, f] (pattern `dataPattern`, loaded from `a` to
/// partition p0) into `dstPattern`, copies dst to SBUF and returns its words.
std::vector<std::uint32_t> runTranspose(std::string_view engine, std::string_view type, int width,
                                        std::string_view outType, int outWidth, std::int64_t p0,
                                        std::int64_t p, std::int64_t f,
                                        const std::vector<std::uint32_t>& data,
                                        std::string_view dstMemory, std::int64_t dstP0,
                                        const core::CoreOptions& options = {}) {
  std::string text =
      load("a", type, p0, p, f, 0) +
      fmt::format("{}: nc_transpose dst={} data={} wait(s0>=1) signal(s1+=1)\n", engine,
                  tile(dstMemory, dstP0, f, 1024, outType, p), tile("sbuf", p0, p, 0, type, f));
  text += fmt::format("dve: tensor_copy dst={} src={} wait(s1>=1) signal(s9+=1)\n",
                      tile("sbuf", dstP0, f, 8192, outType, p),
                      tile(dstMemory, dstP0, f, 1024, outType, p)) +
          store("c", outType, dstP0, f, p, 8192);
  return unpackWords(run(text, {{"a", packWords(data, width)}}, options)["c"], outWidth);
}

void expectTransposed(const std::vector<std::uint32_t>& in, const std::vector<std::uint32_t>& out,
                      std::size_t p, std::size_t f) {
  ASSERT_EQ(out.size(), p * f);
  for (std::size_t i = 0; i < p; ++i) {
    for (std::size_t j = 0; j < f; ++j) {
      ASSERT_EQ(out[j * p + i], in[i * f + j]) << i << "," << j;
    }
  }
}

TEST(NcTranspose, TensorEngineIsBitExactForEveryWidth) {
  std::mt19937 rng(17);
  std::vector<std::uint32_t> bf16(128 * 96);
  for (std::size_t i = 0; i < bf16.size(); ++i) {
    const std::uint32_t specials[] = {0x7F81, 0xFFC3, 0x7F80, 0xFF80, 0x8000, 0x0001};
    bf16[i] = i < 6 ? specials[i] : rng() & 0xFFFF;
  }
  expectTransposed(bf16, runTranspose("pe", "bf16", 2, "bf16", 2, 0, 128, 96, bf16, "psum", 0), 128,
                   96);
  core::CoreOptions stochastic;
  stochastic.rounding = RoundingMode::kStochastic;
  expectTransposed(
      bf16, runTranspose("pe", "bf16", 2, "bf16", 2, 0, 128, 96, bf16, "psum", 0, stochastic), 128,
      96);
  std::vector<std::uint32_t> fp32(64 * 100);
  for (std::uint32_t& w : fp32) {
    w = static_cast<std::uint32_t>(rng());
  }
  fp32[0] = 0x7FA00001u;
  expectTransposed(fp32, runTranspose("pe", "fp32", 4, "fp32", 4, 64, 64, 100, fp32, "psum", 0), 64,
                   100);
  std::vector<std::uint32_t> fp8(32 * 128);
  for (std::uint32_t& w : fp8) {
    w = rng() & 0xFF;
  }
  expectTransposed(fp8, runTranspose("pe", "fp8_e5m2", 1, "uint16", 2, 96, 32, 128, fp8, "psum", 0),
                   32, 128);
}

TEST(NcTranspose, TensorEngineFlattensMultiDimensionalData) {
  std::vector<std::uint32_t> data(16 * 24);
  for (std::size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<std::uint32_t>(i * 2654435761u) & 0xFFFF;
  }
  const std::string text =
      load("a", "fp16", 0, 16, 24, 0) +
      "pe: nc_transpose dst=psum[0:24]:fp16[[1,16]] data=sbuf[0:16]:fp16[[8,3],[1,8]] "
      "wait(s0>=1) signal(s1+=1)\n"
      "dve: tensor_copy dst=sbuf[0:24]+4096:fp16[[1,16]] src=psum[0:24]:fp16[[1,16]] wait(s1>=1) "
      "signal(s9+=1)\n" +
      store("c", "fp16", 0, 24, 16, 4096);
  expectTransposed(data, unpackWords(run(text, {{"a", packWords(data, 2)}})["c"], 2), 16, 24);
}

TEST(NcTranspose, VectorEngineTransposes32x32BlocksInSbufAndPsum) {
  std::mt19937 rng(2);
  std::vector<std::uint32_t> fp16(32 * 20);
  for (std::uint32_t& w : fp16) {
    w = rng() & 0xFFFF;
  }
  fp16[0] = 0x7C01;  // NaN payload
  expectTransposed(fp16, runTranspose("dve", "fp16", 2, "fp16", 2, 0, 32, 20, fp16, "sbuf", 64), 32,
                   20);
  std::vector<std::uint32_t> i32(17 * 32);
  for (std::uint32_t& w : i32) {
    w = static_cast<std::uint32_t>(rng());
  }
  expectTransposed(i32, runTranspose("dve", "int32", 4, "int32", 4, 32, 17, 32, i32, "psum", 96),
                   17, 32);
}

TEST(NcTranspose, VectorEngineReadsNegativeStrideData) {
  // data rows are read backwards: element j of the pattern is stored element 19 - j.
  std::vector<std::uint32_t> data(8 * 20);
  for (std::size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<std::uint32_t>(i * 977) & 0xFFFF;
  }
  const std::string text =
      load("a", "fp16", 0, 8, 20, 0) +
      "dve: nc_transpose dst=sbuf[32:52]+256:fp16[[1,8]] data=sbuf[0:8]+38:fp16[[-1,20]] "
      "wait(s0>=1) signal(s9+=1)\n" +
      store("c", "fp16", 32, 20, 8, 256);
  const auto got = unpackWords(run(text, {{"a", packWords(data, 2)}})["c"], 2);
  ASSERT_EQ(got.size(), data.size());
  for (std::size_t p = 0; p < 8; ++p) {
    for (std::size_t j = 0; j < 20; ++j) {
      EXPECT_EQ(got[j * 8 + p], data[p * 20 + 19 - j]) << p << "," << j;
    }
  }
}

// ---- verifier rules ----

constexpr std::string_view kMm =
    "pe: nc_matmul dst=psum[0:64]:fp32[[1,128]] "
    "stationary=sbuf[0:128]:bf16[[1,64]] "
    "moving=sbuf[0:128]+4096:bf16[[1,128]]";

TEST(NcMatmulVerifier, AcceptsAPlainMatmul) { EXPECT_EQ(verifyError(kMm), ""); }

TEST(NcMatmulVerifier, ShapeAndLimitRules) {
  CoreLimits smallK;
  smallK.matmulMaxContraction = 64;
  expectRejected(kMm, {"pe#0 'nc_matmul", "contraction K = 128 exceeds 64"}, smallK);
  expectRejected(
      "pe: nc_matmul dst=psum[0:128]:fp32[[1,128]] stationary=sbuf[0:128]:bf16[[1,129]] "
      "moving=sbuf[0:128]+4096:bf16[[1,128]]",
      {"stationary free size M = 129 exceeds 128"});
  expectRejected(
      "pe: nc_matmul dst=psum[0:64]:fp32[[1,513]] stationary=sbuf[0:128]:bf16[[1,64]] "
      "moving=sbuf[0:128]+4096:bf16[[1,513]]",
      {"moving free size N = 513 exceeds 512"});
  expectRejected(
      "pe: nc_matmul dst=psum[0:64]:fp32[[1,128]] stationary=sbuf[0:128]:bf16[[1,64]] "
      "moving=sbuf[0:64]+4096:bf16[[1,128]]",
      {"contraction mismatch: stationary has 128 partitions, moving 64"});
  expectRejected(
      "pe: nc_matmul dst=psum[0:64]:fp32[[1,64]] stationary=sbuf[0:128]:bf16[[1,64]] "
      "moving=sbuf[0:128]+4096:bf16[[1,128]]",
      {"dst is [64, 64] but stationary^T @ moving is [64, 128]"});
  EXPECT_EQ(
      verifyError("pe: nc_matmul dst=psum[0:64]+1536:fp32[[1,128]] "
                  "stationary=sbuf[0:128]:bf16[[1,64]] moving=sbuf[0:128]+4096:bf16[[1,128]]"),
      "");
  expectRejected(
      "pe: nc_matmul dst=psum[0:64]+1600:fp32[[1,128]] "
      "stationary=sbuf[0:128]:bf16[[1,64]] moving=sbuf[0:128]+4096:bf16[[1,128]]",
      {"operand 'dst': bytes [1600, 2112) cross", "2048-byte PSUM bank boundary"});
  // NC-v4 (core.pe.output_spans_banks): a result may span banks.
  CoreLimits v4;
  v4.peOutputSpansBanks = true;
  EXPECT_EQ(verifyError("pe: nc_matmul dst=psum[0:64]+1600:fp32[[1,128]] "
                        "stationary=sbuf[0:128]:bf16[[1,64]] moving=sbuf[0:128]+4096:bf16[[1,128]]",
                        v4),
            "");
}

TEST(NcMatmulVerifier, DtypeRules) {
  expectRejected(
      "pe: nc_matmul dst=psum[0:64]:bf16[[1,128]] stationary=sbuf[0:128]:bf16[[1,64]] "
      "moving=sbuf[0:128]+4096:bf16[[1,128]]",
      {"operand 'dst': dtype bf16 is not allowed here (allowed: fp32)"});
  expectRejected(
      "pe: nc_matmul dst=psum[0:64]:fp32[[1,128]] stationary=sbuf[0:128]:fp32[[1,64]] "
      "moving=sbuf[0:128]+4096:bf16[[1,128]]",
      {"fp32/tf32 partner (stationary is fp32, moving is bf16)"});
  expectRejected(
      "pe: nc_matmul dst=psum[0:64]:fp32[[1,128]] stationary=sbuf[0:128]:fp16[[1,64]] "
      "moving=sbuf[0:128]+4096:tf32[[1,128]]",
      {"(stationary is fp16, moving is tf32)"});
  expectRejected(
      "pe: nc_matmul dst=psum[0:64]:fp32[[1,128]] stationary=sbuf[0:128]:int8[[1,64]] "
      "moving=sbuf[0:128]+4096:bf16[[1,128]]",
      {"operand 'stationary': dtype int8 is not a floating-point type"});
  expectRejected(
      "pe: nc_matmul dst=psum[0:64]:fp32[[1,128]] "
      "stationary=sbuf[0:128]:fp8_e4m3fn[[1,64]] moving=sbuf[0:128]+4096:bf16[[1,128]]",
      {"operand 'stationary': fp8_e4m3fn matmul operands need NC-v4"});
}

TEST(NcMatmulVerifier, DoubleRowRules) {
  const std::string_view ok =
      "pe: nc_matmul dst=psum[0:32]:fp32[[1,64]] stationary=sbuf[0:128]:fp8_e4m3[[32,2],[1,32]] "
      "moving=sbuf[0:128]+1024:fp8_e5m2[[64,2],[1,64]] perf_mode=double_row";
  EXPECT_EQ(verifyError(ok), "");
  CoreLimits v2;
  v2.fp8DoubleRow = false;
  expectRejected(ok, {"perf_mode=double_row is not available on this chip"}, v2);
  expectRejected(
      "pe: nc_matmul dst=psum[0:32]:fp32[[1,64]] stationary=sbuf[0:128]:bf16[[32,2],[1,32]] "
      "moving=sbuf[0:128]+1024:fp8_e5m2[[64,2],[1,64]] perf_mode=double_row",
      {"operand 'stationary': double_row needs fp8_e4m3 or fp8_e5m2, not bf16"});
  expectRejected(
      "pe: nc_matmul dst=psum[0:32]:fp32[[1,64]] stationary=sbuf[0:128]:fp8_e4m3[[1,64]] "
      "moving=sbuf[0:128]+1024:fp8_e5m2[[64,2],[1,64]] perf_mode=double_row",
      {"operand 'stationary': double_row operands are laid out [K, 2, F]"});
  expectRejected(
      std::string(ok) + " tile_size=[128,64]",
      {"operand 'tile_size': column_size 64 enables column tiling", "perf_mode=double_row"});
}

TEST(NcMatmulVerifier, TilingRules) {
  const std::string small =
      "pe: nc_matmul dst=psum[0:32]:fp32[[1,64]] "
      "stationary=sbuf[0:32]:bf16[[1,32]] moving=sbuf[0:32]+1024:bf16[[1,64]]";
  EXPECT_EQ(verifyError(small + " tile_position=[96,96] tile_size=[32,32]"), "");
  expectRejected(small + " tile_size=[16,128]",
                 {"operand 'tile_size': row_size 16 is not a legal PE tile"});
  expectRejected(small + " tile_size=[128,48]", {"column_size 48 is not a legal PE tile"});
  CoreLimits v2;
  v2.matmulMinTile = 64;
  expectRejected(small + " tile_size=[32,128]", {"row_size 32", "at least 64 on this chip"}, v2);
  expectRejected(small + " tile_position=[32,0] tile_size=[64,128]",
                 {"operand 'tile_position': start_row 32 must be a multiple of row_size 64"});
  expectRejected(small + " tile_position=[0,128] tile_size=[128,32]",
                 {"start_column 128 must be a multiple of column_size 32 with the tile inside"});
  expectRejected(std::string(kMm) + " tile_size=[64,128]",
                 {"operand 'stationary': contraction K = 128 partitions exceeds the row tile of 64 "
                  "rows (tile_size [64,128])"});
  expectRejected(std::string(kMm) + " tile_size=[128,32]",
                 {"operand 'stationary': free size M = 64 exceeds the column tile of 32 columns"});
}

TEST(NcMatmulVerifier, TransposeModeRules) {
  const std::string t =
      "pe: nc_matmul dst=psum[0:32]:bf16[[1,64]] "
      "stationary=sbuf[0:64]:bf16[[1,32]] moving=sbuf[0:64]+1024:bf16[[1,64]] "
      "is_transpose=true";
  EXPECT_EQ(verifyError(t), "");
  expectRejected(t + " accumulate=true",
                 {"operand 'accumulate': is_transpose writes the transposed bits and cannot "
                  "accumulate"});
  expectRejected(
      "pe: nc_matmul dst=psum[0:32]:bf16[[1,64]] stationary=sbuf[0:64]:bf16[[1,32]] "
      "moving=sbuf[0:64]+1024:bf16[[1,32]] is_transpose=true",
      {"operand 'moving': is [64, 32]; in transpose mode it is the [64, 64] identity"});
  expectRejected(
      "pe: nc_matmul dst=psum[0:32]:fp32[[1,64]] stationary=sbuf[0:64]:bf16[[1,32]] "
      "moving=sbuf[0:64]+1024:bf16[[1,64]] is_transpose=true",
      {"operand 'dst': dtype fp32 differs from stationary's bf16"});
  expectRejected(
      "pe: nc_matmul dst=psum[0:32]:bf16[[1,64]] stationary=sbuf[0:64]:fp8_e4m3[[1,32]] "
      "moving=sbuf[0:64]+1024:bf16[[1,64]] is_transpose=true",
      {"operand 'dst': dtype bf16 is not allowed", "so dst must be uint16"});
  expectRejected(
      "pe: nc_matmul dst=psum[0:64]:bf16[[1,32]] stationary=sbuf[0:64]:bf16[[1,32]] "
      "moving=sbuf[0:64]+1024:bf16[[1,64]] is_transpose=true",
      {"operand 'dst': is [64, 32] but the transpose of stationary [64, 32] is [32, 64]"});
  expectRejected(
      "pe: nc_matmul dst=psum[0:32]:bf16[[1,64]] stationary=sbuf[0:64]:bf16[[1,32]] "
      "moving=sbuf[0:64]+1024:int16[[1,64]] is_transpose=true",
      {"operand 'moving': dtype int16 is not a floating-point type"});
}

TEST(NcTransposeVerifier, SizeShapeDtypeAndBankRules) {
  EXPECT_EQ(
      verifyError("dve: nc_transpose dst=sbuf[0:32]:fp32[[1,32]] data=psum[0:32]:fp32[[1,32]]"),
      "");
  expectRejected("pe: nc_transpose dst=psum[0:128]:bf16[[1,128]] data=sbuf[0:128]:bf16[[1,129]]",
                 {"operand 'data': is [128, 129]; the pe engine transposes at most [128, 128]"});
  expectRejected("dve: nc_transpose dst=sbuf[0:33]:bf16[[1,64]] data=sbuf[0:64]:bf16[[1,33]]",
                 {"operand 'data': is [64, 33]; the dve engine transposes at most [32, 32]"});
  expectRejected("dve: nc_transpose dst=sbuf[0:32]:bf16[[1,16]] data=sbuf[0:16]:bf16[[1,16]]",
                 {"operand 'dst': is [32, 16] but the transpose of data [16, 16] is [16, 16]"});
  expectRejected("dve: nc_transpose dst=sbuf[0:16]:fp32[[1,16]] data=sbuf[0:16]:bf16[[1,16]]",
                 {"operand 'dst': dtype fp32 differs from data's bf16"});
  expectRejected(
      "pe: nc_transpose dst=psum[0:16]:fp8_e4m3[[1,16]] "
      "data=sbuf[0:16]:fp8_e4m3[[1,16]]",
      {"operand 'dst': dtype fp8_e4m3 is not allowed", "must be uint16"});
  expectRejected("pe: nc_transpose dst=psum[0:16]+2016:fp32[[1,16]] data=sbuf[0:16]:fp32[[1,16]]",
                 {"operand 'dst': bytes [2016, 2080) cross a 2048-byte PSUM bank boundary"});
  expectRejected("act: nc_transpose dst=sbuf[0:16]:fp32[[1,16]] data=sbuf[0:16]:fp32[[1,16]]",
                 {"cannot be issued by the act engine (allowed: pe|dve)"});
}

}  // namespace
}  // namespace trn::isa
