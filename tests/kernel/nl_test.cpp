// End-to-end tests of the nl-level kernel API (nl.h), memory, creation, element-wise and
// reduction functions: every function is used in a small kernel that loads its inputs from HBM,
// applies it and stores the result; the kernel is compiled for trn2, run on the core model in
// functional+timing mode with race detection and poison on (so the backend's Program is race-free
// and reads no unwritten bytes), and compared with a float64 reference computed here with <cmath>.
// Shape errors are checked to name the kernel's line. Tensor-engine and composite functions:
// nl_tensor_test.cpp.
#include "trn/kernel/nl.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "nl_test_util.h"

namespace trn::kernel {
namespace {

using namespace nltest;  // NOLINT(google-build-using-namespace)

// ---- Tracing ----------------------------------------------------------------------------------

TEST(Nl, EveryInstructionAndTileCarriesTheCallersLine) {
  Kernel k("trace", limits());
  const Tensor x = nl::load(k.input("x", {64, 40}, DType::kFp32));
  const Tensor w = nl::load(k.input("w", {1, 40}, DType::kFp32));
  const std::size_t firstOp = k.ir().ops.size();
  const std::size_t firstBuffer = k.ir().buffers.size();
  const int line = __LINE__ + 1;
  const Tensor r = nl::rmsNorm(x, w);
  ASSERT_GT(k.ir().ops.size(), firstOp + 4);
  for (std::size_t i = firstOp; i < k.ir().ops.size(); ++i) {
    const isa::SourceLocation at = k.ir().location(k.ir().ops[i].site);
    EXPECT_EQ(at.line, line) << "op " << i;
    EXPECT_NE(at.file.find("nl_test.cpp"), std::string::npos) << at.file;
  }
  for (std::size_t b = firstBuffer; b < k.ir().buffers.size(); ++b) {
    EXPECT_EQ(k.ir().buffers[b].site.line, line) << k.ir().buffers[b].name;
  }
  EXPECT_EQ(r.shape(), x.shape());
}

TEST(Nl, EnginesFollowNkiReferenceSection4) {
  Kernel k("engines", limits());
  const Tensor x = nl::load(k.input("x", {64, 40}, DType::kFp32));
  auto lastEngine = [&k] { return k.ir().ops.back().instr.engine; };
  EXPECT_EQ(lastEngine(), isa::Engine::kSp);  // DMA
  (void)nl::add(x, x);
  EXPECT_EQ(lastEngine(), isa::Engine::kDve);
  (void)nl::multiply(x, 2.0f);
  EXPECT_EQ(lastEngine(), isa::Engine::kDve);
  (void)nl::exp(x);
  EXPECT_EQ(lastEngine(), isa::Engine::kAct);
  (void)nl::power(x, x);
  EXPECT_EQ(lastEngine(), isa::Engine::kPool);
  (void)nl::power(x, 2.0f);
  EXPECT_EQ(lastEngine(), isa::Engine::kPool);
  (void)nl::sum(x);
  EXPECT_EQ(lastEngine(), isa::Engine::kDve);
  (void)nl::iota(k, {64, 40});
  EXPECT_EQ(lastEngine(), isa::Engine::kPool);
  (void)nl::transpose(x);
  EXPECT_EQ(lastEngine(), isa::Engine::kPe);
  (void)nl::matmul(x, x, true);
  EXPECT_EQ(lastEngine(), isa::Engine::kPe);
}

// ---- Memory and creation ----------------------------------------------------------------------

TEST(Nl, LoadCopyStoreAreBitExact) {
  for (const std::vector<std::int64_t>& shape :
       {std::vector<std::int64_t>{128, 64}, {77, 130}, {33, 5, 7}}) {
    const auto a = randomValues(static_cast<std::size_t>(count(shape)), 1);
    auto def = makeKernel("copy", [](Kernel& k, Tensor in) {
      Tensor out = k.output("out", in.shape(), in.dtype());
      nl::store(out, nl::copy(nl::load(in)));
      return out;
    });
    const auto out = runOne(def, {{shape, a}});
    // Equal dtypes move raw bytes.
    expectUlps(out, std::vector<double>(a.begin(), a.end()), 0, "copy");
  }
}

TEST(Nl, LoadAndCopyCastThroughBf16) {
  const std::vector<std::int64_t> shape = {100, 37};
  const auto a = randomValues(static_cast<std::size_t>(count(shape)), 2);
  auto def = makeKernel("cast", [](Kernel& k, Tensor in) {
    Tensor out = k.output("out", in.shape(), DType::kFp32);
    Tensor narrow = nl::load(in, DType::kBf16);
    nl::store(out, nl::copy(narrow, DType::kFp32));
    return out;
  });
  const auto out = runOne(def, {{shape, a}});
  std::vector<double> ref;
  for (const float x : a) {
    ref.push_back(bf16(x));  // one nearest-even rounding to bf16, exact widening back
  }
  expectUlps(out, ref, 0, "bf16 cast");
}

TEST(Nl, ZerosOnesFullAndIota) {
  const std::vector<std::int64_t> shape = {90, 3, 7};
  auto def = makeKernel("create", [shape](Kernel& k, Tensor) {
    std::vector<Tensor> outs;
    const std::vector<Tensor> tiles = {
        nl::zeros(k, shape), nl::ones(k, shape, DType::kBf16),
        nl::full(k, shape, DType::kFp32, 2.5f),
        nl::copy(nl::iota(k, shape, DType::kInt32, 5, 100, 3), DType::kFp32),
        nl::iota(k, shape, DType::kFp32)};
    for (std::size_t i = 0; i < tiles.size(); ++i) {
      outs.push_back(k.output("out" + std::to_string(i), shape, DType::kFp32));
      nl::store(outs.back(), tiles[i]);
    }
    return outs;
  });
  const auto outs = run(def, {{{1, 1}, {0.0f}}});
  ASSERT_EQ(outs.size(), 5u);
  std::vector<double> zeros(90 * 21, 0.0);
  std::vector<double> ones(90 * 21, 1.0);
  std::vector<double> full(90 * 21, 2.5);
  std::vector<double> iota;
  std::vector<double> plain;
  for (int p = 0; p < 90; ++p) {
    for (int i = 0; i < 21; ++i) {
      iota.push_back(5 + p * 100 + 3 * i);
      plain.push_back(i);
    }
  }
  // Constants and small integers are exact.
  expectUlps(outs[0], zeros, 0, "zeros");
  expectUlps(outs[1], ones, 0, "ones");
  expectUlps(outs[2], full, 0, "full");
  expectUlps(outs[3], iota, 0, "iota int32");
  expectUlps(outs[4], plain, 0, "iota fp32");
}

// ---- Element-wise -----------------------------------------------------------------------------

struct BinaryCase {
  const char* name;
  std::function<Tensor(const Tensor&, const nl::Operand&)> tileFirst;
  std::function<Tensor(float, const Tensor&)> scalarFirst;
  std::function<double(double, double)> ref;
  int ulps;  ///< 0: the fp32 result is the correctly rounded exact result
};

std::vector<BinaryCase> binaryCases() {
  // add..divide: one IEEE fp32 operation, which equals the double result rounded once (double
  // holds the exact sum/product, and division rounded twice through double is innocuous);
  // max/min and comparisons are exact; power is evaluated in double and rounded once (1 ulp
  // between two independently rounded values).
  return {
      {"add", [](const Tensor& a, const nl::Operand& b) { return nl::add(a, b); },
       [](float a, const Tensor& b) { return nl::add(a, b); },
       [](double a, double b) { return a + b; }, 0},
      {"subtract", [](const Tensor& a, const nl::Operand& b) { return nl::subtract(a, b); },
       [](float a, const Tensor& b) { return nl::subtract(a, b); },
       [](double a, double b) { return a - b; }, 0},
      {"multiply", [](const Tensor& a, const nl::Operand& b) { return nl::multiply(a, b); },
       [](float a, const Tensor& b) { return nl::multiply(a, b); },
       [](double a, double b) { return a * b; }, 0},
      {"divide", [](const Tensor& a, const nl::Operand& b) { return nl::divide(a, b); },
       [](float a, const Tensor& b) { return nl::divide(a, b); },
       [](double a, double b) { return a / b; }, 0},
      {"maximum", [](const Tensor& a, const nl::Operand& b) { return nl::maximum(a, b); },
       [](float a, const Tensor& b) { return nl::maximum(a, b); },
       [](double a, double b) { return std::fmax(a, b); }, 0},
      {"minimum", [](const Tensor& a, const nl::Operand& b) { return nl::minimum(a, b); },
       [](float a, const Tensor& b) { return nl::minimum(a, b); },
       [](double a, double b) { return std::fmin(a, b); }, 0},
      {"power", [](const Tensor& a, const nl::Operand& b) { return nl::power(a, b); },
       [](float a, const Tensor& b) { return nl::power(a, b); },
       [](double a, double b) { return std::pow(a, b); }, 1},
      {"equal", [](const Tensor& a, const nl::Operand& b) { return nl::equal(a, b); },
       [](float a, const Tensor& b) { return nl::equal(a, b); },
       [](double a, double b) { return a == b ? 1.0 : 0.0; }, 0},
      {"notEqual", [](const Tensor& a, const nl::Operand& b) { return nl::notEqual(a, b); },
       [](float a, const Tensor& b) { return nl::notEqual(a, b); },
       [](double a, double b) { return a != b ? 1.0 : 0.0; }, 0},
      {"less", [](const Tensor& a, const nl::Operand& b) { return nl::less(a, b); },
       [](float a, const Tensor& b) { return nl::less(a, b); },
       [](double a, double b) { return a < b ? 1.0 : 0.0; }, 0},
      {"lessEqual", [](const Tensor& a, const nl::Operand& b) { return nl::lessEqual(a, b); },
       [](float a, const Tensor& b) { return nl::lessEqual(a, b); },
       [](double a, double b) { return a <= b ? 1.0 : 0.0; }, 0},
      {"greater", [](const Tensor& a, const nl::Operand& b) { return nl::greater(a, b); },
       [](float a, const Tensor& b) { return nl::greater(a, b); },
       [](double a, double b) { return a > b ? 1.0 : 0.0; }, 0},
      {"greaterEqual", [](const Tensor& a, const nl::Operand& b) { return nl::greaterEqual(a, b); },
       [](float a, const Tensor& b) { return nl::greaterEqual(a, b); },
       [](double a, double b) { return a >= b ? 1.0 : 0.0; }, 0},
  };
}

enum class Mode { kTileTile, kTileColumn, kColumnTile, kTileScalar, kScalarTile };

TEST(Nl, BinaryOperatorsInEveryBroadcastForm) {
  constexpr float kScalar = 0.75f;
  for (const std::vector<std::int64_t>& shape :
       {std::vector<std::int64_t>{128, 64}, {77, 130}, {5, 3, 7}}) {
    const std::int64_t p = shape[0];
    const std::int64_t f = count(shape) / p;
    const auto a = randomValues(static_cast<std::size_t>(p * f), 3);
    auto b = randomValues(static_cast<std::size_t>(p * f), 4);
    for (std::size_t i = 0; i < b.size(); i += 3) {
      b[i] = a[i];  // equal elements for the comparisons
    }
    const auto column = randomValues(static_cast<std::size_t>(p), 5);
    for (const BinaryCase& c : binaryCases()) {
      for (const Mode mode : {Mode::kTileTile, Mode::kTileColumn, Mode::kColumnTile,
                              Mode::kTileScalar, Mode::kScalarTile}) {
        auto def = makeKernel(c.name, [&c, mode](Kernel& k, Tensor x, Tensor y) {
          const Tensor tx = nl::load(x);
          const Tensor ty = nl::load(y);
          Tensor r;
          switch (mode) {
            case Mode::kTileTile:
            case Mode::kTileColumn:
            case Mode::kColumnTile:
              r = c.tileFirst(tx, ty);
              break;
            case Mode::kTileScalar:
              r = c.tileFirst(tx, kScalar);
              break;
            case Mode::kScalarTile:
              r = c.scalarFirst(kScalar, ty);
              break;
          }
          Tensor out = k.output("out", r.shape(), DType::kFp32);
          nl::store(out, r);
          return out;
        });
        std::vector<std::int64_t> columnShape = {p, 1};
        const bool xColumn = mode == Mode::kColumnTile;
        const bool yColumn = mode == Mode::kTileColumn;
        const Input x{xColumn ? columnShape : shape, xColumn ? column : a};
        const Input y{yColumn ? columnShape : shape, yColumn ? column : b};
        const auto out = runOne(def, {x, y});
        std::vector<double> ref;
        for (std::int64_t i = 0; i < p * f; ++i) {
          const auto at = static_cast<std::size_t>(i);
          const auto row = static_cast<std::size_t>(i / f);
          double lhs = a[at];
          double rhs = b[at];
          switch (mode) {
            case Mode::kTileTile:
              break;
            case Mode::kTileColumn:
              rhs = column[row];
              break;
            case Mode::kColumnTile:
              lhs = column[row];
              break;
            case Mode::kTileScalar:
              rhs = kScalar;
              break;
            case Mode::kScalarTile:
              lhs = kScalar;
              break;
          }
          ref.push_back(c.ref(lhs, rhs));
        }
        expectUlps(out, ref, c.ulps,
                   std::string(c.name) + " mode " + std::to_string(static_cast<int>(mode)) +
                       " shape [" + std::to_string(p) + ", " + std::to_string(f) + "]");
      }
    }
  }
}

TEST(Nl, MixedDtypesPromoteToFp32AndABf16ColumnBroadcasts) {
  const std::int64_t p = 60;
  const std::int64_t f = 45;
  const auto a = randomValues(static_cast<std::size_t>(p * f), 6);
  const auto tile = randomValues(static_cast<std::size_t>(p * f), 7);
  const auto column = randomValues(static_cast<std::size_t>(p), 8);
  auto def = makeKernel("mixed", [](Kernel& k, Tensor x, Tensor y, Tensor c) {
    const Tensor sum = nl::add(nl::load(x), nl::load(y));  // fp32 + bf16 -> fp32
    const Tensor r = nl::multiply(sum, nl::load(c));       // bf16 column, converted to fp32
    Tensor out = k.output("out", r.shape(), r.dtype());
    EXPECT_EQ(r.dtype(), DType::kFp32);
    nl::store(out, r);
    return out;
  });
  const auto out =
      runOne(def, {{{p, f}, a}, {{p, f}, tile, DType::kBf16}, {{p, 1}, column, DType::kBf16}});
  std::vector<double> ref;
  for (std::int64_t i = 0; i < p * f; ++i) {
    const auto at = static_cast<std::size_t>(i);
    // Two fp32 roundings, reproduced exactly: bf16 inputs are exact in fp32 and in double.
    const auto s = static_cast<float>(static_cast<double>(a[at]) + bf16(tile[at]));
    ref.push_back(static_cast<double>(s) * bf16(column[static_cast<std::size_t>(i / f)]));
  }
  expectUlps(out, ref, 0, "mixed");
}

TEST(Nl, WhereSelectsTilesAndScalars) {
  const std::int64_t p = 100;
  const std::int64_t f = 51;
  const auto a = randomValues(static_cast<std::size_t>(p * f), 9);
  const auto b = randomValues(static_cast<std::size_t>(p * f), 10);
  auto def = makeKernel("where", [](Kernel& k, Tensor x, Tensor y) {
    const Tensor tx = nl::load(x);
    const Tensor ty = nl::load(y);
    const Tensor cond = nl::greater(tx, ty);
    const std::vector<Tensor> results = {nl::where(cond, tx, ty), nl::where(cond, tx, -1.0f),
                                         nl::where(cond, 3.0f, ty, DType::kBf16)};
    std::vector<Tensor> outs;
    for (const Tensor& r : results) {
      outs.push_back(k.output("out" + std::to_string(outs.size()), r.shape(), DType::kFp32));
      nl::store(outs.back(), r);
    }
    return outs;
  });
  const auto outs = run(def, {{{p, f}, a}, {{p, f}, b}});
  ASSERT_EQ(outs.size(), 3u);
  std::vector<double> maxRef;
  std::vector<double> scalarRef;
  std::vector<double> bf16Ref;
  for (std::size_t i = 0; i < a.size(); ++i) {
    maxRef.push_back(a[i] > b[i] ? a[i] : b[i]);
    scalarRef.push_back(a[i] > b[i] ? a[i] : -1.0);
    bf16Ref.push_back(a[i] > b[i] ? 3.0 : bf16(b[i]));
  }
  // Selection copies values; the bf16 result rounds b once.
  expectUlps(outs[0], maxRef, 0, "where tiles");
  expectUlps(outs[1], scalarRef, 0, "where scalar");
  expectUlps(outs[2], bf16Ref, 0, "where bf16");
}

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> fn;
  std::function<double(double)> ref;
  float lo;
  float hi;
};

std::vector<UnaryCase> unaryCases() {
  const double sqrt2 = std::sqrt(2.0);
  return {
      {"negative", [](const Tensor& x) { return nl::negative(x); }, [](double x) { return -x; }, -3,
       3},
      {"reciprocal", [](const Tensor& x) { return nl::reciprocal(x); },
       [](double x) { return 1.0 / x; }, 0.1f, 3},
      {"abs", [](const Tensor& x) { return nl::abs(x); }, [](double x) { return std::fabs(x); }, -3,
       3},
      {"square", [](const Tensor& x) { return nl::square(x); }, [](double x) { return x * x; }, -3,
       3},
      {"exp", [](const Tensor& x) { return nl::exp(x); }, [](double x) { return std::exp(x); }, -3,
       3},
      {"log", [](const Tensor& x) { return nl::log(x); }, [](double x) { return std::log(x); },
       0.05f, 5},
      {"sqrt", [](const Tensor& x) { return nl::sqrt(x); }, [](double x) { return std::sqrt(x); },
       0.05f, 5},
      {"rsqrt", [](const Tensor& x) { return nl::rsqrt(x); },
       [](double x) { return 1.0 / std::sqrt(x); }, 0.05f, 5},
      {"tanh", [](const Tensor& x) { return nl::tanh(x); }, [](double x) { return std::tanh(x); },
       -3, 3},
      {"sigmoid", [](const Tensor& x) { return nl::sigmoid(x); },
       [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, -3, 3},
      {"relu", [](const Tensor& x) { return nl::relu(x); },
       [](double x) { return x > 0 ? x : 0.0; }, -3, 3},
      {"gelu", [](const Tensor& x) { return nl::gelu(x); },
       [sqrt2](double x) { return 0.5 * x * std::erfc(-x / sqrt2); }, -3, 3},
      {"silu", [](const Tensor& x) { return nl::silu(x); },
       [](double x) { return x / (1.0 + std::exp(-x)); }, -3, 3},
      {"sin", [](const Tensor& x) { return nl::sin(x); }, [](double x) { return std::sin(x); }, -3,
       3},
      {"erf", [](const Tensor& x) { return nl::erf(x); }, [](double x) { return std::erf(x); }, -3,
       3},
      {"softplus", [](const Tensor& x) { return nl::softplus(x); },
       [](double x) { return std::log1p(std::exp(x)); }, -3, 3},
  };
}

TEST(Nl, UnaryFunctionsMatchFloat64WithinOneUlp) {
  for (const std::vector<std::int64_t>& shape :
       {std::vector<std::int64_t>{128, 64}, {77, 130}, {9, 4, 11}}) {
    for (const UnaryCase& c : unaryCases()) {
      const auto x = randomValues(static_cast<std::size_t>(count(shape)), 11, c.lo, c.hi);
      auto def = makeKernel(c.name, [&c](Kernel& k, Tensor in) {
        const Tensor r = c.fn(nl::load(in));
        Tensor out = k.output("out", r.shape(), DType::kFp32);
        nl::store(out, r);
        return out;
      });
      const auto out = runOne(def, {{shape, x}});
      std::vector<double> ref;
      for (const float v : x) {
        ref.push_back(c.ref(v));
      }
      // The scalar engine evaluates each function in double and rounds once (negative and the
      // vector reciprocal are single correctly rounded operations), so the result and float(ref)
      // are both within half an ulp of the true value: at most 1 ulp apart.
      expectUlps(out, ref, 1, c.name);
    }
  }
}

TEST(Nl, UnaryOnBf16RoundsOnceToBf16) {
  const std::int64_t p = 64;
  const std::int64_t f = 99;
  const auto x = randomValues(static_cast<std::size_t>(p * f), 12);
  auto def = makeKernel("exp_bf16", [](Kernel& k, Tensor in) {
    const Tensor r = nl::exp(nl::load(in));
    EXPECT_EQ(r.dtype(), DType::kBf16);
    Tensor out = k.output("out", r.shape(), DType::kFp32);
    nl::store(out, r);
    return out;
  });
  const auto out = runOne(def, {{{p, f}, x, DType::kBf16}});
  std::vector<double> ref;
  for (const float v : x) {
    ref.push_back(std::exp(static_cast<double>(bf16(v))));
  }
  // bf16 output: rounded to fp32, then to bf16 (8-bit significand): within one bf16 ulp, a
  // relative 2^-7.
  expectClose(out, ref, 1.0 / 128, 0.0, "exp bf16");
}

// ---- Reductions -------------------------------------------------------------------------------

TEST(Nl, ReductionsAlongTheFreeDimensions) {
  struct Shape {
    std::vector<std::int64_t> dims;
    int axis;
    bool keepdims;
    std::vector<std::int64_t> expected;
  };
  for (const Shape& s :
       {Shape{{128, 64}, 1, false, {128, 1}}, Shape{{77, 130}, 1, true, {77, 1}},
        Shape{{20, 6, 9}, 2, true, {20, 6, 1}}, Shape{{20, 6, 9}, 2, false, {20, 6}},
        Shape{{31, 4, 5}, 1, false, {31, 1}}}) {
    const std::int64_t n = count(s.dims);
    const std::int64_t outer = count(s.expected);  // values kept
    const std::int64_t block = n / outer;          // values folded into one result
    const auto x = randomValues(static_cast<std::size_t>(n), 13);
    const auto positive = randomValues(static_cast<std::size_t>(n), 14, 0.8f, 1.25f);
    auto def = makeKernel("reduce", [&s](Kernel& k, Tensor in, Tensor pos) {
      const Tensor t = nl::load(in);
      const std::vector<Tensor> results = {
          nl::sum(t, s.axis, s.keepdims), nl::max(t, s.axis, s.keepdims),
          nl::min(t, s.axis, s.keepdims), nl::mean(t, s.axis, s.keepdims),
          nl::prod(nl::load(pos), s.axis, s.keepdims)};
      std::vector<Tensor> outs;
      for (const Tensor& r : results) {
        EXPECT_EQ(r.shape(), s.expected);
        outs.push_back(k.output("out" + std::to_string(outs.size()), r.shape(), DType::kFp32));
        nl::store(outs.back(), r);
      }
      return outs;
    });
    const auto outs = run(def, {{s.dims, x}, {s.dims, positive}});
    ASSERT_EQ(outs.size(), 5u);
    std::vector<double> sum, max, min, mean, prod, sumBound, prodBound;
    for (std::int64_t o = 0; o < outer; ++o) {
      double total = 0;
      double absTotal = 0;
      double hi = -INFINITY;
      double lo = INFINITY;
      double product = 1;
      for (std::int64_t j = 0; j < block; ++j) {
        const auto at = static_cast<std::size_t>(o * block + j);
        total += x[at];
        absTotal += std::fabs(x[at]);
        hi = std::max<double>(hi, x[at]);
        lo = std::min<double>(lo, x[at]);
        product *= positive[at];
      }
      sum.push_back(total);
      max.push_back(hi);
      min.push_back(lo);
      mean.push_back(total / static_cast<double>(block));
      prod.push_back(product);
      // A recursive fp32 sum is within (n-1)·u·Σ|x| of the exact sum (docs/isa/vector.md); a
      // product of n factors within about n·u relative.
      sumBound.push_back(static_cast<double>(block) * kFp32Eps * absTotal);
      prodBound.push_back(static_cast<double>(block + 1) * kFp32Eps * product);
    }
    for (std::size_t i = 0; i < sum.size(); ++i) {
      EXPECT_LE(std::fabs(outs[0][i] - sum[i]), sumBound[i]) << "sum " << i;
      // The mean divides the fp32 sum by n and rounds once more.
      EXPECT_LE(std::fabs(outs[3][i] - mean[i]),
                sumBound[i] / static_cast<double>(block) + kFp32Eps * std::fabs(mean[i]) * 2)
          << "mean " << i;
      EXPECT_LE(std::fabs(outs[4][i] - prod[i]), prodBound[i]) << "prod " << i;
    }
    expectUlps(outs[1], max, 0, "max");  // max and min select an element: exact
    expectUlps(outs[2], min, 0, "min");
  }
}

TEST(Nl, VarianceMatchesTwoPassFloat64) {
  for (const std::vector<std::int64_t>& shape :
       {std::vector<std::int64_t>{128, 64}, {45, 301}, {12, 5, 6}}) {
    const std::int64_t p = shape[0];
    const std::int64_t f = count(shape) / p;
    auto x = randomValues(static_cast<std::size_t>(p * f), 15);
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] += 3.0f;  // an offset makes the centring matter
    }
    auto def = makeKernel("var", [](Kernel& k, Tensor in) {
      const Tensor r = nl::var(nl::load(in));
      Tensor out = k.output("out", r.shape(), DType::kFp32);
      nl::store(out, r);
      return out;
    });
    const auto out = runOne(def, {{shape, x}});
    std::vector<double> ref;
    for (std::int64_t r = 0; r < p; ++r) {
      double m = 0;
      for (std::int64_t j = 0; j < f; ++j) {
        m += x[static_cast<std::size_t>(r * f + j)];
      }
      m /= static_cast<double>(f);
      double v = 0;
      for (std::int64_t j = 0; j < f; ++j) {
        const double d = x[static_cast<std::size_t>(r * f + j)] - m;
        v += d * d;
      }
      ref.push_back(v / static_cast<double>(f));
    }
    // The fp32 sums (mean, then squares) each err by at most about f·u relative to their
    // magnitudes (|x| <= 5, variance ~ 1.3): the bound is a few f·u relative to the variance.
    expectClose(out, ref, 8.0 * static_cast<double>(f) * kFp32Eps, 0.0, "var");
  }
}

