// Golden tests of the Scalar-engine instructions against float64 references: every activation
// function over negative, positive, large, small, denormal and special inputs; scale and bias as
// immediates and [P, 1] tensors; output casts with nearest-even and stochastic rounding; the
// reduce_cmd accumulator semantics and activation_reduce; and the instruction-specific verifier
// rules.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "dma_scalar_reference.h"
#include "run_program.h"
#include "trn/isa/instrs/scalar_engine.h"
#include "trn/isa/program_text.h"
#include "trn/isa/verifier.h"

namespace trn::isa {
namespace {

using F = ActivationFunction;
using testref::kBf16;
using testref::roundNearestEven;
using trn::testing::fromBytes;
using trn::testing::TensorBytes;
using testref::run;
using trn::testing::toBytes;

// ---- the float64 reference definitions ----

double sigmoid(double x) { return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x)); }
double normalCdf(double x) { return 0.5 * std::erfc(-x * std::numbers::sqrt2 / 2); }
double normalPdf(double x) { return std::exp(-x * x / 2) / std::sqrt(2 * std::numbers::pi); }
double softplus(double x) { return x > 30 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

/// f(x) for finite or NaN x (prelu with the activation's zero slope).
double reference(F f, double x) {
  switch (f) {
    case F::kCopy: return x;
    case F::kSquare: return x * x;
    case F::kSigmoid: return sigmoid(x);
    case F::kRelu: return std::isnan(x) ? x : std::max(x, 0.0);
    case F::kPrelu: return std::isnan(x) ? x : x > 0 ? x : 0.0;
    case F::kGelu: return x * normalCdf(x);
    case F::kGeluDx: return normalCdf(x) + x * normalPdf(x);
    case F::kGeluApproxTanh: {
      const double u = std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x);
      // 0.5 (1 + tanh u), written as e^{2u} / (1 + e^{2u}) where 1 + tanh u would cancel.
      return u > -1 ? 0.5 * x * (1 + std::tanh(u)) : x * std::exp(2 * u) / (1 + std::exp(2 * u));
    }
    case F::kGeluApproxSigmoid: return x * sigmoid(1.702 * x);
    case F::kGeluApproxSigmoidDx: {
      const double s = sigmoid(1.702 * x);
      return s * (1 + 1.702 * x * (1 - s));
    }
    case F::kSilu: return x * sigmoid(x);
    case F::kSiluDx: {
      const double s = sigmoid(x);
      return s + x * s * (1 - s);
    }
    case F::kTanh: return std::tanh(x);
    case F::kSoftplus: return softplus(x);
    case F::kMish: return x * std::tanh(softplus(x));
    case F::kErf: return std::erf(x);
    case F::kErfDx: return 2 / std::sqrt(std::numbers::pi) * std::exp(-x * x);
    case F::kExp: return std::exp(x);
    case F::kLog: return std::log(x);
    case F::kSin: return std::sin(x);  // no range reduction on hardware: see docs/isa
    case F::kArctan: return std::atan(x);
    case F::kSqrt: return std::sqrt(x);
    case F::kRsqrt: return 1 / std::sqrt(x);
    case F::kReciprocal: return 1 / x;
    case F::kSign: return std::isnan(x) ? x : x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
    case F::kAbs: return std::fabs(x);
  }
  return NAN;
}

/// f(+Inf) and f(-Inf): the limits of the functions (NaN outside a function's domain).
std::pair<double, double> referenceAtInfinity(F f) {
  const double inf = INFINITY;
  const double halfPi = std::numbers::pi / 2;
  switch (f) {
    case F::kCopy: return {inf, -inf};
    case F::kSquare: return {inf, inf};
    case F::kSigmoid: return {1, 0};
    case F::kRelu: case F::kPrelu: return {inf, 0};
    case F::kGelu: case F::kGeluApproxTanh: case F::kGeluApproxSigmoid: case F::kSilu:
    case F::kMish: return {inf, 0};
    case F::kGeluDx: case F::kGeluApproxSigmoidDx: case F::kSiluDx: return {1, 0};
    case F::kTanh: case F::kErf: case F::kSign: return {1, -1};
    case F::kSoftplus: return {inf, 0};
    case F::kErfDx: return {0, 0};
    case F::kExp: return {inf, 0};
    case F::kLog: case F::kSqrt: return {inf, NAN};
    case F::kSin: return {NAN, NAN};
    case F::kArctan: return {halfPi, -halfPi};
    case F::kRsqrt: return {0, NAN};
    case F::kReciprocal: return {0, 0};
    case F::kAbs: return {inf, inf};
  }
  return {NAN, NAN};
}

