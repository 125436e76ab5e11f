// Golden tests of the Vector-engine reductions, scans and selections (vector_reduce.h) against
// float64 references: reductions are checked bit-exactly against the stated order (sequential
// fp32 fold in access-pattern order) and against the float64 sum within the error bound of that
// order; accumulator (reduce_cmd) behaviour across instructions and lanes; one test per
// instruction-specific verifier rule.
#include <gtest/gtest.h>

#include <cfloat>
#include <map>

#include "vector_test_util.h"

namespace trn::isa {
namespace {

using vtest::alu32;
using vtest::decode;
using vtest::expectCastOf;
using vtest::expectRejected;
using vtest::expectStochasticCastOf;
using vtest::inputRegion;
using vtest::outputRegion;
using vtest::randomValues;
using vtest::Region;
using vtest::runKernel;
using vtest::verifyLine;

constexpr float kInf = std::numeric_limits<float>::infinity();

/// Sequential fold in fp32: acc = op(acc, x_i) for i from `first`, starting at `init`.
float fold(AluOp op, float init, const float* x, std::size_t count) {
  float acc = init;
  for (std::size_t i = 0; i < count; ++i) {
    acc = alu32(op, acc, x[i]);
  }
  return acc;
}

// ---- tensor_reduce ----

TEST(TensorReduce, SumIsTheSequentialFp32FoldAndWithinTheFloat64Bound) {
  std::mt19937 rng(21);
  for (const DType type : {DType::kFp32, DType::kBf16, DType::kFp8E5m2}) {
    constexpr std::size_t kFree = 512;
    const auto data = randomValues(32 * kFree, type, rng, -4.0, 4.0);
    Region in = inputRegion("a", type, 64, 32, kFree, data);
    Region sum = outputRegion("s", DType::kFp32, 64, 32, 1, 4096);
    Region narrow = outputRegion("n", DType::kBf16, 64, 32, 1, 4160);
    Region reversed = outputRegion("r", DType::kFp32, 64, 32, 1, 4224);
    const auto out = runKernel(
        {in, sum, narrow, reversed},
        {fmt::format("dve: tensor_reduce dst={} op=add data={}", sum.ap(), in.ap()),
         fmt::format("dve: tensor_reduce dst={} op=add data={} axis=1", narrow.ap(), in.ap()),
         fmt::format("dve: tensor_reduce dst={} op=add data={}", reversed.ap(),
                     in.ap(fmt::format("[[-1,{}]]", kFree), kFree - 1))});
    const std::vector<float> got = decode(out.at("s"), DType::kFp32);
    std::vector<float> expected(32);
    std::vector<float> expectedReversed(32);
    for (std::size_t p = 0; p < 32; ++p) {
      const float* x = data.data() + p * kFree;
      expected[p] = fold(AluOp::kAdd, x[0], x + 1, kFree - 1);
      std::vector<float> backwards(x, x + kFree);
      std::reverse(backwards.begin(), backwards.end());
      expectedReversed[p] = fold(AluOp::kAdd, backwards[0], backwards.data() + 1, kFree - 1);
      double exact = 0;
      double magnitude = 0;
      for (std::size_t f = 0; f < kFree; ++f) {
        exact += x[f];
        magnitude += std::fabs(x[f]);
      }
      // Recursive summation: |error| <= (n - 1) u sum|x| / (1 - (n - 1) u), u = 2^-24.
      EXPECT_NEAR(got[p], exact, 1.01 * (kFree - 1) * 0x1p-24 * magnitude) << p;
    }
    expectCastOf(out.at("s"), expected, DType::kFp32, dtypeName(type));
    expectCastOf(out.at("n"), expected, DType::kBf16, dtypeName(type));
    expectCastOf(out.at("r"), expectedReversed, DType::kFp32, "reversed");
  }
}

TEST(TensorReduce, TrailingAxesOfAMultiDimensionalPatternForEveryArithmeticOperator) {
  std::mt19937 rng(22);
  const auto data = randomValues(32 * 256, DType::kFp32, rng, 0.9, 1.1);
  // The free pattern is 4 x 8 x 8; axis=2 reduces the last two dimensions, axis=3 the last one.
  Region in = inputRegion("a", DType::kFp32, 0, 32, 256, data);
  std::vector<Region> regions = {in};
  std::vector<std::string> lines;
  const std::vector<AluOp> ops = {AluOp::kAdd, AluOp::kSubtract,   AluOp::kMultiply, AluOp::kMax,
                                  AluOp::kMin, AluOp::kLogicalAnd, AluOp::kLogicalOr};
  for (std::size_t k = 0; k < ops.size(); ++k) {
    for (const int axis : {2, 3}) {
      const std::int64_t kept = axis == 2 ? 4 : 32;
      regions.push_back(outputRegion(fmt::format("{}_{}", enumName(ops[k]), axis), DType::kFp32, 0,
                                     32, kept,
                                     2048 + static_cast<std::int64_t>(k * 2 + (axis - 2)) * 256));
      lines.push_back(fmt::format("dve: tensor_reduce dst={} op={} data={} axis={} negate={}",
                                  regions.back().ap(), enumName(ops[k]),
                                  in.ap("[[64,4],[8,8],[1,8]]"), axis, ops[k] == AluOp::kMax));
    }
  }
  const auto out = runKernel(regions, lines);
  for (const AluOp op : ops) {
    for (const int axis : {2, 3}) {
      const std::size_t kept = axis == 2 ? 4 : 32;
      const std::size_t block = 256 / kept;
      std::vector<float> expected(32 * kept);
      for (std::size_t i = 0; i < expected.size(); ++i) {
        const float* x = data.data() + i * block;
        const float r = fold(op, x[0], x + 1, block - 1);
        expected[i] = op == AluOp::kMax ? -r : r;
      }
      expectCastOf(out.at(fmt::format("{}_{}", enumName(op), axis)), expected, DType::kFp32,
                   fmt::format("{} axis {}", enumName(op), axis));
    }
  }
}

TEST(TensorReduce, SpecialValuesAndBitwiseReductions) {
  const std::vector<float> values = {1, NAN, 3, 4, 1, kInf, -kInf, 2, 5, 1e-40f, 2e-40f, -1};
  Region in = inputRegion("a", DType::kFp32, 0, 3, 4, values);
  Region maxed = outputRegion("m", DType::kFp32, 0, 3, 1, 64);
  Region summed = outputRegion("s", DType::kFp32, 0, 3, 1, 128);
  const std::vector<float> ints = {0x10, 0x01, 0x100, 0x1000, 7, 5, 3, 1};
  Region bits = inputRegion("b", DType::kInt32, 0, 2, 4, ints, 192);
  Region ored = outputRegion("o", DType::kInt32, 0, 2, 1, 256);
  Region xored = outputRegion("x", DType::kUint16, 0, 2, 1, 320);
  const auto out = runKernel(
      {in, maxed, summed, bits, ored, xored},
      {fmt::format("dve: tensor_reduce dst={} op=max data={}", maxed.ap(), in.ap()),
       fmt::format("dve: tensor_reduce dst={} op=add data={}", summed.ap(), in.ap()),
       fmt::format("dve: tensor_reduce dst={} op=bitwise_or data={}", ored.ap(), bits.ap()),
       fmt::format("dve: tensor_reduce dst={} op=bitwise_xor data={}", xored.ap(), bits.ap())});
  const std::vector<float> m = decode(out.at("m"), DType::kFp32);
  EXPECT_TRUE(std::isnan(m[0]));
  EXPECT_EQ(m[1], kInf);
  EXPECT_EQ(m[2], 5.0f);
  const std::vector<float> s = decode(out.at("s"), DType::kFp32);
  EXPECT_TRUE(std::isnan(s[0]));
  EXPECT_TRUE(std::isnan(s[1]));  // inf + -inf
  EXPECT_EQ(s[2],
            alu32(AluOp::kAdd, alu32(AluOp::kAdd, alu32(AluOp::kAdd, 5, 1e-40f), 2e-40f), -1));
  EXPECT_EQ(decode(out.at("o"), DType::kInt32), (std::vector<float>{0x1111, 7}));
  EXPECT_EQ(decode(out.at("x"), DType::kUint16), (std::vector<float>{0x1111, 7 ^ 5 ^ 3 ^ 1}));
}

TEST(TensorReduce, StochasticRoundingOfTheResultIsReproducible) {
  std::mt19937 rng(23);
  const auto data = randomValues(128 * 64, DType::kFp32, rng);
  Region in = inputRegion("a", DType::kFp32, 0, 128, 64, data);
  Region out = outputRegion("s", DType::kBf16, 0, 128, 1, 1024);
  const std::vector<std::string> line = {
      fmt::format("dve: tensor_reduce dst={} op=add data={}", out.ap(), in.ap())};
  core::CoreOptions sr;
  sr.rounding = RoundingMode::kStochastic;
  sr.seed = 3;
  const auto first = runKernel({in, out}, line, sr);
  EXPECT_EQ(first.at("s"), runKernel({in, out}, line, sr).at("s"));
  const std::vector<float> got = decode(first.at("s"), DType::kBf16);
  for (std::size_t p = 0; p < 128; ++p) {
    const float exact = fold(AluOp::kAdd, data[p * 64], data.data() + p * 64 + 1, 63);
    // Stochastic rounding picks one of the two bf16 neighbours of the fp32 result.
    const float low = quantize(exact, DType::kBf16, {RoundingMode::kTowardZero});
    const float ulp = std::fabs(exact) * 0x1p-7f;
    ASSERT_LE(std::fabs(got[p] - exact), 2 * ulp) << p;
    ASSERT_TRUE(got[p] == low || std::fabs(got[p]) > std::fabs(low)) << p;
  }
}

TEST(TensorReduceVerifier, RejectsEachInstructionSpecificRule) {
  const std::string data = "data=sbuf[0:4]+64:fp32[[8,4],[1,8]]";
  expectRejected(verifyLine("dve: tensor_reduce dst=sbuf[0:4]:fp32[[1,1]] op=add axis=3 " + data),
                 {"operand 'axis': 3 is outside 1..2"});
  expectRejected(verifyLine("dve: tensor_reduce dst=sbuf[0:4]:fp32[[1,1]] op=add axis=0 " + data),
                 {"operand 'axis': 0 is outside 1..2"});
  expectRejected(verifyLine("dve: tensor_reduce dst=sbuf[0:4]:fp32[[1,1]] op=divide " + data),
                 {"operand 'op': operator divide is not allowed here"});
  expectRejected(verifyLine("dve: tensor_reduce dst=sbuf[0:4]:int32[[1,1]] op=bitwise_and "
                            "negate=true data=sbuf[0:4]+64:int32[[1,32]]"),
                 {"operand 'negate': applies only to arithmetic reductions, not bitwise_and"});
  expectRejected(verifyLine("dve: tensor_reduce dst=sbuf[0:4]:int32[[1,1]] op=bitwise_or " + data),
                 {"operand 'data'", "dtype fp32 is not an integer type"});
  expectRejected(
      verifyLine("dve: tensor_reduce dst=sbuf[0:4]:fp32[[1,8]] op=add axis=2 " + data),
      {"operand 'dst': [4 partitions x 8] must be [4 x 4] ('data' reduced from axis 2)"});
  EXPECT_TRUE(
      verifyLine("dve: tensor_reduce dst=sbuf[0:4]:fp32[[1,4]] op=add axis=2 " + data).ok());
}

// ---- tensor_scalar_reduce ----

TEST(TensorScalarReduce, ComputesTheTileAndFoldsItIntoTheAccumulators) {
  std::mt19937 rng(24);
  const auto a = randomValues(32 * 64, DType::kBf16, rng);
  const auto b = randomValues(32 * 64, DType::kBf16, rng);
  const auto scale = randomValues(32, DType::kFp32, rng, 0.5, 2.0);
  const auto init = randomValues(32, DType::kFp32, rng);
  Region ra = inputRegion("a", DType::kBf16, 32, 32, 64, a);
  Region rb = inputRegion("b", DType::kBf16, 32, 32, 64, b, 256);
  Region rs = inputRegion("scale", DType::kFp32, 32, 32, 1, scale, 512);
  Region ri = inputRegion("init", DType::kFp32, 32, 32, 1, init, 516);
  Region da = outputRegion("da", DType::kFp16, 32, 32, 64, 1024);
  Region db = outputRegion("db", DType::kFp32, 32, 32, 64, 2048);
  Region first = outputRegion("r1", DType::kFp32, 32, 32, 1, 4096);
  Region both = outputRegion("r2", DType::kFp32, 32, 32, 1, 4100);
  Region loaded = outputRegion("r3", DType::kBf16, 32, 32, 1, 4104);
  Region maxed = outputRegion("r4", DType::kFp32, 32, 32, 1, 4108);
  const auto op = [&](const Region& dst, const Region& data, std::string_view rest) {
    return fmt::format("dve: tensor_scalar_reduce dst={} data={} op0=multiply operand0={} {}",
                       dst.ap(), data.ap(), rs.ap(), rest);
  };
  const auto out = runKernel(
      {ra, rb, rs, ri, da, db, first, both, loaded, maxed},
      {op(da, ra, fmt::format("reduce_op=add reduce_res={}", first.ap())),
       op(db, rb, fmt::format("reduce_op=add reduce_res={} reduce_cmd=reduce", both.ap())),
       op(db, rb,
          fmt::format("reduce_op=add reduce_res={} reduce_cmd=load_reduce reduce_init={}",
                      loaded.ap(), ri.ap())),
       op(db, rb, fmt::format("reduce_op=max reduce_res={}", maxed.ap()))});
  std::vector<float> ta(a.size());
  std::vector<float> tb(b.size());
  std::vector<float> r1(32);
  std::vector<float> r2(32);
  std::vector<float> r3(32);
  std::vector<float> r4(32);
  for (std::size_t p = 0; p < 32; ++p) {
    for (std::size_t f = 0; f < 64; ++f) {
      ta[p * 64 + f] = alu32(AluOp::kMultiply, a[p * 64 + f], scale[p]);
      tb[p * 64 + f] = alu32(AluOp::kMultiply, b[p * 64 + f], scale[p]);
    }
    r1[p] = fold(AluOp::kAdd, 0.0f, ta.data() + p * 64, 64);
    r2[p] = fold(AluOp::kAdd, r1[p], tb.data() + p * 64, 64);
    r3[p] = fold(AluOp::kAdd, init[p], tb.data() + p * 64, 64);
    r4[p] = fold(AluOp::kMax, -kInf, tb.data() + p * 64, 64);
  }
  expectCastOf(out.at("da"), ta, DType::kFp16, "dst a");
  expectCastOf(out.at("db"), tb, DType::kFp32, "dst b");
  expectCastOf(out.at("r1"), r1, DType::kFp32, "reset_reduce");
  expectCastOf(out.at("r2"), r2, DType::kFp32, "reduce");
  expectCastOf(out.at("r3"), r3, DType::kBf16, "load_reduce");
  expectCastOf(out.at("r4"), r4, DType::kFp32, "max");
}

TEST(TensorScalarReduce, EachLaneKeepsItsOwnAccumulator) {
  Region low = inputRegion("low", DType::kFp32, 0, 32, 4, std::vector<float>(128, 1.0f));
  Region high = inputRegion("high", DType::kFp32, 32, 32, 4, std::vector<float>(128, 10.0f));
  Region scratch = outputRegion("t", DType::kFp32, 0, 64, 4, 512);
  Region lowRes = outputRegion("rl", DType::kFp32, 0, 32, 1, 1024);
  Region highRes = outputRegion("rh", DType::kFp32, 32, 32, 1, 1024);
  const auto out = runKernel(
      {low, high, scratch, lowRes, highRes},
      {fmt::format("dve: tensor_scalar_reduce dst=sbuf[0:32]+512:fp32[[1,4]] data={} op0=add "
                   "operand0=0 reduce_op=add reduce_res={}",
                   low.ap(), lowRes.ap()),
       fmt::format("dve: tensor_scalar_reduce dst=sbuf[32:64]+512:fp32[[1,4]] data={} op0=add "
                   "operand0=0 reduce_op=add reduce_res={}",
                   high.ap(), highRes.ap()),
       fmt::format("dve: tensor_scalar_reduce dst=sbuf[0:32]+512:fp32[[1,4]] data={} op0=add "
                   "operand0=0 reduce_op=add reduce_res={} reduce_cmd=reduce",
                   low.ap(), lowRes.ap())});
  EXPECT_EQ(decode(out.at("rl"), DType::kFp32), std::vector<float>(32, 8.0f));
  EXPECT_EQ(decode(out.at("rh"), DType::kFp32), std::vector<float>(32, 40.0f));
}

TEST(TensorScalarReduceVerifier, RejectsEachInstructionSpecificRule) {
  const std::string base =
      "dve: tensor_scalar_reduce dst=sbuf[0:4]:fp32[[1,8]] "
      "data=sbuf[0:4]+64:fp32[[1,8]] operand0=2 ";
  expectRejected(
      verifyLine(base + "op0=multiply reduce_op=subtract reduce_res=sbuf[0:4]+128:fp32[[1,1]]"),
      {"operand 'reduce_op': operator subtract is not allowed here (allowed: add, "
       "multiply, max, min)"});
  expectRejected(
      verifyLine(base + "op0=multiply reduce_res=sbuf[0:4]+128:fp32[[1,1]] reduce_cmd=idle"),
      {"operand 'reduce_cmd': idle is not supported by this instruction (allowed: "
       "reset_reduce, reduce, load_reduce)"});
  expectRejected(verifyLine(base + "op0=bitwise_and reduce_res=sbuf[0:4]+128:fp32[[1,1]]"),
                 {"operand 'op0': bitwise operator bitwise_and is not allowed"});
  expectRejected(verifyLine(base + "op0=add reduce_res=sbuf[0:4]+128:fp32[[1,2]]"),
                 {"operand 'reduce_res'", "must be [4, 1], not [4, 2]"});
  expectRejected(verifyLine(base + "op0=add reduce_res=sbuf[0:4]+128:fp32[[1,1]] "
                                   "reduce_init=sbuf[0:2]+132:fp32[[1,1]]"),
                 {"operand 'reduce_init'", "must be [4, 1], not [2, 1]"});
}

// ---- tensor_tensor_scan ----

TEST(TensorTensorScan, LinearRecurrenceAndReverseFlagsMatchTheSequentialReference) {
  struct Case {
    AluOp op0;
    AluOp op1;
    bool reverse0;
    bool reverse1;
  };
  const Case cases[] = {{AluOp::kMultiply, AluOp::kAdd, false, false},
                        {AluOp::kSubtract, AluOp::kMultiply, true, false},
                        {AluOp::kAdd, AluOp::kDivide, false, true},
                        {AluOp::kMax, AluOp::kSubtract, false, true}};
  std::mt19937 rng(25);
  const auto decay = randomValues(32 * 96, DType::kBf16, rng, 0.5, 1.0);
  const auto input = randomValues(32 * 96, DType::kFp32, rng, 0.5, 1.5);
  const auto start = randomValues(32, DType::kFp32, rng);
  Region d0 = inputRegion("d0", DType::kBf16, 96, 32, 96, decay);
  Region d1 = inputRegion("d1", DType::kFp32, 96, 32, 96, input);
  d1.memory = Memory::kPsum;
  Region init = inputRegion("init", DType::kFp32, 96, 32, 1, start, 512);
  std::vector<Region> regions = {d0, d1, init};
  std::vector<std::string> lines;
  for (std::size_t k = 0; k < std::size(cases); ++k) {
    const Case& c = cases[k];
    regions.push_back(outputRegion(fmt::format("c{}", k), k % 2 == 0 ? DType::kFp32 : DType::kBf16,
                                   96, 32, 96, 1024 + static_cast<std::int64_t>(k) * 512));
    // The free pattern is 3 x 32: the scan runs on across rows.
    lines.push_back(
        fmt::format("dve: tensor_tensor_scan dst={} data0={} data1={} initial={} "
                    "op0={} op1={} reverse0={} reverse1={}",
                    regions.back().ap(), d0.ap("[[32,3],[1,32]]"), d1.ap(),
                    k == 0 ? std::string("0.5") : init.ap(), enumName(c.op0), enumName(c.op1),
                    c.reverse0, c.reverse1));
  }
  const auto out = runKernel(regions, lines);
  for (std::size_t k = 0; k < std::size(cases); ++k) {
    const Case& c = cases[k];
    std::vector<float> expected(decay.size());
    for (std::size_t p = 0; p < 32; ++p) {
      float state = k == 0 ? 0.5f : start[p];
      for (std::size_t f = 0; f < 96; ++f) {
        const float a = decay[p * 96 + f];
        const float b = input[p * 96 + f];
        const float t = c.reverse0 ? alu32(c.op0, state, a) : alu32(c.op0, a, state);
        state = c.reverse1 ? alu32(c.op1, b, t) : alu32(c.op1, t, b);
        expected[p * 96 + f] = state;
      }
    }
    expectCastOf(out.at(fmt::format("c{}", k)), expected, k % 2 == 0 ? DType::kFp32 : DType::kBf16,
                 fmt::format("{} {}", enumName(c.op0), enumName(c.op1)));
  }
}

TEST(TensorTensorScanVerifier, RejectsEachInstructionSpecificRule) {
  const std::string tail = " dst=sbuf[0:4]:fp32[[1,8]] data0=sbuf[0:4]+64:fp32[[1,8]]";
  expectRejected(verifyLine("dve: tensor_tensor_scan dst=sbuf[0:4]:fp32[[1,8]] "
                            "data0=psum[0:4]:fp32[[1,8]] data1=psum[0:4]+64:fp32[[1,8]]"),
                 {"'data0' and 'data1' are both in PSUM"});
  expectRejected(verifyLine("dve: tensor_tensor_scan" + tail +
                            " data1=sbuf[0:4]+128:fp32[[1,8]] op0=bitwise_xor"),
                 {"operand 'op0': bitwise operator bitwise_xor is not allowed"});
  expectRejected(verifyLine("dve: tensor_tensor_scan" + tail +
                            " data1=sbuf[0:4]+128:fp32[[1,8]] initial=sbuf[0:4]+192:fp32[[1,2]]"),
                 {"operand 'initial'", "must be [4, 1], not [4, 2]"});
  expectRejected(verifyLine("dve: tensor_tensor_scan" + tail + " data1=sbuf[0:4]+128:fp32[[1,7]]"),
                 {"'data0' [4 partitions x 8] and 'data1' [4 partitions x 7] differ in shape"});
}

// ---- tensor_scalar_cumulative ----

TEST(TensorScalarCumulative, PrefixScansFollowTheNkiPseudocode) {
  std::mt19937 rng(26);
  const auto data = randomValues(32 * 48, DType::kFp16, rng, -2.0, 2.0);
  const auto init = randomValues(32, DType::kFp32, rng);
  Region in = inputRegion("a", DType::kFp16, 0, 32, 48, data);
  Region ri = inputRegion("init", DType::kFp32, 0, 32, 1, init, 256);
  struct Case {
    AluOp op0;
    float imm0;
    bool reverse0;
    AluOp op1;
    std::string_view cmd;
  };
  const Case cases[] = {{AluOp::kMultiply, 2.0f, false, AluOp::kAdd, "reset_reduce"},
                        {AluOp::kAdd, 0.5f, false, AluOp::kMax, "reset_reduce"},
                        {AluOp::kSubtract, 1.0f, true, AluOp::kSubtract, "reset_reduce"},
                        {AluOp::kAdd, 0.0f, false, AluOp::kAdd, "reduce"},
                        {AluOp::kMultiply, 0.25f, false, AluOp::kMultiply, "load_reduce"},
                        {AluOp::kMax, 0.0f, false, AluOp::kMin, "reset_reduce"}};
  std::vector<Region> regions = {in, ri};
  std::vector<std::string> lines;
  for (std::size_t k = 0; k < std::size(cases); ++k) {
    const Case& c = cases[k];
    regions.push_back(outputRegion(fmt::format("c{}", k), DType::kFp32, 0, 32, 48,
                                   1024 + static_cast<std::int64_t>(k) * 256));
    lines.push_back(
        fmt::format("dve: tensor_scalar_cumulative dst={} src={} op0={} op1={} "
                    "imm0={} imm1={} reduce_cmd={} reverse0={}",
                    regions.back().ap(), in.ap(), enumName(c.op0), enumName(c.op1), c.imm0, ri.ap(),
                    c.cmd, c.reverse0));
  }
  const auto out = runKernel(regions, lines);
  std::vector<float> reg(32);
  for (std::size_t k = 0; k < std::size(cases); ++k) {
    const Case& c = cases[k];
    std::vector<float> expected(data.size());
    for (std::size_t p = 0; p < 32; ++p) {
      if (c.cmd == "reset_reduce") {
        reg[p] = c.op1 == AluOp::kMultiply ? 1.0f
                 : c.op1 == AluOp::kMax    ? -kInf
                 : c.op1 == AluOp::kMin    ? kInf
                                           : 0.0f;
      } else if (c.cmd == "load_reduce") {
        reg[p] = init[p];
      }  // reduce: continue from the previous instruction's final value
      for (std::size_t f = 0; f < 48; ++f) {
        const float x = data[p * 48 + f];
        const float v = c.reverse0 ? alu32(c.op0, c.imm0, x) : alu32(c.op0, x, c.imm0);
        reg[p] = alu32(c.op1, v, reg[p]);
        expected[p * 48 + f] = reg[p];
      }
    }
    expectCastOf(out.at(fmt::format("c{}", k)), expected, DType::kFp32, fmt::format("case {}", k));
  }
}

TEST(TensorScalarCumulative, SharesTheAccumulatorsWithTensorScalarReduce) {
  Region in = inputRegion("a", DType::kFp32, 0, 4, 4, std::vector<float>(16, 1.0f));
  Region scratch = outputRegion("t", DType::kFp32, 0, 4, 4, 128);
  Region sum = outputRegion("s", DType::kFp32, 0, 4, 1, 256);
  Region scan = outputRegion("c", DType::kFp32, 0, 4, 4, 512);
  const auto out =
      runKernel({in, scratch, sum, scan},
                {fmt::format("dve: tensor_scalar_reduce dst={} data={} op0=multiply operand0=3 "
                             "reduce_op=add reduce_res={}",
                             scratch.ap(), in.ap(), sum.ap()),
                 fmt::format("dve: tensor_scalar_cumulative dst={} src={} op0=add imm0=0 op1=add "
                             "reduce_cmd=reduce",
                             scan.ap(), in.ap())});
  EXPECT_EQ(decode(out.at("s"), DType::kFp32), std::vector<float>(4, 12.0f));
  const std::vector<float> row = {13, 14, 15, 16};
  std::vector<float> expected;
  for (int p = 0; p < 4; ++p) {
    expected.insert(expected.end(), row.begin(), row.end());
  }
  EXPECT_EQ(decode(out.at("c"), DType::kFp32), expected);
}

TEST(TensorScalarCumulativeVerifier, RejectsEachInstructionSpecificRule) {
  const std::string base = "dve: tensor_scalar_cumulative dst=sbuf[0:4]:fp32[[1,8]] ";
  expectRejected(verifyLine(base + "src=sbuf[0:4]+64:fp32[[1,8]] op0=add op1=divide"),
                 {"operand 'op1': operator divide is not allowed here (allowed: add, subtract, "
                  "multiply, max, min)"});
  expectRejected(verifyLine(base + "src=sbuf[0:4]+64:int32[[1,8]] op0=add op1=add"),
                 {"operand 'src'", "dtype int32 is not allowed here"});
  expectRejected(verifyLine(base + "src=sbuf[0:4]+64:fp32[[1,8]] op0=add op1=add reduce_cmd=reset"),
                 {"operand 'reduce_cmd': reset is not supported by this instruction"});
  expectRejected(verifyLine(base + "src=sbuf[0:4]+64:fp32[[1,8]] op0=left_shift op1=add"),
                 {"operand 'op0': bitwise operator left_shift is not allowed"});
  expectRejected(verifyLine(base + "src=sbuf[0:4]+64:fp32[[1,8]] op0=add op1=add "
                                   "imm1=sbuf[0:4]+128:fp32[[2,2]]"),
                 {"operand 'imm1'", "must be [4, 1], not [4, 2]"});
}

// ---- range_select ----

TEST(RangeSelect, KeepsTheIndexWindowAndReducesTheMaximum) {
  std::mt19937 rng(27);
  constexpr std::size_t kFree = 64;
  const auto data = randomValues(32 * kFree, DType::kFp32, rng, -8.0, 8.0);
  std::vector<float> lower(32);
  std::vector<float> upper(32);
  for (std::size_t p = 0; p < 32; ++p) {
    lower[p] = static_cast<float>(p) + 5.0f;
    upper[p] = static_cast<float>(p % 4 == 3 ? p : p + 12);  // empty window when p % 4 == 3
  }
  Region in = inputRegion("a", DType::kFp32, 32, 32, kFree, data);
  Region b0 = inputRegion("b0", DType::kFp32, 32, 32, 1, lower, 512);
  Region b1 = inputRegion("b1", DType::kFp32, 32, 32, 1, upper, 516);
  Region wide = outputRegion("w", DType::kFp32, 32, 32, kFree, 1024);
  Region narrow = outputRegion("n", DType::kBf16, 32, 32, kFree, 2048);
  Region res = outputRegion("r", DType::kFp32, 32, 32, 1, 4096);
  const std::string body = fmt::format(
      "on_true_tile={} comp_op0=greater_equal comp_op1=less "
      "bound0={} bound1={} range_start=10",
      in.ap(), b0.ap(), b1.ap());
  const auto out = runKernel(
      {in, b0, b1, wide, narrow, res},
      {fmt::format("dve: range_select dst={} {} reduce_res={}", wide.ap(), body, res.ap()),
       fmt::format("dve: range_select dst={} {} reduce_cmd=idle", narrow.ap(), body)});
  std::vector<float> expected(data.size());
  std::vector<float> maxima(32, -kInf);
  for (std::size_t p = 0; p < 32; ++p) {
    for (std::size_t f = 0; f < kFree; ++f) {
      const double index = 10.0 + static_cast<double>(f);
      const bool inside = index >= lower[p] && index < upper[p];
      expected[p * kFree + f] = inside ? data[p * kFree + f] : -FLT_MAX;
      maxima[p] = std::max(maxima[p], expected[p * kFree + f]);
    }
  }
  expectCastOf(out.at("w"), expected, DType::kFp32, "fp32");
  expectCastOf(out.at("n"), expected, DType::kBf16, "bf16");
  expectCastOf(out.at("r"), maxima, DType::kFp32, "max");
  // As the NKI documentation warns, the FP32_MIN fill becomes -Inf in bf16 (and stays finite in
  // fp32); an empty window reduces to FP32_MIN.
  EXPECT_EQ(decode(out.at("n"), DType::kBf16)[3 * kFree], -kInf);
  EXPECT_EQ(decode(out.at("r"), DType::kFp32)[3], -FLT_MAX);
}

TEST(RangeSelect, ContinuesTheMaximumOfSelectReduce) {
  Region pred = inputRegion("p", DType::kUint8, 0, 2, 4, {1, 1, 0, 0, 1, 0, 0, 0});
  Region values = inputRegion("v", DType::kFp32, 0, 2, 4, {3, 9, 50, 60, 7, 80, 90, 100}, 64);
  Region bounds = inputRegion("b", DType::kFp32, 0, 2, 1, {2, 0}, 128);
  Region dst = outputRegion("d", DType::kFp32, 0, 2, 4, 256);
  Region res = outputRegion("r", DType::kFp32, 0, 2, 1, 512);
  Region upper = inputRegion("u", DType::kFp32, 0, 2, 1, {3, 0}, 132);
  const auto out = runKernel(
      {pred, values, bounds, upper, dst, res},
      {fmt::format("dve: select_reduce dst={} predicate={} on_true={} on_false=-1 "
                   "reduce_cmd=reset_reduce",
                   dst.ap(), pred.ap(), values.ap()),
       // Partition 0 keeps index 3 only (2 < i <= 3), partition 1 nothing (0 < i <= 0).
       fmt::format("dve: range_select dst={} on_true_tile={} comp_op0=greater comp_op1=less_equal "
                   "bound0={} bound1={} reduce_cmd=reduce reduce_res={}",
                   dst.ap(), values.ap(), bounds.ap(), upper.ap(), res.ap())});
  // select_reduce max: partition 0 max(3, 9, -1, -1) = 9; partition 1 max(7, -1, -1, -1) = 7.
  // range_select: partition 0 keeps index 3 (60) -> max 60; partition 1 (0 < i <= 0) keeps
  // nothing -> FP32_MIN, max stays 7.
  EXPECT_EQ(decode(out.at("r"), DType::kFp32), (std::vector<float>{60, 7}));
}

TEST(RangeSelectVerifier, RejectsEachInstructionSpecificRule) {
  const std::string base =
      "dve: range_select dst=sbuf[0:4]:fp32[[1,8]] "
      "on_true_tile=sbuf[0:4]+64:fp32[[1,8]] bound0=sbuf[0:4]+128:fp32[[1,1]] ";
  const std::string b1 = "bound1=sbuf[0:4]+132:fp32[[1,1]] ";
  expectRejected(verifyLine(base + b1 + "comp_op0=add"),
                 {"operand 'comp_op0': operator add is not allowed here (allowed: equal, less, "
                  "less_equal, greater, greater_equal)"});
  expectRejected(verifyLine(base + "bound1=sbuf[0:4]+132:bf16[[1,1]]"),
                 {"operand 'bound1'", "dtype bf16 is not allowed here (allowed: fp32)"});
  expectRejected(verifyLine(base + b1 + "on_false_value=0"),
                 {"operand 'on_false_value': 0 is not supported", "FP32_MIN (-3.4028235e+38)"});
  expectRejected(verifyLine(base + b1 + "reduce_cmd=load_reduce"),
                 {"operand 'reduce_cmd': load_reduce is not supported by this instruction"});
  expectRejected(verifyLine(base + b1 + "reduce_cmd=idle reduce_res=sbuf[0:4]+136:fp32[[1,1]]"),
                 {"operand 'reduce_res' is given but reduce_cmd is idle"});
  expectRejected(verifyLine(base + b1 + "reduce_op=add"),
                 {"operand 'reduce_op': operator add is not allowed here (allowed: max)"});
  expectRejected(verifyLine(base + b1 + "range_start=16777210"),
                 {"operand 'range_start': indices 16777210..16777217 are not all exact in fp32"});
  expectRejected(
      verifyLine("dve: range_select dst=sbuf[0:4]:fp32[[1,8]] "
                 "on_true_tile=sbuf[0:4]+64:int32[[1,8]] bound0=sbuf[0:4]+128:fp32[[1,1]] " +
                 b1),
      {"operand 'on_true_tile'", "dtype int32 is not a floating-point type"});
}

// ---- select_reduce ----

TEST(SelectReduce, SelectsPerPredicateAndFoldsTheMaximum) {
  std::mt19937 rng(28);
  const auto data = randomValues(32 * 40, DType::kBf16, rng);
  const auto fallback = randomValues(32, DType::kFp32, rng);
  std::vector<float> mask(data.size());
  for (float& m : mask) {
    m = static_cast<float>(static_cast<int>(rng() % 5) - 2);  // -2 .. 2, zero 1 in 5
  }
  for (const bool reverse : {false, true}) {
    Region pred = inputRegion("p", DType::kInt8, 64, 32, 40, mask);
    Region in = inputRegion("a", DType::kBf16, 64, 32, 40, data, 64);
    Region other = inputRegion("o", DType::kFp32, 64, 32, 1, fallback, 256);
    Region dst = outputRegion("d", DType::kFp16, 64, 32, 40, 512);
    Region dst2 = outputRegion("d2", DType::kFp32, 64, 32, 40, 1536);
    Region res = outputRegion("r", DType::kFp32, 64, 32, 1, 1024);
    Region reset = outputRegion("z", DType::kFp32, 64, 32, 1, 1028);
    const auto out =
        runKernel({pred, in, other, dst, dst2, res, reset},
                  {fmt::format("dve: select_reduce dst={} predicate={} on_true={} on_false={} "
                               "reduce_cmd=reset_reduce reduce_res={} reverse_pred={}",
                               dst.ap(), pred.ap(), in.ap(), other.ap(), res.ap(), reverse),
                   fmt::format("dve: select_reduce dst={} predicate={} on_true={} on_false=-1 "
                               "reduce_cmd=reset reduce_res={}",
                               dst2.ap(), pred.ap(), in.ap(), reset.ap())});
    std::vector<float> expected(data.size());
    std::vector<float> maxima(32, -kInf);
    for (std::size_t i = 0; i < data.size(); ++i) {
      expected[i] = (mask[i] != 0) != reverse ? data[i] : fallback[i / 40];
      maxima[i / 40] = std::max(maxima[i / 40], expected[i]);
    }
    std::vector<float> second(data.size());
    for (std::size_t i = 0; i < data.size(); ++i) {
      second[i] = mask[i] != 0 ? data[i] : -1.0f;
    }
    expectCastOf(out.at("d"), expected, DType::kFp16, "dst");
    expectCastOf(out.at("d2"), second, DType::kFp32, "immediate on_false");
    expectCastOf(out.at("r"), maxima, DType::kFp32, "max");
    // reset puts the identity of max in the accumulators without folding anything.
    EXPECT_EQ(decode(out.at("z"), DType::kFp32), std::vector<float>(32, -kInf));
  }
}

TEST(SelectReduceVerifier, RejectsEachInstructionSpecificRule) {
  const std::string base = "dve: select_reduce dst=sbuf[0:4]:fp32[[1,8]] ";
  const std::string pred = "predicate=sbuf[0:4]+64:uint8[[1,8]] ";
  const std::string onTrue = "on_true=sbuf[0:4]+128:fp32[[1,8]] ";
  expectRejected(verifyLine(base + "predicate=sbuf[0:4]+64:uint32[[1,8]] " + onTrue),
                 {"operand 'predicate'",
                  "dtype uint32 is not allowed here (allowed: int8, uint8, "
                  "int16, uint16)"});
  expectRejected(verifyLine(base + pred + "on_true=sbuf[0:4]+128:int32[[1,8]]"),
                 {"operand 'on_true': dtype int32 is not allowed (any type but tf32, int32 and "
                  "uint32)"});
  expectRejected(verifyLine(base + pred + onTrue + "reduce_op=min"),
                 {"operand 'reduce_op': operator min is not allowed here (allowed: max)"});
  expectRejected(
      verifyLine(base + pred + onTrue + "reduce_cmd=reduce reduce_res=sbuf[0:4]+192:int32[[1,1]]"),
      {"operand 'reduce_res'", "dtype int32 is not a floating-point type"});
  expectRejected(verifyLine(base + "predicate=psum[0:4]:uint8[[1,8]] "
                                   "on_true=psum[0:4]+64:fp32[[1,8]]"),
                 {"'on_true' and 'predicate' are both in PSUM"});
  expectRejected(verifyLine(base + pred + onTrue + "on_false=sbuf[0:4]+192:fp32[[1,3]]"),
                 {"operand 'on_false'", "must be [4, 1], not [4, 3]"});
  expectRejected(verifyLine(base + pred + onTrue + "reduce_res=sbuf[0:4]+192:fp32[[1,1]]"),
                 {"operand 'reduce_res' is given but reduce_cmd is idle"});
}

// ---- every instruction of this family ----

TEST(VectorReduce, StochasticRoundingPicksANeighbourAndIsReproducible) {
  std::mt19937 rng(29);
  constexpr std::size_t kFree = 48;
  const auto a = randomValues(32 * kFree, DType::kFp32, rng, 0.5, 1.0);
  const auto b = randomValues(32 * kFree, DType::kFp32, rng, -1.0, 1.0);
  std::vector<float> mask(a.size());
  for (std::size_t i = 0; i < mask.size(); ++i) {
    mask[i] = static_cast<float>(i % 3);
  }
  std::vector<Region> regions = {
      inputRegion("a", DType::kFp32, 0, 32, kFree, a),
      inputRegion("b", DType::kFp32, 0, 32, kFree, b, 256),
      inputRegion("m", DType::kUint8, 0, 32, kFree, mask, 512),
      inputRegion("lo", DType::kFp32, 0, 32, 1, std::vector<float>(32, 4), 600),
      inputRegion("hi", DType::kFp32, 0, 32, 1, std::vector<float>(32, 40), 604)};
  const auto out = [&](std::string name, DType type, std::int64_t free, std::int64_t offset) {
    regions.push_back(outputRegion(std::move(name), type, 0, 32, free, offset));
    return regions.back().ap();
  };
  const std::string ra = regions[0].ap();
  const std::string rb = regions[1].ap();
  const std::vector<std::string> lines = {
      fmt::format("dve: tensor_tensor_scan dst={} data0={} data1={} initial=0.3 op0=multiply "
                  "op1=add",
                  out("scan", DType::kBf16, kFree, 1024), ra, rb),
      fmt::format("dve: tensor_scalar_cumulative dst={} src={} op0=multiply imm0=0.7 op1=add",
                  out("cum", DType::kFp16, kFree, 1536), rb),
      fmt::format("dve: tensor_scalar_reduce dst={} data={} op0=multiply operand0=0.3 "
                  "reduce_op=add reduce_res={}",
                  out("tsr", DType::kBf16, kFree, 2048), ra, out("tsr_res", DType::kBf16, 1, 2560)),
      fmt::format("dve: range_select dst={} on_true_tile={} comp_op0=greater_equal comp_op1=less "
                  "bound0={} bound1={}",
                  out("range", DType::kBf16, kFree, 3072), rb, regions[3].ap(), regions[4].ap()),
      fmt::format("dve: select_reduce dst={} predicate={} on_true={} on_false=0.1 "
                  "reduce_cmd=reset_reduce reduce_res={}",
                  out("select", DType::kFp8E4m3, kFree, 3584), regions[2].ap(), rb,
                  out("select_res", DType::kBf16, 1, 3712)),
      fmt::format("dve: tensor_reduce dst={} op=multiply data={}",
                  out("prod", DType::kBf16, 1, 3776), ra)};
  core::CoreOptions sr;
  sr.rounding = RoundingMode::kStochastic;
  sr.seed = 17;
  const auto first = runKernel(regions, lines, sr);
  EXPECT_EQ(first, runKernel(regions, lines, sr));
  std::map<std::string, std::vector<float>> expected;
  for (std::size_t p = 0; p < 32; ++p) {
    float scan = 0.3f;
    float cum = 0.0f;
    float sum = 0.0f;
    float best = -kInf;
    float prod = a[p * kFree];
    for (std::size_t f = 0; f < kFree; ++f) {
      const std::size_t i = p * kFree + f;
      scan = alu32(AluOp::kAdd, alu32(AluOp::kMultiply, a[i], scan), b[i]);
      expected["scan"].push_back(scan);
      cum = alu32(AluOp::kAdd, alu32(AluOp::kMultiply, b[i], 0.7f), cum);
      expected["cum"].push_back(cum);
      const float t = alu32(AluOp::kMultiply, a[i], 0.3f);
      expected["tsr"].push_back(t);
      sum = alu32(AluOp::kAdd, sum, t);
      expected["range"].push_back(f >= 4 && f < 40 ? b[i] : -FLT_MAX);
      const float chosen = mask[i] != 0 ? b[i] : 0.1f;
      expected["select"].push_back(chosen);
      best = std::max(best, chosen);
      if (f > 0) {
        prod = alu32(AluOp::kMultiply, prod, a[i]);
      }
    }
    expected["tsr_res"].push_back(sum);
    expected["select_res"].push_back(best);
    expected["prod"].push_back(prod);
  }
  for (const Region& r : regions) {
    if (r.output) {
      expectStochasticCastOf(first.at(r.name), expected.at(r.name), r.dtype, r.name);
    }
  }
}

TEST(VectorReduce, SpecialValuesPropagateThroughScansAndReductions) {
  const std::vector<float> x = {1, 2, NAN, 4, 5, -kInf, 7, 1e-40f, -3e38f, 3e38f, 2, 1};
  const std::size_t n = x.size();
  Region in = inputRegion("a", DType::kFp32, 0, 1, static_cast<std::int64_t>(n), x);
  // Every instruction reads the input backwards.
  const std::string backward = in.ap(fmt::format("[[-1,{}]]", n), static_cast<std::int64_t>(n) - 1);
  std::vector<Region> regions = {in};
  for (const std::string_view name : {"scan", "cum", "tsr", "res"}) {
    regions.push_back(outputRegion(std::string(name), DType::kFp32, 0, 1,
                                   name == "res" ? 1 : static_cast<std::int64_t>(n),
                                   256 + static_cast<std::int64_t>(regions.size()) * 64));
  }
  const auto out = runKernel(
      regions,
      {fmt::format("dve: tensor_tensor_scan dst={} data0={} data1={} initial=1 op0=add op1=max",
                   regions[1].ap(), backward, backward),
       fmt::format("dve: tensor_scalar_cumulative dst={} src={} op0=multiply imm0=2 op1=add",
                   regions[2].ap(), backward),
       fmt::format("dve: tensor_scalar_reduce dst={} data={} op0=add operand0=1 reduce_op=min "
                   "reduce_res={}",
                   regions[3].ap(), backward, regions[4].ap())});
  std::vector<float> scan(n);
  std::vector<float> cum(n);
  std::vector<float> tsr(n);
  float state = 1.0f;
  float reg = 0.0f;
  float low = kInf;
  for (std::size_t i = 0; i < n; ++i) {
    const float v = x[n - 1 - i];
    state = alu32(AluOp::kMax, alu32(AluOp::kAdd, v, state), v);
    scan[i] = state;
    reg = alu32(AluOp::kAdd, alu32(AluOp::kMultiply, v, 2.0f), reg);
    cum[i] = reg;
    tsr[i] = alu32(AluOp::kAdd, v, 1.0f);
    low = alu32(AluOp::kMin, low, tsr[i]);
  }
  expectCastOf(out.at("scan"), scan, DType::kFp32, "scan");
  expectCastOf(out.at("cum"), cum, DType::kFp32, "cumulative");
  expectCastOf(out.at("tsr"), tsr, DType::kFp32, "tensor_scalar_reduce");
  expectCastOf(out.at("res"), {low}, DType::kFp32, "min");
  EXPECT_TRUE(std::isnan(decode(out.at("res"), DType::kFp32)[0]));
}

}  // namespace
}  // namespace trn::isa
