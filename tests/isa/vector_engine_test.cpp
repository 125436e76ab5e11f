// Golden tests of the Vector-engine element-wise instructions (vector_engine.h) against float64
// references, run end to end on the functional core, plus one test per instruction-specific
// verifier rule. The random-number instructions are tested in vector_random_test.cpp.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <functional>

#include "vector_test_util.h"

namespace trn::isa {
namespace {

using vtest::alu32;
using vtest::decode;
using vtest::encode;
using vtest::expectCastOf;
using vtest::expectRejected;
using vtest::expectStochasticCastOf;
using vtest::inputRegion;
using vtest::outputRegion;
using vtest::randomValues;
using vtest::rawBits;
using vtest::Region;
using vtest::runKernel;
using vtest::verifyLine;

constexpr std::array kFloatTypes = {DType::kFp32, DType::kBf16, DType::kFp16, DType::kFp8E4m3,
                                    DType::kFp8E5m2};

/// Special fp32 inputs: NaN, infinities, a denormal, the largest finite values, zeros.
std::vector<float> specials() {
  return {NAN, INFINITY, -INFINITY, 1e-40f, -1.4e-45f, 3.0e38f, -3.0e38f, 0.0f, -0.0f, 1.0f};
}

core::CoreOptions stochastic(std::uint64_t seed) {
  core::CoreOptions options;
  options.rounding = RoundingMode::kStochastic;
  options.seed = seed;
  return options;
}

// ---- tensor_tensor ----

TEST(TensorTensor, EveryFloatTypeAndOperatorMatchesTheFloat64Reference) {
  const std::vector<AluOp> ops = {AluOp::kAdd,     AluOp::kSubtract, AluOp::kMultiply,
                                  AluOp::kDivide,  AluOp::kMax,      AluOp::kMin,
                                  AluOp::kGreater, AluOp::kAbsMax,   AluOp::kPow};
  std::mt19937 rng(1);
  for (const DType type : kFloatTypes) {
    const auto a = randomValues(32 * 64, type, rng, 0.25, 4.0);
    const auto b = randomValues(32 * 64, type, rng, -4.0, 4.0);
    std::vector<Region> regions = {inputRegion("a", type, 32, 32, 64, a),
                                   inputRegion("b", type, 32, 32, 64, b, 4096)};
    std::vector<std::string> lines;
    for (std::size_t k = 0; k < ops.size(); ++k) {
      regions.push_back(outputRegion(fmt::format("c{}", k), type, 32, 32, 64,
                                     8192 + static_cast<std::int64_t>(k) * 4096));
      lines.push_back(fmt::format("{}: tensor_tensor dst={} data0={} data1={} op={}",
                                  ops[k] == AluOp::kPow ? "pool" : "dve", regions.back().ap(),
                                  regions[0].ap(), regions[1].ap(), enumName(ops[k])));
    }
    const auto outputs = runKernel(regions, lines);
    for (std::size_t k = 0; k < ops.size(); ++k) {
      std::vector<float> expected(a.size());
      for (std::size_t i = 0; i < a.size(); ++i) {
        expected[i] = alu32(ops[k], a[i], b[i]);
      }
      expectCastOf(outputs.at(fmt::format("c{}", k)), expected, type,
                   fmt::format("{} {}", dtypeName(type), enumName(ops[k])));
    }
  }
}

TEST(TensorTensor, IntegersComputeThroughFp32AndSaturateOnWrite) {
  const std::vector<float> a = {100, -100, 7, 1000, -5, 255, 12, 0};
  const std::vector<float> b = {100, -100, -3, 1000, 3, 1, 0, -128};
  Region ra = inputRegion("a", DType::kInt32, 0, 1, 8, a);
  Region rb = inputRegion("b", DType::kInt32, 0, 1, 8, b, 64);
  Region sum = outputRegion("sum", DType::kInt8, 0, 1, 8, 128);
  Region product = outputRegion("product", DType::kInt32, 0, 1, 8, 192);
  const auto out = runKernel({ra, rb, sum, product},
                             {fmt::format("dve: tensor_tensor dst={} data0={} data1={} op=add",
                                          sum.ap(), ra.ap(), rb.ap()),
                              fmt::format("dve: tensor_tensor dst={} data0={} data1={} op=multiply",
                                          product.ap(), ra.ap(), rb.ap())});
  EXPECT_EQ(decode(out.at("sum"), DType::kInt8),
            (std::vector<float>{127, -128, 4, 127, -2, 127, 12, -128}));
  EXPECT_EQ(decode(out.at("product"), DType::kInt32),
            (std::vector<float>{10000, 10000, -21, 1000000, -15, 255, 0, 0}));
}

TEST(TensorTensor, BitwiseOperatorsActOnIntegerValues) {
  const std::vector<float> a = {0xff0, -16, 12345, 1 << 20, 7, -1};
  const std::vector<float> b = {0x0ff, 2, 0x0f0f, 3, 31, 0x7fff};
  for (const AluOp op : {AluOp::kBitwiseAnd, AluOp::kBitwiseOr, AluOp::kBitwiseXor,
                         AluOp::kShiftLeft, AluOp::kShiftRight}) {
    Region ra = inputRegion("a", DType::kInt32, 0, 1, 6, a);
    Region rb = inputRegion("b", DType::kInt32, 0, 1, 6, b, 64);
    Region out = outputRegion("c", DType::kInt32, 0, 1, 6, 128);
    const auto outputs =
        runKernel({ra, rb, out}, {fmt::format("dve: tensor_tensor dst={} data0={} data1={} op={}",
                                              out.ap(), ra.ap(), rb.ap(), enumName(op))});
    std::vector<float> expected(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      expected[i] = alu32(op, a[i], b[i]);
    }
    expectCastOf(outputs.at("c"), expected, DType::kInt32, enumName(op));
  }
  // Spot values: a logical right shift of -16 by 2 and an and with a mask.
  EXPECT_EQ(alu32(AluOp::kShiftRight, -16, 2), 1073741824.0f);  // 0x3ffffffc rounded in fp32
  EXPECT_EQ(alu32(AluOp::kBitwiseAnd, 0xff0, 0x0ff), 0xf0);
}

TEST(TensorTensor, OneInputInPsumAndStridedPartialPartitions) {
  std::mt19937 rng(2);
  const auto a = randomValues(64 * 32, DType::kBf16, rng);
  const auto b = randomValues(64 * 32, DType::kFp32, rng);
  Region ra = inputRegion("a", DType::kBf16, 64, 64, 32, a);
  Region rb = inputRegion("b", DType::kFp32, 64, 64, 32, b);
  rb.memory = Memory::kPsum;
  Region out = outputRegion("c", DType::kFp32, 64, 64, 32, 1024);
  // data0 walks each partition backwards.
  const auto outputs = runKernel(
      {ra, rb, out}, {fmt::format("dve: tensor_tensor dst={} data0={} data1={} op=subtract",
                                  out.ap(), ra.ap("[[-1,32]]", 31), rb.ap())});
  std::vector<float> expected(a.size());
  for (std::size_t p = 0; p < 64; ++p) {
    for (std::size_t f = 0; f < 32; ++f) {
      expected[p * 32 + f] = alu32(AluOp::kSubtract, a[p * 32 + 31 - f], b[p * 32 + f]);
    }
  }
  expectCastOf(outputs.at("c"), expected, DType::kFp32);
}

TEST(TensorTensorVerifier, RejectsTwoPsumInputsAndBitwiseFloats) {
  expectRejected(
      verifyLine("dve: tensor_tensor dst=sbuf[0:4]:fp32[[1,8]] data0=psum[0:4]:fp32[[1,8]] "
                 "data1=psum[0:4]+64:fp32[[1,8]] op=add"),
      {"'data0' and 'data1' are both in PSUM"});
  expectRejected(
      verifyLine("dve: tensor_tensor dst=sbuf[0:4]:int32[[1,8]] data0=sbuf[0:4]:fp32[[1,8]] "
                 "data1=sbuf[0:4]+64:int32[[1,8]] op=bitwise_or"),
      {"operand 'data0'", "dtype fp32 is not an integer type"});
}

// ---- tensor_copy ----

TEST(TensorCopy, CastsEdgeValuesLikeTheConversionRules) {
  const std::vector<float> values = {NAN,    INFINITY, -INFINITY, 1e-40f, 70000.0f,
                                     300.0f, -300.0f,  2.5f,      3.5f,   -0.0f};
  for (const DType type : {DType::kBf16, DType::kFp16, DType::kFp8E4m3, DType::kFp8E4m3Fn,
                           DType::kInt8, DType::kUint8, DType::kInt32}) {
    Region in = inputRegion("a", DType::kFp32, 0, 1, 10, values);
    Region out = outputRegion("c", type, 0, 1, 10, 64);
    const auto outputs =
        runKernel({in, out}, {fmt::format("dve: tensor_copy dst={} src={}", out.ap(), in.ap())});
    expectCastOf(outputs.at("c"), values, type, dtypeName(type));
  }
  // The rules in numbers: fp16 overflow is Inf, int8 saturates, NaN becomes 0, ties go to even.
  EXPECT_EQ(rawBits(encode({70000.0f}, DType::kFp16), DType::kFp16)[0], 0x7c00U);
  EXPECT_EQ(decode(encode({300.0f, NAN, 2.5f}, DType::kInt8), DType::kInt8),
            (std::vector<float>{127, 0, 2}));
}

TEST(TensorCopy, SameTypeCopiesAreBitExactIncludingNanPayloadsAndNegativeStrides) {
  const std::vector<std::uint32_t> bits = {0x7fa00001, 0xffc12345, 0x00000001, 0x80000000,
                                           0x7f800000, 0x3f800000, 0xff7fffff, 0x12345678};
  Region in = vtest::makeRegion("a", DType::kFp32, 32, 2, 4);
  for (const std::uint32_t b : bits) {
    const auto* p = reinterpret_cast<const std::byte*>(&b);
    in.input.insert(in.input.end(), p, p + 4);
  }
  Region out = outputRegion("c", DType::kFp32, 32, 2, 4, 64);
  const auto outputs = runKernel(
      {in, out}, {fmt::format("act: tensor_copy dst={} src={}", out.ap(), in.ap("[[-1,4]]", 3))});
  EXPECT_EQ(rawBits(outputs.at("c"), DType::kFp32),
            (std::vector<std::uint32_t>{0x80000000, 0x00000001, 0xffc12345, 0x7fa00001, 0x12345678,
                                        0xff7fffff, 0x3f800000, 0x7f800000}));
}

TEST(TensorCopy, StochasticRoundingIsReproducibleAndUnbiased) {
  const float x = 1.0f + 0x1p-9f;  // a quarter of the bf16 spacing above 1
  const std::vector<float> values(128 * 512, x);
  Region in = inputRegion("a", DType::kFp32, 0, 128, 512, values);
  Region out = outputRegion("c", DType::kBf16, 0, 128, 512, 4096);
  const std::string line = fmt::format("pool: tensor_copy dst={} src={}", out.ap(), in.ap());
  const auto first = runKernel({in, out}, {line}, stochastic(7));
  const auto again = runKernel({in, out}, {line}, stochastic(7));
  const auto other = runKernel({in, out}, {line}, stochastic(8));
  const auto nearest = runKernel({in, out}, {line});
  EXPECT_EQ(first.at("c"), again.at("c"));
  EXPECT_NE(first.at("c"), other.at("c"));
  double sum = 0;
  for (const float v : decode(first.at("c"), DType::kBf16)) {
    ASSERT_TRUE(v == 1.0f || v == 1.0f + 0x1p-7f) << v;
    sum += v;
  }
  // Each element rounds up with probability 1/4: the mean error is within a few standard errors
  // (2^-7 * sqrt(3/16) / 256 ~ 1.3e-5) of zero, while nearest-even is off by 2^-9 everywhere.
  EXPECT_NEAR(sum / static_cast<double>(values.size()), static_cast<double>(x), 1e-4);
  for (const float v : decode(nearest.at("c"), DType::kBf16)) {
    ASSERT_EQ(v, 1.0f);
  }
}

// ---- memset ----

TEST(Memset, FillsWithTheValueCastToTheDestinationType) {
  Region bytes = outputRegion("i8", DType::kInt8, 96, 1, 16);
  Region halves = outputRegion("bf", DType::kBf16, 0, 128, 8, 64);
  Region under = inputRegion("u", DType::kFp32, 32, 32, 8, std::vector<float>(256, -1.0f), 128);
  under.output = true;
  const auto out = runKernel({bytes, halves, under},
                             {fmt::format("pool: memset dst={} value=300", bytes.ap()),
                              fmt::format("act: memset dst={} value=0.33333334", halves.ap()),
                              // Every other element of a pre-filled region.
                              fmt::format("dve: memset dst={} value=inf", under.ap("[[2,4]]"))});
  EXPECT_EQ(decode(out.at("i8"), DType::kInt8), std::vector<float>(16, 127.0f));
  expectCastOf(out.at("bf"), std::vector<float>(128 * 8, 0.33333334f), DType::kBf16);
  std::vector<float> expected(256, -1.0f);
  for (std::size_t p = 0; p < 32; ++p) {
    for (std::size_t f = 0; f < 8; f += 2) {
      expected[p * 8 + f] = INFINITY;
    }
  }
  expectCastOf(out.at("u"), expected, DType::kFp32);
}

// ---- tensor_scalar ----

/// The float64 model of one tensor_scalar stage, rounded to fp32.
float stage(AluOp op, float data, float operand, bool reverse) {
  if (op == AluOp::kBypass) {
    return data;
  }
  return reverse ? alu32(op, operand, data) : alu32(op, data, operand);
}

TEST(TensorScalar, OperatorPairsReverseFlagsAndPerPartitionOperandsMatchTheReference) {
  struct Case {
    AluOp op0;
    bool reverse0;
    AluOp op1;
    bool reverse1;
  };
  const Case cases[] = {{AluOp::kMultiply, false, AluOp::kAdd, false},
                        {AluOp::kSubtract, true, AluOp::kBypass, false},
                        {AluOp::kDivide, false, AluOp::kMax, false},
                        {AluOp::kAdd, false, AluOp::kDivide, true},
                        {AluOp::kBypass, false, AluOp::kSubtract, true},
                        {AluOp::kPow, false, AluOp::kLessEqual, false}};
  std::mt19937 rng(3);
  for (const DType type : {DType::kFp32, DType::kBf16, DType::kFp16, DType::kFp8E4m3}) {
    for (const Case& c : cases) {
      const auto data = randomValues(64 * 48, type, rng, 0.5, 8.0);
      const auto s0 = randomValues(64, DType::kFp32, rng, 0.5, 3.0);
      Region in = inputRegion("a", type, 64, 64, 48, data);
      Region op0 = inputRegion("s0", DType::kFp32, 64, 64, 1, s0, 1024);
      Region out = outputRegion("c", type, 64, 64, 48, 2048);
      const auto outputs = runKernel(
          {in, op0, out},
          {fmt::format("dve: tensor_scalar dst={} data={} op0={} operand0={} reverse0={} op1={} "
                       "operand1=-1.5 reverse1={}",
                       out.ap(), in.ap(), enumName(c.op0), op0.ap(), c.reverse0, enumName(c.op1),
                       c.reverse1)});
      std::vector<float> expected(data.size());
      for (std::size_t i = 0; i < data.size(); ++i) {
        expected[i] =
            stage(c.op1, stage(c.op0, data[i], s0[i / 48], c.reverse0), -1.5f, c.reverse1);
      }
      expectCastOf(outputs.at("c"), expected, type,
                   fmt::format("{} {} {}", dtypeName(type), enumName(c.op0), enumName(c.op1)));
    }
  }
}

TEST(TensorScalar, EdgeValuesDenormalsAndSaturationOnWrite) {
  const std::vector<float> values = specials();
  for (const DType type :
       {DType::kFp32, DType::kBf16, DType::kFp16, DType::kFp8E4m3Fn, DType::kInt8}) {
    Region in = inputRegion("a", DType::kFp32, 0, 1, 10, values);
    Region out = outputRegion("c", type, 0, 1, 10, 64);
    const auto outputs = runKernel(
        {in, out}, {fmt::format("dve: tensor_scalar dst={} data={} op0=multiply operand0=2 "
                                "op1=add operand1=1e-40",
                                out.ap(), in.ap())});
    std::vector<float> expected;
    for (const float v : values) {
      expected.push_back(alu32(AluOp::kAdd, alu32(AluOp::kMultiply, v, 2.0f), 1e-40f));
    }
    expectCastOf(outputs.at("c"), expected, type, dtypeName(type));
  }
  // In numbers: fp32 keeps the denormal sum, 3e38 * 2 overflows to Inf, int8 saturates.
  const float denormal = alu32(AluOp::kAdd, alu32(AluOp::kMultiply, 1e-40f, 2.0f), 1e-40f);
  EXPECT_EQ(denormal, 3.0f * 1e-40f);
  EXPECT_LT(denormal, 0x1p-126f);
  EXPECT_EQ(decode(encode({1e30f, NAN, -1e30f}, DType::kInt8), DType::kInt8),
            (std::vector<float>{127, 0, -128}));
}

TEST(TensorScalar, RunsOnTheScalarAndGpSimdEngines) {
  std::mt19937 rng(4);
  const auto data = randomValues(32 * 32, DType::kBf16, rng);
  Region in = inputRegion("a", DType::kBf16, 0, 32, 32, data);
  Region act = outputRegion("act", DType::kFp32, 0, 32, 32, 256);
  Region pool = outputRegion("pool", DType::kFp16, 0, 32, 32, 512);
  const auto out = runKernel(
      {in, act, pool},
      {fmt::format("act: tensor_scalar dst={} data={} op0=multiply operand0=0.5 op1=add "
                   "operand1=3",
                   act.ap(), in.ap()),
       fmt::format("pool: tensor_scalar dst={} data={} op0=subtract operand0=1 reverse0=true",
                   pool.ap(), in.ap())});
  std::vector<float> expectedAct(32 * 32);
  std::vector<float> expectedPool(32 * 32);
  for (std::size_t i = 0; i < data.size(); ++i) {
    expectedAct[i] = alu32(AluOp::kAdd, alu32(AluOp::kMultiply, data[i], 0.5f), 3.0f);
    expectedPool[i] = alu32(AluOp::kSubtract, 1.0f, data[i]);
  }
  expectCastOf(out.at("act"), expectedAct, DType::kFp32, "act");
  expectCastOf(out.at("pool"), expectedPool, DType::kFp16, "pool");
}

TEST(TensorScalar, MultiDimensionalNegativeStridePattern) {
  std::mt19937 rng(5);
  const auto data = randomValues(32 * 32, DType::kFp32, rng);
  Region in = inputRegion("a", DType::kFp32, 32, 32, 32, data);
  Region out = outputRegion("c", DType::kFp32, 32, 32, 32, 256);
  // Rows of 8 visited last row first: element (r, c) of the pattern is data[24 - 8r + c].
  const auto outputs =
      runKernel({in, out}, {fmt::format("dve: tensor_scalar dst={} data={} op0=add operand0=10",
                                        out.ap("[[1,32]]"), in.ap("[[-8,4],[1,8]]", 24))});
  std::vector<float> expected(32 * 32);
  for (std::size_t p = 0; p < 32; ++p) {
    for (std::size_t r = 0; r < 4; ++r) {
      for (std::size_t c = 0; c < 8; ++c) {
        expected[p * 32 + r * 8 + c] = alu32(AluOp::kAdd, data[p * 32 + 24 - 8 * r + c], 10.0f);
      }
    }
  }
  expectCastOf(outputs.at("c"), expected, DType::kFp32);
}

TEST(TensorScalar, BitwiseOperatorsOnIntegers) {
  const std::vector<float> data = {0x1234, -1, 255, 256, 4095, 7};
  Region in = inputRegion("a", DType::kInt32, 0, 1, 6, data);
  Region out = outputRegion("c", DType::kInt32, 0, 1, 6, 64);
  const auto outputs = runKernel(
      {in, out}, {fmt::format("dve: tensor_scalar dst={} data={} op0=bitwise_and operand0=255 "
                              "op1=left_shift operand1=4",
                              out.ap(), in.ap())});
  EXPECT_EQ(decode(outputs.at("c"), DType::kInt32),
            (std::vector<float>{0x340, 0xff0, 0xff0, 0, 0xff0, 0x70}));
}

TEST(TensorScalar, StochasticRoundingIsUnbiased) {
  Region in = inputRegion("a", DType::kFp32, 0, 128, 256, std::vector<float>(128 * 256, 1.0f));
  Region out = outputRegion("c", DType::kBf16, 0, 128, 256, 2048);
  const std::string line = fmt::format(
      "dve: tensor_scalar dst={} data={} op0=add operand0=0.001953125", out.ap(), in.ap());
  const auto sr = runKernel({in, out}, {line}, stochastic(11));
  EXPECT_EQ(sr.at("c"), runKernel({in, out}, {line}, stochastic(11)).at("c"));
  double sum = 0;
  for (const float v : decode(sr.at("c"), DType::kBf16)) {
    sum += v;
  }
  EXPECT_NEAR(sum / (128 * 256), 1.0 + 0x1p-9, 1.5e-4);
}

TEST(TensorScalarVerifier, RejectsEachInstructionSpecificRule) {
  const std::string base =
      "tensor_scalar dst=sbuf[0:64]:int32[[1,8]] data=sbuf[0:64]+64:int32[[1,8]]";
  expectRejected(verifyLine("dve: " + base + " op0=add operand0=1 op1=bitwise_and operand1=3"),
                 {"'op0' (add) and 'op1' (bitwise_and) mix a bitwise and an arithmetic operator"});
  expectRejected(verifyLine("pool: " + base + " op0=bitwise_or operand0=1"),
                 {"operand 'op0': bitwise operator bitwise_or runs only on the vector engine "
                  "(dve), not pool"});
  expectRejected(verifyLine("dve: tensor_scalar dst=sbuf[0:64]:int32[[1,8]] "
                            "data=sbuf[0:64]+64:fp32[[1,8]] op0=right_shift operand0=1"),
                 {"operand 'data'", "dtype fp32 is not an integer type"});
  expectRejected(verifyLine("dve: " + base + " op0=add operand0=sbuf[0:64]+128:bf16[[1,1]]"),
                 {"operand 'operand0'", "dtype bf16 is not allowed here (allowed: fp32)"});
  expectRejected(verifyLine("act: " + base + " op0=subtract operand0=1"),
                 {"'op0' (subtract) and 'op1' (bypass)", "scalar engine (act) supports only"});
  expectRejected(verifyLine("dve: " + base + " op0=add operand1=sbuf[0:64]+128:fp32[[1,2]]"),
                 {"operand 'operand1'", "must be [64, 1], not [64, 2]"});
  expectRejected(verifyLine("dve: tensor_scalar dst=sbuf[0:64]:fp32[[1,9]] "
                            "data=sbuf[0:64]+64:fp32[[1,8]] op0=add"),
                 {"'dst' [64 partitions x 9] and 'data' [64 partitions x 8] differ in shape"});
  EXPECT_TRUE(verifyLine("act: " + base + " op0=multiply operand0=2 op1=add operand1=1").ok());
}

// ---- scalar_tensor_tensor ----

TEST(ScalarTensorTensor, MatchesTheReferenceForOperatorPairsAndReverseFlags) {
  struct Case {
    AluOp op0;
    bool reverse0;
    AluOp op1;
    bool reverse1;
  };
  const Case cases[] = {{AluOp::kSubtract, false, AluOp::kMultiply, false},
                        {AluOp::kMultiply, false, AluOp::kAdd, false},
                        {AluOp::kDivide, true, AluOp::kSubtract, true},
                        {AluOp::kMax, false, AluOp::kDivide, false}};
  std::mt19937 rng(6);
  for (const DType type : {DType::kFp32, DType::kBf16, DType::kFp16}) {
    for (const Case& c : cases) {
      const auto data = randomValues(32 * 40, type, rng, 0.5, 4.0);
      const auto other = randomValues(32 * 40, DType::kFp32, rng, 0.5, 4.0);
      const auto s0 = randomValues(32, DType::kFp32, rng, 0.5, 2.0);
      Region in = inputRegion("a", type, 32, 32, 40, data);
      Region o1 = inputRegion("b", DType::kFp32, 32, 32, 40, other);
      o1.memory = Memory::kPsum;
      Region sc = inputRegion("s", DType::kFp32, 32, 32, 1, s0, 1024);
      Region out = outputRegion("c", type, 32, 32, 40, 2048);
      const auto outputs = runKernel(
          {in, o1, sc, out},
          {fmt::format("dve: scalar_tensor_tensor dst={} data={} op0={} operand0={} reverse0={} "
                       "op1={} operand1={} reverse1={}",
                       out.ap(), in.ap(), enumName(c.op0), sc.ap(), c.reverse0, enumName(c.op1),
                       o1.ap(), c.reverse1)});
      std::vector<float> expected(data.size());
      for (std::size_t i = 0; i < data.size(); ++i) {
        const float t = stage(c.op0, data[i], s0[i / 40], c.reverse0);
        expected[i] = c.reverse1 ? alu32(c.op1, other[i], t) : alu32(c.op1, t, other[i]);
      }
      expectCastOf(outputs.at("c"), expected, type,
                   fmt::format("{} {} {}", dtypeName(type), enumName(c.op0), enumName(c.op1)));
    }
  }
}

TEST(ScalarTensorTensorVerifier, RejectsEachInstructionSpecificRule) {
  expectRejected(verifyLine("dve: scalar_tensor_tensor dst=sbuf[0:4]:fp32[[1,8]] "
                            "data=sbuf[0:4]+64:fp32[[1,8]] op0=add operand0=1 op1=bitwise_and "
                            "operand1=sbuf[0:4]+128:fp32[[1,8]]"),
                 {"operand 'op1': bitwise operator bitwise_and is not allowed"});
  expectRejected(verifyLine("dve: scalar_tensor_tensor dst=sbuf[0:4]:fp32[[1,8]] "
                            "data=psum[0:4]:fp32[[1,8]] op0=add operand0=1 op1=add "
                            "operand1=psum[0:4]+64:fp32[[1,8]]"),
                 {"'data' and 'operand1' are both in PSUM"});
  expectRejected(verifyLine("dve: scalar_tensor_tensor dst=sbuf[0:4]:fp32[[1,8]] "
                            "data=sbuf[0:4]+64:fp32[[1,8]] op0=add operand0=1 op1=add "
                            "operand1=sbuf[0:4]+128:fp32[[1,4]]"),
                 {"'operand1' [4 partitions x 4] and 'data' [4 partitions x 8] differ in shape"});
}

// ---- tensor_copy_predicated ----

TEST(TensorCopyPredicated, CopiesSelectedElementsBitExactly) {
  std::mt19937 rng(7);
  constexpr std::size_t kCount = 32 * 16;
  std::vector<std::uint32_t> srcBits(kCount);
  std::vector<std::uint32_t> dstBits(kCount);
  std::vector<float> mask(kCount);
  for (std::size_t i = 0; i < kCount; ++i) {
    srcBits[i] = 0x7fa00000U + static_cast<std::uint32_t>(i);  // NaNs with payloads
    dstBits[i] = std::bit_cast<std::uint32_t>(static_cast<float>(i));
    mask[i] = static_cast<float>(rng() % 3 == 0 ? 0 : (rng() % 2 == 0 ? 1 : 255));
  }
  const auto toBytes = [](const std::vector<std::uint32_t>& bits) {
    return trn::testing::toBytes(bits);
  };
  for (const bool reverse : {false, true}) {
    for (const DType predType : {DType::kUint8, DType::kUint16, DType::kUint32}) {
      Region src = vtest::makeRegion("s", DType::kFp32, 32, 32, 16);
      src.input = toBytes(srcBits);
      Region dst = vtest::makeRegion("d", DType::kFp32, 32, 32, 16, 256);
      dst.input = toBytes(dstBits);
      dst.output = true;
      Region pred = inputRegion("p", predType, 32, 32, 16, mask, 512);
      const auto out =
          runKernel({src, dst, pred}, {fmt::format("dve: tensor_copy_predicated dst={} src={} "
                                                   "predicate={} reverse_pred={}",
                                                   dst.ap(), src.ap(), pred.ap(), reverse)});
      const auto got = rawBits(out.at("d"), DType::kFp32);
      for (std::size_t i = 0; i < kCount; ++i) {
        const bool selected = (mask[i] != 0) != reverse;
        ASSERT_EQ(got[i], selected ? srcBits[i] : dstBits[i]) << i;
      }
    }
  }
}

TEST(TensorCopyPredicated, ImmediateSourceAndLargeUint32Predicates) {
  const std::vector<float> mask = {0, 1, 0, 1, 1, 0};
  Region pred = vtest::makeRegion("p", DType::kUint32, 0, 1, 6);
  const std::vector<std::uint32_t> bits = {0, 0x80000000U, 0, 1, 0xffffffffU, 0};
  pred.input = trn::testing::toBytes(bits);
  Region dst = inputRegion("d", DType::kBf16, 0, 1, 6, {1, 2, 3, 4, 5, 6}, 64);
  dst.output = true;
  const auto out =
      runKernel({pred, dst}, {fmt::format("dve: tensor_copy_predicated dst={} src=-0.1 "
                                          "predicate={}",
                                          dst.ap(), pred.ap())});
  const float b = quantize(-0.1f, DType::kBf16);
  EXPECT_EQ(decode(out.at("d"), DType::kBf16), (std::vector<float>{1, b, 3, b, b, 6}));
}

TEST(TensorCopyPredicated, LeavesUnselectedElementsUnwritten) {
  core::CoreOptions poison;
  poison.poison = true;
  Region src = inputRegion("s", DType::kFp32, 0, 2, 4, {1, 2, 3, 4, 5, 6, 7, 8});
  Region dst = outputRegion("d", DType::kFp32, 0, 2, 4, 64);
  Region all = inputRegion("p", DType::kUint8, 0, 2, 4, std::vector<float>(8, 1), 128);
  // Every element selected: the never-written destination is not read.
  const auto out = runKernel({src, dst, all},
                             {fmt::format("dve: tensor_copy_predicated dst={} "
                                          "src={} predicate={}",
                                          dst.ap(), src.ap(), all.ap())},
                             poison);
  EXPECT_EQ(decode(out.at("d"), DType::kFp32), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
  // One element not selected: it stays never-written, which the store then reports.
  Region some = inputRegion("p", DType::kUint8, 0, 2, 4, {1, 1, 1, 1, 1, 0, 1, 1}, 128);
  const Status s = vtest::runStatus({src, dst, some},
                                    {fmt::format("dve: tensor_copy_predicated dst={} src={} "
                                                 "predicate={}",
                                                 dst.ap(), src.ap(), some.ap())},
                                    poison);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("never-written memory at sbuf partition 1"), std::string::npos)
      << s.message();
}

TEST(TensorCopyPredicatedVerifier, RejectsEachInstructionSpecificRule) {
  expectRejected(verifyLine("dve: tensor_copy_predicated dst=sbuf[0:4]:fp32[[1,8]] src=1 "
                            "predicate=sbuf[0:4]+64:fp32[[1,8]]"),
                 {"operand 'predicate'",
                  "dtype fp32 is not allowed here (allowed: uint8, uint16, "
                  "uint32)"});
  expectRejected(verifyLine("dve: tensor_copy_predicated dst=sbuf[0:4]:fp32[[1,8]] "
                            "src=sbuf[0:4]+128:bf16[[1,8]] predicate=sbuf[0:4]+64:uint8[[1,8]]"),
                 {"'src' (bf16) and 'dst' (fp32) must have the same dtype"});
  expectRejected(verifyLine("dve: tensor_copy_predicated dst=sbuf[0:4]:fp32[[1,8]] "
                            "src=psum[0:4]:fp32[[1,8]] predicate=psum[0:4]+64:uint8[[1,8]]"),
                 {"'src' and 'predicate' are both in PSUM"});
  expectRejected(verifyLine("dve: tensor_copy_predicated dst=sbuf[0:4]:fp32[[1,8]] src=0 "
                            "predicate=sbuf[0:4]+64:uint8[[1,7]]"),
                 {"'predicate' [4 partitions x 7] and 'dst' [4 partitions x 8] differ in shape"});
}

// ---- reciprocal ----

TEST(Reciprocal, IsTheCorrectlyRoundedFp32Division) {
  std::mt19937 rng(8);
  std::uniform_real_distribution<double> exponent(-40.0, 40.0);
  std::vector<float> values = specials();
  for (const float v : {0x1p-126f, 1e-45f, 2.9e-39f, 7.0f, -3.0f}) {
    values.push_back(v);
  }
  while (values.size() < 32 * 64) {
    const double magnitude = std::pow(10.0, exponent(rng));
    values.push_back(static_cast<float>(rng() % 2 == 0 ? magnitude : -magnitude));
  }
  Region in = inputRegion("a", DType::kFp32, 32, 32, 64, values);
  Region out = outputRegion("c", DType::kFp32, 32, 32, 64, 512);
  Region half = outputRegion("h", DType::kBf16, 32, 32, 64, 1024);
  const auto outputs =
      runKernel({in, out, half},
                {fmt::format("dve: reciprocal dst={} data={}", out.ap(), in.ap()),
                 fmt::format("dve: reciprocal dst={} data={}", half.ap(), in.ap("[[-1,64]]", 63))});
  std::vector<float> expected(values.size());
  std::vector<float> reversed(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    expected[i] = static_cast<float>(1.0 / static_cast<double>(values[i]));
    reversed[i] =
        static_cast<float>(1.0 / static_cast<double>(values[(i / 64) * 64 + 63 - i % 64]));
  }
  expectCastOf(outputs.at("c"), expected, DType::kFp32);
  expectCastOf(outputs.at("h"), reversed, DType::kBf16);
  // In numbers: 1/Inf = +0, 1/-Inf = -0, 1/denormal overflows, 1/3e38 is a denormal.
  const std::vector<float> got = decode(outputs.at("c"), DType::kFp32);
  EXPECT_TRUE(got[1] == 0.0f && !std::signbit(got[1]));
  EXPECT_TRUE(got[2] == 0.0f && std::signbit(got[2]));
  EXPECT_EQ(got[3], INFINITY);
  EXPECT_TRUE(got[5] > 0.0f && got[5] < 0x1p-126f) << got[5];
  EXPECT_EQ(got[7], INFINITY);
  EXPECT_EQ(got[8], -INFINITY);
  EXPECT_EQ(got[10], 0x1p126f);
}

TEST(ReciprocalVerifier, RejectsMismatchedShapes) {
  expectRejected(
      verifyLine("dve: reciprocal dst=sbuf[0:4]:fp32[[1,8]] data=sbuf[0:8]+64:fp32[[1,8]]"),
      {"'dst' [4 partitions x 8] and 'data' [8 partitions x 8] differ in shape"});
}

// ---- every arithmetic instruction of this family ----

TEST(VectorEngine, StochasticRoundingPicksANeighbourAndIsReproducible) {
  std::mt19937 rng(9);
  const auto a = randomValues(32 * 64, DType::kFp32, rng, 0.25, 4.0);
  const auto b = randomValues(32 * 64, DType::kFp32, rng, -4.0, 4.0);
  const auto s = randomValues(32, DType::kFp32, rng, -1.0, 1.0);
  std::vector<Region> regions = {inputRegion("a", DType::kFp32, 32, 32, 64, a),
                                 inputRegion("b", DType::kFp32, 32, 32, 64, b, 256),
                                 inputRegion("s", DType::kFp32, 32, 32, 1, s, 512)};
  const std::string ra = regions[0].ap();
  const std::string rb = regions[1].ap();
  const std::string rs = regions[2].ap();
  struct Output {
    std::string name;
    DType type;
    std::string line;  // {} = dst
    std::function<float(std::size_t)> reference;
  };
  const std::vector<Output> outputs = {
      {"tt", DType::kBf16,
       "dve: tensor_tensor dst={} data0=" + ra + " data1=" + rb + " op=multiply",
       [&](std::size_t i) { return alu32(AluOp::kMultiply, a[i], b[i]); }},
      {"ts", DType::kFp8E4m3,
       "act: tensor_scalar dst={} data=" + ra + " op0=multiply operand0=" + rs +
           " op1=add operand1=0.1",
       [&](std::size_t i) {
         return alu32(AluOp::kAdd, alu32(AluOp::kMultiply, a[i], s[i / 64]), 0.1f);
       }},
      {"stt", DType::kBf16,
       "dve: scalar_tensor_tensor dst={} data=" + ra + " op0=subtract operand0=" + rs +
           " op1=multiply operand1=" + rb,
       [&](std::size_t i) {
         return alu32(AluOp::kMultiply, alu32(AluOp::kSubtract, a[i], s[i / 64]), b[i]);
       }},
      {"rc", DType::kFp16, "dve: reciprocal dst={} data=" + ra,
       [&](std::size_t i) { return alu32(AluOp::kDivide, 1.0f, a[i]); }},
      {"ms", DType::kBf16, "pool: memset dst={} value=0.1", [](std::size_t) { return 0.1f; }},
      {"tc", DType::kFp8E5m2, "dve: tensor_copy dst={} src=" + ra,
       [&](std::size_t i) { return a[i]; }},
  };
  std::vector<std::string> lines;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    regions.push_back(outputRegion(outputs[k].name, outputs[k].type, 32, 32, 64,
                                   1024 + static_cast<std::int64_t>(k) * 512));
    lines.push_back(fmt::format(fmt::runtime(outputs[k].line), regions.back().ap()));
  }
  const auto first = runKernel(regions, lines, stochastic(5));
  const auto again = runKernel(regions, lines, stochastic(5));
  const auto other = runKernel(regions, lines, stochastic(6));
  for (const Output& o : outputs) {
    std::vector<float> expected(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      expected[i] = o.reference(i);
    }
    EXPECT_EQ(first.at(o.name), again.at(o.name)) << o.name;
    EXPECT_NE(first.at(o.name), other.at(o.name)) << o.name;
    expectStochasticCastOf(first.at(o.name), expected, o.type, o.name);
  }
}

TEST(VectorEngine, SpecialValuesPropagateThroughTheArithmeticInstructions) {
  const std::vector<float> x = specials();
  const std::size_t n = x.size();
  Region in = inputRegion("a", DType::kFp32, 0, 1, static_cast<std::int64_t>(n), x);
  const std::string forward = in.ap();
  const std::string backward = in.ap(fmt::format("[[-1,{}]]", n), static_cast<std::int64_t>(n) - 1);
  std::vector<Region> regions = {in};
  const std::vector<std::string> names = {"tt", "stt", "rc", "ts"};
  for (std::size_t k = 0; k < names.size(); ++k) {
    regions.push_back(outputRegion(names[k], DType::kFp32, 0, 1, static_cast<std::int64_t>(n),
                                   256 + static_cast<std::int64_t>(k) * 64));
  }
  const auto out = runKernel(
      regions,
      {fmt::format("dve: tensor_tensor dst={} data0={} data1={} op=add", regions[1].ap(), forward,
                   backward),
       fmt::format("dve: scalar_tensor_tensor dst={} data={} op0=multiply operand0=2 op1=subtract "
                   "operand1={}",
                   regions[2].ap(), forward, backward),
       fmt::format("dve: reciprocal dst={} data={}", regions[3].ap(), backward),
       fmt::format("dve: tensor_scalar dst={} data={} op0=max operand0=-1e-45 op1=min "
                   "operand1=inf",
                   regions[4].ap(), backward)});
  std::vector<float> tt(n);
  std::vector<float> stt(n);
  std::vector<float> rc(n);
  std::vector<float> ts(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float r = x[n - 1 - i];
    tt[i] = alu32(AluOp::kAdd, x[i], r);
    stt[i] = alu32(AluOp::kSubtract, alu32(AluOp::kMultiply, x[i], 2.0f), r);
    rc[i] = alu32(AluOp::kDivide, 1.0f, r);
    ts[i] = alu32(AluOp::kMin, alu32(AluOp::kMax, r, -1e-45f), INFINITY);
  }
  expectCastOf(out.at("tt"), tt, DType::kFp32, "tensor_tensor");
  expectCastOf(out.at("stt"), stt, DType::kFp32, "scalar_tensor_tensor");
  expectCastOf(out.at("rc"), rc, DType::kFp32, "reciprocal");
  expectCastOf(out.at("ts"), ts, DType::kFp32, "tensor_scalar");
}

}  // namespace
}  // namespace trn::isa