/// Functions whose fp32 result is the correctly rounded value (no transcendental evaluation).
bool isExact(F f) {
  return f == F::kCopy || f == F::kSquare || f == F::kRelu || f == F::kPrelu || f == F::kSign ||
         f == F::kAbs || f == F::kReciprocal || f == F::kSqrt;
}

/// The spacing of fp32 at magnitude |v|.
double fp32Ulp(double v) {
  return std::ldexp(1.0, std::max(std::ilogb(std::fabs(v)), -126) - 23);
}

/// `got` (an fp32 result) is `want` rounded to fp32, give or take `ulps` fp32 spacings; a result
/// beyond the fp32 range must be Inf; zeros compare equal whatever their sign.
void expectFp32Near(float got, double want, int ulps, const std::string& where) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << where << ": got " << got << ", want NaN";
    return;
  }
  if (std::fabs(want) >= 0x1.ffffffp127) {
    EXPECT_EQ(got, std::copysign(INFINITY, want)) << where << ": want overflow to Inf";
    return;
  }
  ASSERT_FALSE(std::isnan(got)) << where << ": got NaN, want " << want;
  EXPECT_LE(std::fabs(got - want), (ulps + 0.5) * fp32Ulp(want))
      << where << ": got " << got << ", want " << want;
}

std::vector<float> activationInputs() {
  std::vector<float> v = {-1e30f, -1e4f, -100.0f, -88.5f, -30.0f, -20.0f, -10.0f, -7.5f, -5.0f,
                          -3.0f, -2.0f, -1.5f, -1.0f, -0.75f, -0.5f, -0.1f, -1e-3f, -1e-20f,
                          -1e-40f, -0.0f, 0.0f, 1e-40f, 1e-20f, 1e-3f, 0.1f, 0.5f, 0.75f, 1.0f, 1.5f,
                          2.0f, 3.0f, 5.0f, 7.5f, 10.0f, 20.0f, 30.0f, 88.5f, 100.0f, 1e4f, 1e30f,
                          3.4e38f, -3.4e38f, 3.14159265f, -3.14159265f, 1.57079633f, INFINITY,
                          -INFINITY, NAN};
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> small(-10.0f, 10.0f);
  std::uniform_real_distribution<float> large(-1000.0f, 1000.0f);
  while (v.size() < 256) {
    v.push_back(small(rng));
  }
  while (v.size() < 320) {
    v.push_back(large(rng));
  }
  return v;
}

TEST(Activation, EveryFunctionMatchesItsFloat64Definition) {
  const std::vector<float> x = activationInputs();
  const std::size_t n = x.size();
  constexpr auto& kFunctions = EnumTable<F>::kEntries;
  std::string text = fmt::format(".tensor a input fp32 [1, {0}]\n.tensor c output fp32 [{1}, {0}]\n"
                                 "sp: dma_copy dst=sbuf[0:1]:fp32[[1,{0}]] "
                                 "src=hbm:a:fp32[[{0},1],[1,{0}]] signal(s0+=1)\n",
                                 n, kFunctions.size());
  for (std::size_t k = 0; k < kFunctions.size(); ++k) {
    const std::size_t offset = (k + 1) * n * 4;
    text += fmt::format("act: activation dst=sbuf[0:1]+{}:fp32[[1,{}]] op={} "
                        "data=sbuf[0:1]:fp32[[1,{}]] wait(s0>=1) signal(s1+=1)\n",
                        offset, n, kFunctions[k].second, n);
    text += fmt::format("sp: dma_copy dst=hbm:c+{0}:fp32[[{1},1],[1,{1}]] "
                        "src=sbuf[0:1]+{2}:fp32[[1,{1}]] wait(s1>={3})\n",
                        k * n * 4, n, offset, kFunctions.size());
  }
  const std::vector<float> c = fromBytes<float>(run(text, {{"a", toBytes(x)}}).at("c"));
  for (std::size_t k = 0; k < kFunctions.size(); ++k) {
    const auto [f, name] = kFunctions[k];
    for (std::size_t i = 0; i < n; ++i) {
      // data * 1 + 0 in fp32 first (which turns -0 into +0).
      const float pre = x[i] * 1.0f + 0.0f;
      double want = 0;
      if (std::isinf(pre)) {
        const auto [plus, minus] = referenceAtInfinity(f);
        want = pre > 0 ? plus : minus;
      } else {
        want = reference(f, pre);
      }
      expectFp32Near(c[k * n + i], want, isExact(f) ? 0 : 2,
                     fmt::format("{}({})", name, x[i]));
    }
  }
}