// ---- Errors -----------------------------------------------------------------------------------

TEST(NlErrors, BinaryShapeMismatchNamesBothOperands) {
  int line = 0;
  auto def = makeKernel("bad_add", [&line](Kernel& k, Tensor a, Tensor b) {
    const Tensor x = nl::load(a);
    const Tensor y = nl::load(b);
    line = __LINE__ + 1;
    const Tensor z = nl::add(x, y);
    Tensor out = k.output("out", z.shape(), DType::kFp32);
    nl::store(out, z);
    return out;
  });
  expectErrorAt(compileError(def, {{128, 64}, {128, 32}}), &line,
                {"nl.add", "[128, 64]", "[128, 32]"});
  expectErrorAt(compileError(def, {{128, 64}, {64, 1}}), &line, {"nl.add", "[128, 64]", "[64, 1]"});
}

TEST(NlErrors, MatmulContractionMismatchAndLimits) {
  int line = 0;
  auto def = makeKernel("bad_matmul", [&line](Kernel& k, Tensor a, Tensor b) {
    const Tensor x = nl::load(a);
    const Tensor y = nl::load(b);
    line = __LINE__ + 1;
    const Tensor z = nl::matmul(x, y, true);
    Tensor out = k.output("out", z.shape(), DType::kFp32);
    nl::store(out, z);
    return out;
  });
  expectErrorAt(compileError(def, {{64, 32}, {96, 16}}), &line,
                {"nl.matmul", "[64, 32]", "[96, 16]", "K = 64", "K = 96"});
  expectErrorAt(compileError(def, {{64, 32}, {64, 600}}), &line, {"nl.matmul", "N = 600"});
}

