// Cost formulas and classes: the expression language, variant selection, and the published
// per-instruction costs evaluated from the chip descriptions.
#include <gtest/gtest.h>

#include "test_util.h"

namespace trn::spec {
namespace {

Ratio ratio(std::int64_t n, std::int64_t d = 1) { return *Ratio::make(n, d); }

Result<Ratio> eval(const char* text, std::int64_t n = 0) {
  TRN_ASSIGN_OR_RETURN(CostExpression e, CostExpression::parse(text));
  TRN_RETURN_IF_ERROR(e.bind([](std::string_view name) -> std::optional<Ratio> {
    return name == "costs.min_ii" ? std::optional<Ratio>(Ratio(64)) : std::nullopt;
  }));
  return e.evaluate(CostVariables().set(CostVariable::kN, n));
}

TEST(CostExpression, Evaluates) {
  EXPECT_EQ(*eval("max(costs.min_ii, n)", 10), ratio(64));
  EXPECT_EQ(*eval("max(costs.min_ii, n)", 100), ratio(100));
  EXPECT_EQ(*eval("13 * (n / 3)", 10), ratio(130, 3));
  EXPECT_EQ(*eval("min(1, 2, -3) + ceil(7/2) - floor(7/2)"), ratio(-2));
  EXPECT_EQ(*eval("-n + 2 * 3", 1), ratio(5));
  EXPECT_EQ(*eval("1.5 * n", 3), ratio(9, 2));
}

TEST(CostExpression, RejectsBadFormulas) {
  for (const char* bad : {"", "max(1", "max(1)", "foo(1)", "1 +", "n n", "(n", "n)", "1..2",
                          "ceil(1, 2)", "$"}) {
    const Result<CostExpression> e = CostExpression::parse(bad);
    EXPECT_FALSE(e.ok()) << bad;
    if (!e.ok()) {
      EXPECT_NE(e.status().message().find("formula '"), std::string::npos);
    }
  }
  EXPECT_FALSE(eval("n / 0", 1).ok());
  EXPECT_FALSE(eval("costs.nothing + 1").ok());
  const Result<CostExpression> deep =
      CostExpression::parse(std::string(1000, '(') + "1" + std::string(1000, ')'));
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.status().message().find("nesting is too deep"), std::string::npos);
  EXPECT_FALSE(CostExpression::parse(std::string(100000, '-') + "1").ok());
  const Result<CostExpression> unbound = CostExpression::parse("costs.min_ii");
  ASSERT_TRUE(unbound.ok());
  EXPECT_FALSE(unbound->evaluate(CostVariables()).ok());
}

class Trn2Costs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { spec_ = new ChipSpec(testing::mustLoad("trn2")); }
  static void TearDownTestSuite() {
    delete spec_;
    spec_ = nullptr;
  }

  static CostEstimate cost(const char* cls, const CostQuery& q, const ChipSpec* spec = nullptr) {
    const CostClass* c = (spec ? spec : spec_)->costs.find(cls);
    EXPECT_NE(c, nullptr) << cls;
    const Result<CostEstimate> e = c->estimate(q);
    EXPECT_TRUE(e.ok()) << e.status().toString();
    return e.ok() ? *e : CostEstimate{};
  }

  static CostQuery query(Engine engine, std::vector<DType> dtypes, std::int64_t n) {
    CostQuery q;
    q.engine = engine;
    q.dtypes = std::move(dtypes);
    q.variables.set(CostVariable::kN, n);
    return q;
  }

  static inline ChipSpec* spec_ = nullptr;
};

TEST_F(Trn2Costs, VectorPerformanceMode) {
  CostQuery q = query(Engine::kDve, {DType::kBf16}, 2048);
  EXPECT_EQ(cost("tensor_copy", q).variant, "perf_4x");
  EXPECT_EQ(cost("tensor_copy", q).cycles, 512);
  q.allSbuf = false;
  q.psumInputs = 1;
  EXPECT_EQ(cost("tensor_copy", q).variant, "perf_2x");
  EXPECT_EQ(cost("tensor_copy", q).cycles, 1024);
  q = query(Engine::kDve, {DType::kFp32}, 2048);
  EXPECT_EQ(cost("tensor_scalar", q).variant, "default");
  EXPECT_EQ(cost("tensor_scalar", q).cycles, 2048);
  q = query(Engine::kAct, {DType::kBf16}, 2048);
  EXPECT_EQ(cost("tensor_copy", q).cycles, 2048);  // no ScalarE perf mode on NC-v3
  EXPECT_EQ(cost("tensor_copy", query(Engine::kDve, {DType::kBf16}, 100)).cycles, 64);
}