TEST(Activation, ScaleAndBiasAsImmediatesAndPerPartitionTensors) {
  constexpr int kP = 32;
  constexpr int kF = 16;
  std::mt19937 rng(23);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  std::vector<float> data(kP * kF);
  std::vector<float> scale(kP);
  std::vector<float> bias(kP);
  for (float& v : data) {
    v = dist(rng);
  }
  for (int p = 0; p < kP; ++p) {
    scale[static_cast<std::size_t>(p)] = dist(rng);
    bias[static_cast<std::size_t>(p)] = dist(rng);
  }
  // Data in partitions 32..63 read in reverse (negative stride); results into partitions 64..95.
  const TensorBytes out = run(R"(
.tensor d input fp32 [32, 16]
.tensor s input fp32 [32, 1]
.tensor b input fp32 [32, 1]
.tensor c1 output fp32 [32, 16]
.tensor c2 output fp32 [32, 16]
.tensor c3 output fp32 [32, 16]
sp: dma_copy dst=sbuf[32:64]:fp32[[1,16]] src=hbm:d:fp32[[16,32],[1,16]] signal(s0+=1)
sp: dma_copy dst=sbuf[32:64]+64:fp32[[1,1]] src=hbm:s:fp32[[1,32],[1,1]] signal(s0+=1)
sp: dma_copy dst=sbuf[32:64]+68:fp32[[1,1]] src=hbm:b:fp32[[1,32],[1,1]] signal(s0+=1)
act: activation dst=sbuf[64:96]:fp32[[1,16]] op=copy data=sbuf[32:64]+60:fp32[[-1,16]] scale=sbuf[32:64]+64:fp32[[1,1]] bias=-0.75 wait(s0>=3)
act: activation dst=sbuf[64:96]+64:fp32[[1,16]] op=sigmoid data=sbuf[32:64]+60:fp32[[-1,16]] scale=1.5 bias=sbuf[32:64]+68:fp32[[1,1]]
act: activation dst=sbuf[64:96]+128:fp32[[1,16]] op=tanh data=sbuf[32:64]+60:fp32[[-1,16]] scale=sbuf[32:64]+64:fp32[[1,1]] bias=sbuf[32:64]+68:fp32[[1,1]] signal(s1+=1)
sp: dma_copy dst=hbm:c1:fp32[[16,32],[1,16]] src=sbuf[64:96]:fp32[[1,16]] wait(s1>=1)
sp: dma_copy dst=hbm:c2:fp32[[16,32],[1,16]] src=sbuf[64:96]+64:fp32[[1,16]]
sp: dma_copy dst=hbm:c3:fp32[[16,32],[1,16]] src=sbuf[64:96]+128:fp32[[1,16]]
)",
                              {{"d", toBytes(data)}, {"s", toBytes(scale)}, {"b", toBytes(bias)}});
  const std::vector<float> c1 = fromBytes<float>(out.at("c1"));
  const std::vector<float> c2 = fromBytes<float>(out.at("c2"));
  const std::vector<float> c3 = fromBytes<float>(out.at("c3"));
  for (std::size_t p = 0; p < kP; ++p) {
    for (std::size_t f = 0; f < kF; ++f) {
      const float x = data[p * kF + (kF - 1 - f)];
      const std::size_t i = p * kF + f;
      const float pre1 = x * scale[p] + -0.75f;  // each step rounded to fp32 (no FMA)
      const float pre2 = x * 1.5f + bias[p];
      const float pre3 = x * scale[p] + bias[p];
      EXPECT_EQ(c1[i], pre1) << p << "," << f;
      expectFp32Near(c2[i], sigmoid(pre2), 2, fmt::format("sigmoid at {},{}", p, f));
      expectFp32Near(c3[i], std::tanh(pre3), 2, fmt::format("tanh at {},{}", p, f));
    }
  }
}

