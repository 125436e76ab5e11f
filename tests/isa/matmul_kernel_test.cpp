#include "trn/isa/matmul_kernel.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace trn::isa {
namespace {

struct Matrix {
  std::vector<float> data;
  std::size_t rows;
  std::size_t cols;
  std::size_t stride;
  Matrix(std::size_t r, std::size_t c, std::size_t pad = 0)
      : data(r * (c + pad)), rows(r), cols(c), stride(c + pad) {}
  float& at(std::size_t r, std::size_t c) { return data[r * stride + c]; }
  [[nodiscard]] MatrixView<const float> view() const { return {data.data(), rows, cols, stride}; }
  MatrixView<float> mutableView() { return {data.data(), rows, cols, stride}; }
};

bool sameBits(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
}

// Values that stress rounding: bf16-representable values of mixed magnitude, so products are
// exact and the order of the fp32 additions decides the result bits.
float randomValue(std::mt19937& rng) {
  const auto bits = static_cast<std::uint32_t>(rng()) & 0xffff0000u;
  const float v = std::bit_cast<float>(bits);
  if (!std::isfinite(v) || std::fabs(v) > 1e10f || std::fabs(v) < 1e-10f) {
    return std::ldexp(static_cast<float>(rng() % 2048) - 1024.0f, static_cast<int>(rng() % 20) - 10);
  }
  return v;
}

void expectKernelMatchesReference(std::size_t k, std::size_t m, std::size_t n, std::mt19937& rng,
                                  std::size_t pad) {
  Matrix stationary(k, m, pad);
  Matrix moving(k, n, pad);
  for (float& v : stationary.data) {
    v = randomValue(rng);
  }
  for (float& v : moving.data) {
    v = randomValue(rng);
  }
  for (const PsumWrite mode : {PsumWrite::kOverwrite, PsumWrite::kAccumulate}) {
    Matrix fast(m, n, pad);
    Matrix reference(m, n, pad);
    for (std::size_t i = 0; i < fast.data.size(); ++i) {
      fast.data[i] = reference.data[i] = randomValue(rng);
    }
    matmulTile(stationary.view(), moving.view(), fast.mutableView(), mode);
    matmulTileReference(stationary.view(), moving.view(), reference.mutableView(), mode);
    for (std::size_t i = 0; i < fast.data.size(); ++i) {
      ASSERT_TRUE(sameBits(fast.data[i], reference.data[i]))
          << "K=" << k << " M=" << m << " N=" << n << " element " << i << ": " << fast.data[i]
          << " vs " << reference.data[i];
    }
  }
}

TEST(MatmulKernel, BitIdenticalToTheSequentialDefinitionOnRaggedShapes) {
  std::mt19937 rng(7);
  for (const std::size_t k : {1, 2, 31, 128}) {
    for (const std::size_t m : {1, 5, 6, 7, 64, 128}) {
      for (const std::size_t n : {1, 15, 16, 17, 63, 64, 65, 129, 512}) {
        expectKernelMatchesReference(k, m, n, rng, (k + m + n) % 3);
      }
    }
  }
}

TEST(MatmulKernel, SpecialValuesPropagateAsInTheDefinition) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  const float denormal = std::numeric_limits<float>::denorm_min();
  Matrix stationary(3, 7);
  Matrix moving(3, 40);
  const float specials[] = {0.0f, -0.0f, kInf, -kInf, kNaN, denormal, 1e38f, -1e38f, 1.0f, 3.0f};
  std::mt19937 rng(1);
  for (float& v : stationary.data) {
    v = specials[rng() % 10];
  }
  for (float& v : moving.data) {
    v = specials[rng() % 10];
  }
  Matrix fast(7, 40);
  Matrix reference(7, 40);
  matmulTile(stationary.view(), moving.view(), fast.mutableView(), PsumWrite::kOverwrite);
  matmulTileReference(stationary.view(), moving.view(), reference.mutableView(),
                      PsumWrite::kOverwrite);
  for (std::size_t i = 0; i < fast.data.size(); ++i) {
    EXPECT_TRUE(sameBits(fast.data[i], reference.data[i])) << i;
  }
}

// Against float64: the fp32 sequential sum of exact products differs from the exact sum by at
// most K * 2^-24 * sum |products| (standard recursive-summation bound).
TEST(MatmulKernel, CloseToTheFloat64Product) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  constexpr std::size_t kK = 128;
  constexpr std::size_t kM = 128;
  constexpr std::size_t kN = 512;
  Matrix stationary(kK, kM);
  Matrix moving(kK, kN);
  for (float& v : stationary.data) {
    v = std::bit_cast<float>(std::bit_cast<std::uint32_t>(dist(rng)) & 0xffff0000u);
  }
  for (float& v : moving.data) {
    v = std::bit_cast<float>(std::bit_cast<std::uint32_t>(dist(rng)) & 0xffff0000u);
  }
  Matrix out(kM, kN);
  matmulTile(stationary.view(), moving.view(), out.mutableView(), PsumWrite::kOverwrite);
  for (std::size_t m = 0; m < kM; ++m) {
    for (std::size_t n = 0; n < kN; ++n) {
      double exact = 0;
      double magnitude = 0;
      for (std::size_t k = 0; k < kK; ++k) {
        const double p = double{stationary.at(k, m)} * double{moving.at(k, n)};
        exact += p;
        magnitude += std::fabs(p);
      }
      ASSERT_LE(std::fabs(out.at(m, n) - exact), kK * 0x1.0p-24 * magnitude) << m << "," << n;
    }
  }
}

TEST(MatmulKernel, AccumulateAddsTheTileToPsumInFp32) {
  Matrix stationary(1, 1);
  Matrix moving(1, 1);
  stationary.at(0, 0) = 3.0f;
  moving.at(0, 0) = 0x1.0p-24f;  // product 3 * 2^-24
  Matrix out(1, 1);
  out.at(0, 0) = 1.0f;
  matmulTile(stationary.view(), moving.view(), out.mutableView(), PsumWrite::kAccumulate);
  // 1 + 3*2^-24 rounds to the nearest fp32, 1 + 2^-22 (spacing 2^-23 near 1, ties to even).
  EXPECT_EQ(out.at(0, 0), 1.0f + 0x1.0p-22f);
}

TEST(MatmulKernelDeathTest, MismatchedShapesAreABug) {
  Matrix stationary(4, 3);
  Matrix moving(5, 8);
  Matrix out(3, 8);
  EXPECT_DEATH(matmulTile(stationary.view(), moving.view(), out.mutableView(),
                          PsumWrite::kOverwrite),
               "contraction mismatch");
}

}  // namespace
}  // namespace trn::isa