TEST(NlErrors, HardwareRuleViolationsInsideNlPointAtTheCallersLine) {
  int line = 0;
  auto def = makeKernel("mixed_matmul", [&line](Kernel& k, Tensor a, Tensor b) {
    const Tensor x = nl::load(a);
    const Tensor y = nl::load(b, DType::kBf16);
    line = __LINE__ + 1;
    const Tensor z = nl::matmul(x, y, true);  // fp32 stationary, bf16 moving
    Tensor out = k.output("out", z.shape(), DType::kFp32);
    nl::store(out, z);
    return out;
  });
  expectErrorAt(compileError(def, {{32, 16}, {32, 8}}), &line, {"nc_matmul", "fp32"});
}

TEST(NlErrors, StoreReduceWhereTransposeAndNormShapes) {
  int line = 0;
  int which = 0;
  auto def = makeKernel("bad", [&line, &which](Kernel& k, Tensor a, Tensor b) {
    const Tensor x = nl::load(a);
    const Tensor y = nl::load(b);
    Tensor out = k.output("out", {a.shape(0), 3}, DType::kFp32);
    switch (which) {
      case 0:
        line = __LINE__ + 1;
        nl::store(out, x);
        break;
      case 1:
        line = __LINE__ + 1;
        (void)nl::sum(x, 2);
        break;
      case 2:
        line = __LINE__ + 1;
        (void)nl::where(nl::greater(x, 0.0f), x, y);
        break;
      case 3:
        line = __LINE__ + 1;
        (void)nl::transpose(nl::matmul(x, y, true));
        break;
      default:
        line = __LINE__ + 1;
        (void)nl::rmsNorm(x, y);
        break;
    }
    return out;
  });
  which = 0;
  expectErrorAt(compileError(def, {{16, 8}, {16, 8}}), &line, {"nl.store", "[16, 3]", "[16, 8]"});
  which = 1;
  expectErrorAt(compileError(def, {{16, 8}, {16, 8}}), &line, {"nl.sum", "axis 2", "[16, 8]"});
  which = 2;
  expectErrorAt(compileError(def, {{16, 8}, {16, 9}}), &line, {"nl.where", "[16, 9]", "[16, 8]"});
  which = 3;
  expectErrorAt(compileError(def, {{16, 64}, {16, 40}}), &line,
                {"nl.transpose", "[64, 40]", "fits neither"});
  which = 4;
  expectErrorAt(compileError(def, {{16, 8}, {2, 8}}), &line,
                {"nl.rmsNorm", "weight", "[2, 8]", "[16, 8]"});
}

}  // namespace
}  // namespace trn::kernel