TEST(Activation, InputsOfEveryDtypeAreWidenedExactly) {
  // Random bit patterns (NaN included) of each type, passed through copy into fp32.
  for (const char* t : {"bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "int8", "uint8", "int16", "int32"}) {
    const DType type = parseDType(t).value();
    const auto width = static_cast<std::size_t>(byteSize(type));
    std::vector<std::byte> bits(64 * width);
    std::mt19937 rng(37);
    for (std::byte& b : bits) {
      b = static_cast<std::byte>(rng() & 0xff);
    }
    const std::string text = fmt::format(R"(
.tensor a input {0} [2, 32]
.tensor c output fp32 [2, 32]
sp: dma_copy dst=sbuf[96:98]:{0}[[1,32]] src=hbm:a:{0}[[32,2],[1,32]] signal(s0+=1)
act: activation dst=sbuf[96:98]+256:fp32[[1,32]] op=copy data=sbuf[96:98]:{0}[[1,32]] wait(s0>=1) signal(s1+=1)
sp: dma_copy dst=hbm:c:fp32[[32,2],[1,32]] src=sbuf[96:98]+256:fp32[[1,32]] wait(s1>=1)
)",
                                         t);
    const std::vector<float> c = fromBytes<float>(run(text, {{"a", bits}}).at("c"));
    for (std::size_t i = 0; i < c.size(); ++i) {
      const std::uint32_t raw = testref::rawElement(bits, i, static_cast<int>(width));
      double want = 0;
      switch (type) {
        case DType::kBf16: want = testref::decode(raw, kBf16); break;
        case DType::kFp16: want = testref::decode(raw, testref::kFp16); break;
        case DType::kFp8E4m3: want = testref::decode(raw, testref::kFp8E4m3); break;
        case DType::kFp8E5m2: want = testref::decode(raw, testref::kFp8E5m2); break;
        case DType::kInt8: want = static_cast<std::int8_t>(raw); break;
        case DType::kUint8: want = raw; break;
        case DType::kInt16: want = static_cast<std::int16_t>(raw); break;
        default: want = roundNearestEven(static_cast<std::int32_t>(raw), testref::kFp32); break;
      }
      // copy computes x * 1 + 0, which turns -0 into +0.
      want = want == 0 ? 0.0 : want;
      testref::expectSameValue(c[i], want, fmt::format("{} element {} bits {:#x}", t, i, raw));
    }
  }
}

TEST(Activation, OutputCastsRoundToNearestEven) {
  std::vector<float> x = {0.0f, -0.0f, 1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, -1.0f - 0x1p-8f,
                          65519.0f, 65520.0f, 1e-5f, 0x1p-25f, 247.9f, 248.0f, 0x1p-10f, 61440.0f,
                          1e-40f, 3e38f, INFINITY, -INFINITY, NAN};
  std::mt19937 rng(29);
  std::uniform_real_distribution<float> dist(-300.0f, 300.0f);
  while (x.size() < 128) {
    x.push_back(dist(rng));
  }
  for (const auto& [name, format] : {std::pair{"bf16", kBf16}, std::pair{"fp16", testref::kFp16},
                                     std::pair{"fp8_e4m3", testref::kFp8E4m3},
                                     std::pair{"fp8_e5m2", testref::kFp8E5m2}}) {
    const std::string text = fmt::format(R"(
.tensor a input fp32 [1, 128]
.tensor c output {0} [1, 128]
.tensor e output {0} [1, 128]
sp: dma_copy dst=sbuf[0:1]:fp32[[1,128]] src=hbm:a:fp32[[128,1],[1,128]] signal(s0+=1)
act: activation dst=sbuf[0:1]+1024:{0}[[1,128]] op=copy data=sbuf[0:1]:fp32[[1,128]] wait(s0>=1)
act: activation dst=sbuf[0:1]+2048:{0}[[1,128]] op=exp data=sbuf[0:1]:fp32[[1,128]] scale=0.03125 signal(s1+=1)
sp: dma_copy dst=hbm:c:{0}[[128,1],[1,128]] src=sbuf[0:1]+1024:{0}[[1,128]] wait(s1>=1)
sp: dma_copy dst=hbm:e:{0}[[128,1],[1,128]] src=sbuf[0:1]+2048:{0}[[1,128]]
)",
                                         name);
    const TensorBytes out = run(text, {{"a", toBytes(x)}});
    const std::vector<double> c = testref::decodeAll(out.at("c"), format);
    const std::vector<double> e = testref::decodeAll(out.at("e"), format);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float pre = x[i] * 1.0f + 0.0f;
      testref::expectSameValue(c[i], roundNearestEven(pre, format),
                               fmt::format("{} copy of {}", name, x[i]));
      // exp is evaluated in float64 and rounded to fp32 first, then to the format: within one
      // step of the format of the directly rounded float64 value.
      const double want = roundNearestEven(std::exp(static_cast<double>(x[i] * 0.03125f)), format);
      if (std::isnan(want) || std::isinf(want)) {
        testref::expectSameValue(e[i], want, fmt::format("{} exp of {}", name, x[i]));
      } else {
        EXPECT_LE(std::fabs(e[i] - want), testref::spacing(std::fabs(want), format))
            << name << " exp of " << x[i];
      }
    }
  }
}

