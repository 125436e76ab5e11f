// The row forms of the element-wise arithmetic dispatch once per row; they must give exactly the
// scalar form's results, bit for bit, on ordinary values and on every special (±0, ±Inf, NaN,
// subnormals, values near overflow), for every ALU operator and activation function.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "trn/isa/alu.h"
#include "trn/isa/enums.h"

namespace trn::isa {
namespace {

std::vector<float> inputs() {
  using L = std::numeric_limits<float>;
  std::vector<float> v = {
      0.0f,          -0.0f,          1.0f,           -1.0f,           0.5f,
      L::infinity(), -L::infinity(), L::quiet_NaN(), L::denorm_min(), -L::denorm_min(),
      L::max(),      -L::max(),      88.7f,          -88.7f,          1e-30f,
      3.0f,          -7.25f};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-12.0f, 12.0f);
  for (int i = 0; i < 200; ++i) {
    v.push_back(dist(rng));
  }
  return v;
}

bool sameBits(float a, float b) {
  return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b) ||
         (std::isnan(a) && std::isnan(b));
}

TEST(AluRows, ActivationRowsMatchTheScalarFunctionBitForBit) {
  const std::vector<float> in = inputs();
  for (const auto& [f, name] : EnumTable<ActivationFunction>::kEntries) {
    for (const auto& [scale, bias] : {std::pair{1.0f, 0.0f}, std::pair{0.75f, -0.5f}}) {
      std::vector<float> out(in.size());
      applyActivationRow(f, in, out, scale, bias);
      std::vector<float> inPlace = in;
      applyActivationRow(f, inPlace, inPlace, scale, bias);
      for (std::size_t i = 0; i < in.size(); ++i) {
        const float scaled = in[i] * scale;
        const float expected = applyActivation(f, scaled + bias);
        ASSERT_TRUE(sameBits(out[i], expected))
            << name << "(" << in[i] << " * " << scale << " + " << bias << ") = " << out[i]
            << ", scalar " << expected;
        ASSERT_TRUE(sameBits(inPlace[i], expected)) << name << " in place, input " << in[i];
      }
    }
  }
}

TEST(AluRows, ElementwiseAndScalarRowsMatchTheScalarOperator) {
  const std::vector<float> a = inputs();
  std::vector<float> b = a;
  std::reverse(b.begin(), b.end());
  for (const auto& [op, name] : EnumTable<AluOp>::kEntries) {
    std::vector<float> rows = a;
    applyAluElementwise(op, rows, b);
    std::vector<float> withScalar = a;
    applyAluWithScalar(op, withScalar, 2.5f, false);
    std::vector<float> reversed = a;
    applyAluWithScalar(op, reversed, 2.5f, true);
    for (std::size_t i = 0; i < a.size(); ++i) {
      ASSERT_TRUE(sameBits(rows[i], applyAlu(op, a[i], b[i]))) << name << " at " << i;
      ASSERT_TRUE(sameBits(withScalar[i], applyAlu(op, a[i], 2.5f))) << name << " at " << i;
      ASSERT_TRUE(sameBits(reversed[i], applyAlu(op, 2.5f, a[i]))) << name << " at " << i;
    }
  }
}

}  // namespace
}  // namespace trn::isa