TEST_F(Trn2Costs, TensorTensorVariants) {
  CostQuery q = query(Engine::kDve, {DType::kFp32}, 1000);
  EXPECT_EQ(cost("tensor_tensor", q).cycles, 2000);
  q.psumInputs = 1;
  q.allSbuf = false;
  EXPECT_EQ(cost("tensor_tensor", q).variant, "psum_input");
  EXPECT_EQ(cost("tensor_tensor", q).cycles, 1000);
  q = query(Engine::kDve, {DType::kBf16}, 1000);
  q.ops = {"add"};
  EXPECT_EQ(cost("tensor_tensor", q).variant, "bf16_fast_path");
  q.ops = {"divide"};
  EXPECT_EQ(cost("tensor_tensor", q).variant, "perf_2x");
  EXPECT_EQ(cost("tensor_tensor", q).cycles, 1000);
}

TEST_F(Trn2Costs, PublishedFormulas) {
  CostQuery q = query(Engine::kDve, {DType::kBf16}, 30);
  EXPECT_EQ(cost("bn_aggr", q).cycles, 130);   // max(64, 13 * 30 / 3)
  q.variables.set(CostVariable::kN, 10);
  EXPECT_EQ(cost("bn_aggr", q).cycles, 64);
  q.variables.set(CostVariable::kN, 100);
  EXPECT_EQ(cost("reciprocal", q).cycles, 800);
  EXPECT_EQ(cost("activation_reduce", query(Engine::kAct, {}, 100)).cycles, 164);
  EXPECT_EQ(cost("tensor_scalar_reduce", q).cycles, 164);
  EXPECT_EQ(cost("tensor_copy_dynamic", query(Engine::kPool, {}, 100)).cycles, 600);
  EXPECT_EQ(cost("iota_affine_select", query(Engine::kPool, {}, 100)).cycles, 250);

  q = query(Engine::kDve, {DType::kBf16}, 1000);
  q.ops = {"subtract", "multiply"};
  EXPECT_EQ(cost("scalar_tensor_tensor", q).cycles, 1000);
  q.variables.set(CostVariable::kN, 1001);
  EXPECT_EQ(cost("scalar_tensor_tensor", q).cycles, 2002);  // odd n: no fast path
  q.ops = {"max"};
  EXPECT_EQ(cost("tensor_reduce", q).cycles, 501);          // ceil(1001 / 2)

  q = query(Engine::kDve, {DType::kBf16}, 1000);
  q.fillZero = true;
  EXPECT_EQ(cost("memset", q).cycles, 500);
  q.dtypes = {DType::kFp32};
  EXPECT_EQ(cost("memset", q).cycles, 1000);

  q = query(Engine::kPool, {DType::kFp32}, 100);
  q.variables.set(CostVariable::kK, 8);
  EXPECT_EQ(cost("topk", q).cycles, 408);
  q.variables.set(CostVariable::kK, 4).set(CostVariable::kIndices, 100).set(
      CostVariable::kDtypeBytes, 4);
  // C = ((28 + 16) / 16) / min(4 / 4, 4) = 2.75; 150 + 100 * 4 / 2.75 = 295.45...
  EXPECT_EQ(cost("local_gather", q).cycles, 296);
}

TEST_F(Trn2Costs, TensorEngine) {
  CostQuery q = query(Engine::kPe, {DType::kBf16, DType::kFp32}, 0);
  q.variables.set(CostVariable::kNStationary, 128).set(CostVariable::kNMoving, 512);
  EXPECT_EQ(cost("matmul", q).cycles, 512);
  q.variables.set(CostVariable::kNMoving, 32);
  EXPECT_EQ(cost("matmul", q).cycles, 64);
  q.variables.set(CostVariable::kNStationary, 16).set(CostVariable::kNMoving, 8);
  EXPECT_EQ(cost("matmul", q).cycles, 16);
  q.dtypes = {DType::kFp32};
  q.variables.set(CostVariable::kNStationary, 128).set(CostVariable::kNMoving, 512);
  EXPECT_EQ(cost("matmul", q).cycles, 2048);

  q = query(Engine::kPe, {DType::kFp32}, 128);
  q.variables.set(CostVariable::kP, 128);
  EXPECT_EQ(cost("transpose", q).cycles, 256);  // 4x / 2x faster on NC-v3
  const ChipSpec trn1 = testing::mustLoad("trn1");
  EXPECT_EQ(cost("transpose", q, &trn1).cycles, 512);  // FP32 identity matmul on NC-v2
  q.dtypes = {DType::kBf16};
  EXPECT_EQ(cost("transpose", q).cycles, 128);
}

TEST_F(Trn2Costs, Trn3ScalarPerfMode) {
  const ChipSpec trn3 = testing::mustLoad("trn3");
  const CostQuery q = query(Engine::kAct, {DType::kBf16}, 2048);
  EXPECT_EQ(cost("tensor_copy", q, &trn3).variant, "act_perf_2x");
  EXPECT_EQ(cost("tensor_copy", q, &trn3).cycles, 1024);
}

}  // namespace
}  // namespace trn::spec