TEST(Activation, StochasticRoundingOfTheOutputIsReproducibleAndUnbiased) {
  constexpr int kN = 4096;
  const float v = 1.0f + 0.375f * 0x1p-7f;  // 3/8 of a bf16 spacing above 1
  const std::vector<float> x(kN, v);
  const std::string_view text = R"(
.tensor a input fp32 [32, 128]
.tensor c output bf16 [32, 128]
sp: dma_copy dst=sbuf[0:32]:fp32[[1,128]] src=hbm:a:fp32[[128,32],[1,128]] signal(s0+=1)
act: activation dst=sbuf[0:32]+1024:bf16[[1,128]] op=copy data=sbuf[0:32]:fp32[[1,128]] wait(s0>=1) signal(s1+=1)
sp: dma_copy dst=hbm:c:bf16[[128,32],[1,128]] src=sbuf[0:32]+1024:bf16[[1,128]] wait(s1>=1)
)";
  core::CoreOptions options;
  options.rounding = RoundingMode::kStochastic;
  options.seed = 99;
  const std::vector<std::byte> first = run(text, {{"a", toBytes(x)}}, options).at("c");
  EXPECT_EQ(run(text, {{"a", toBytes(x)}}, options).at("c"), first);
  options.seed = 100;
  EXPECT_NE(run(text, {{"a", toBytes(x)}}, options).at("c"), first);
  const std::vector<double> c = testref::decodeAll(first, kBf16);
  int up = 0;
  for (const double got : c) {
    ASSERT_TRUE(got == 1.0 || got == 1.0 + 0x1p-7) << got;
    up += got > 1.0 ? 1 : 0;
  }
  EXPECT_NEAR(static_cast<double>(up) / kN, 0.375, 0.035);
}

TEST(Activation, ReduceCommandsDriveThePerLaneAccumulatorRegisters) {
  constexpr int kP = 32;
  constexpr int kF = 24;
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> a(kP * kF);
  std::vector<float> b(kP * kF);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = dist(rng);
    b[i] = dist(rng);
  }
  // A in partitions 32..63, B in 0..31 and 32..63; the registers belong to lanes, so the
  // instructions on partitions 0..31 see lanes that no instruction has touched (zero at start).
  const TensorBytes out = run(R"(
.tensor a input fp32 [32, 24]
.tensor b input fp32 [32, 24]
.tensor r output fp32 [8, 32]
sp: dma_copy dst=sbuf[32:64]:fp32[[1,24]] src=hbm:a:fp32[[24,32],[1,24]] signal(s0+=1)
sp: dma_copy dst=sbuf[32:64]+128:fp32[[1,24]] src=hbm:b:fp32[[24,32],[1,24]] signal(s0+=1)
sp: dma_copy dst=sbuf[0:32]+128:fp32[[1,24]] src=hbm:b:fp32[[24,32],[1,24]] signal(s0+=1)
act: activation dst=sbuf[32:64]+512:bf16[[1,24]] op=exp data=sbuf[32:64]:fp32[[1,24]] reduce_cmd=reset_reduce reduce_res=sbuf[32:64]+1024:fp32[[1,1]] wait(s0>=3)
act: activation dst=sbuf[32:64]+512:bf16[[1,24]] op=copy data=sbuf[32:64]+128:fp32[[1,24]] reduce_cmd=reduce reduce_res=sbuf[32:64]+1028:fp32[[1,1]]
act: activation dst=sbuf[32:64]+512:bf16[[1,24]] op=copy data=sbuf[32:64]+128:fp32[[1,24]] reduce_cmd=idle reduce_res=sbuf[32:64]+1032:fp32[[1,1]]
act: activation dst=sbuf[32:64]+512:bf16[[1,24]] op=copy data=sbuf[32:64]+128:fp32[[1,24]] reduce_cmd=reduce
act: activation dst=sbuf[32:64]+512:bf16[[1,24]] op=copy data=sbuf[32:64]+128:fp32[[1,24]] reduce_res=sbuf[32:64]+1036:fp32[[1,1]]
act: activation dst=sbuf[32:64]+512:bf16[[1,24]] op=copy data=sbuf[32:64]+128:fp32[[1,24]] reduce_cmd=reset reduce_res=sbuf[32:64]+1040:fp32[[1,1]]
act: activation_reduce dst=sbuf[32:64]+512:fp32[[1,24]] op=square data=sbuf[32:64]+128:fp32[[1,24]] reduce_res=sbuf[32:64]+1044:fp32[[1,1]] scale=0.5 bias=1
act: activation dst=sbuf[0:32]+512:fp32[[1,24]] op=copy data=sbuf[0:32]+128:fp32[[1,24]] reduce_cmd=reduce reduce_res=sbuf[32:64]+1048:fp32[[1,1]]
act: activation dst=sbuf[32:64]+512:fp32[[1,24]] op=copy data=sbuf[32:64]+128:fp32[[1,24]] reduce_res=sbuf[32:64]+1052:fp32[[1,1]] signal(s1+=1)
sp: dma_copy dst=hbm:r:fp32[[1,32],[32,8]] src=sbuf[32:64]+1024:fp32[[1,8]] wait(s1>=1)
)",
                              {{"a", toBytes(a)}, {"b", toBytes(b)}});
  const std::vector<float> r = fromBytes<float>(out.at("r"));
  auto got = [&](int slot, std::size_t p) { return r[static_cast<std::size_t>(slot) * kP + p]; };
  auto rowSum = [&](const std::vector<float>& m, std::size_t p, auto&& fn) {
    float sum = 0.0f;  // the definition: fp32, in free order
    double exact = 0;
    for (std::size_t f = 0; f < kF; ++f) {
      const float y = fn(m[p * kF + f]);
      sum += y;
      exact += y;
    }
    EXPECT_NEAR(sum, exact, 1e-5 * kF) << p;
    return sum;
  };
  for (std::size_t p = 0; p < kP; ++p) {
    const float expSum = rowSum(a, p, [](float v) { return std::exp(v); });
    const float bSum = rowSum(b, p, [](float v) { return v; });
    EXPECT_NEAR(got(0, p), expSum, 4e-6f * std::fabs(expSum)) << p;  // exp within its rounding
    const float afterReduce = got(0, p) + bSum;
    EXPECT_EQ(got(1, p), afterReduce) << p;
    EXPECT_EQ(got(2, p), afterReduce) << p;            // idle leaves them
    EXPECT_EQ(got(3, p), afterReduce + bSum) << p;     // reduce without read-out, then read
    EXPECT_EQ(got(4, p), 0.0f) << p;                   // reset
    const float squares = rowSum(b, p, [](float v) {
      const float pre = v * 0.5f + 1.0f;
      return pre * pre;
    });
    EXPECT_EQ(got(5, p), squares) << p;                // activation_reduce = reset_reduce
    EXPECT_EQ(got(6, p), bSum) << p;                   // lanes 0..31 started at zero
    EXPECT_EQ(got(7, p), squares) << p;                // lanes 32..63 kept activation_reduce's
  }
}

// ---- verifier rules ----

Status verifyLine(std::string_view line) {
  const std::string text = fmt::format("{}\n", line);
  const Result<Program> program = parseProgramText(text, "v.tasm");
  TRN_CHECK(program.ok()) << program.status().toString();
  return verifyProgram(*program, CoreLimits{});
}

void expectRejected(std::string_view line, std::initializer_list<std::string_view> fragments) {
  const Status s = verifyLine(line);
  ASSERT_FALSE(s.ok()) << "accepted: " << line;
  EXPECT_EQ(s.code(), ErrorCode::kFailedPrecondition);
  for (const std::string_view f : fragments) {
    EXPECT_NE(s.message().find(f), std::string::npos) << "missing '" << f << "' in: " << s.message();
  }
}

constexpr std::string_view kAct =
    "act: activation dst=sbuf[0:32]:fp32[[1,64]] data=psum[0:32]:fp32[[1,64]] op=exp";

TEST(ActivationVerifier, AcceptsTheFullForm) {
  EXPECT_TRUE(verifyLine(fmt::format("{} scale=sbuf[0:32]+512:fp32[[1,1]] bias=2 "
                                     "reduce_cmd=reset_reduce reduce_res=psum[0:32]+512:fp32[[1,1]]",
                                     kAct))
                  .ok());
}

TEST(ActivationVerifier, ReduceOpMustBeAdd) {
  expectRejected(fmt::format("{} reduce_op=max reduce_cmd=reduce", kAct),
                 {"act#0 'activation", "operand 'reduce_op': max is not supported; the Scalar "
                                       "engine's accumulator registers only add"});
  expectRejected("act: activation_reduce dst=sbuf[0:32]:fp32[[1,64]] data=sbuf[0:32]:fp32[[1,64]] "
                 "op=exp reduce_op=min reduce_res=sbuf[0:32]+512:fp32[[1,1]]",
                 {"act#0 'activation_reduce", "operand 'reduce_op': min is not supported"});
}

TEST(ActivationVerifier, LoadReduceNeedsAnInitialValue) {
  expectRejected(fmt::format("{} reduce_cmd=load_reduce", kAct),
                 {"operand 'reduce_cmd': load_reduce needs an initial value"});
}

TEST(ActivationVerifier, ReduceResIsOnePerPartition) {
  expectRejected(fmt::format("{} reduce_cmd=reset_reduce reduce_res=sbuf[0:32]+512:fp32[[1,2]]", kAct),
                 {"operand 'reduce_res': a per-partition operand must be [32, 1], not [32, 2]"});
  expectRejected("act: activation_reduce dst=sbuf[0:32]:fp32[[1,64]] data=sbuf[0:32]:fp32[[1,64]] "
                 "op=exp reduce_res=sbuf[0:16]+512:fp32[[1,1]]",
                 {"operand 'reduce_res': a per-partition operand must be [32, 1], not [16, 1]"});
}

TEST(ActivationVerifier, DstAndDataHaveTheSameShape) {
  expectRejected("act: activation dst=sbuf[0:32]:fp32[[1,32]] data=sbuf[0:32]:fp32[[1,64]] op=exp",
                 {"operands 'dst' [32 partitions x 32] and 'data' [32 partitions x 64] differ"});
}

TEST(ActivationVerifier, ScaleAndBiasAreImmediatesOrOnePerPartition) {
  expectRejected(fmt::format("{} scale=sbuf[0:32]+512:fp32[[1,4]]", kAct),
                 {"operand 'scale': a per-partition operand must be [32, 1], not [32, 4]"});
  expectRejected(fmt::format("{} bias=sbuf[32:64]+512:fp32[[1,2]]", kAct),
                 {"operand 'bias': a per-partition operand must be [32, 1], not [32, 2]"});
}

TEST(ActivationVerifier, FreeSizeWithinTheComputeTileLimit) {
  expectRejected("act: activation dst=sbuf[0:1]:fp32[[1,4097]] data=psum[0:1]:bf16[[1,4097]] op=exp",
                 {"operand 'data': free size 4097 exceeds 4096 (Vector/Scalar free size from PSUM)"});
}

}  // namespace
}  // namespace trn::isa
