// End-to-end tests of the nl-level kernel API (nl.h), tensor-engine and composite functions:
// matmul (with and without a transposed x, bf16, the caller's K loop), transpose, the partition
// broadcast of a row (to SBUF and left in PSUM), softmax, rmsNorm and layerNorm, each compiled for trn2, run with race
// detection and poison on and compared with float64 references within stated error bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "nl_test_util.h"
#include "trn/kernel/nl.h"

namespace trn::kernel {
namespace {

using namespace nltest;  // NOLINT(google-build-using-namespace)

// ---- Tensor engine ----------------------------------------------------------------------------

/// x[M, K] @ y[K, N] in double, from row-major arrays; `bound` receives K·u·Σ|x·y| per element,
/// the error bound of an fp32 accumulation of exact products.
std::vector<double> matmulRef(const std::vector<float>& x, const std::vector<float>& y,
                              std::int64_t m, std::int64_t k, std::int64_t n, bool xIsKM,
                              std::vector<double>& bound) {
  std::vector<double> out;
  bound.clear();
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0;
      double a = 0;
      for (std::int64_t c = 0; c < k; ++c) {
        const double xv = x[static_cast<std::size_t>(xIsKM ? c * m + i : i * k + c)];
        const double yv = y[static_cast<std::size_t>(c * n + j)];
        s += xv * yv;
        a += std::fabs(xv * yv);
      }
      out.push_back(s);
      bound.push_back(static_cast<double>(k) * kFp32Eps * a);
    }
  }
  return out;
}

void expectWithin(const std::vector<float>& out, const std::vector<double>& ref,
                  const std::vector<double>& bound, const std::string& what) {
  ASSERT_EQ(out.size(), ref.size()) << what;
  for (std::size_t i = 0; i < out.size(); ++i) {
    ASSERT_LE(std::fabs(out[i] - ref[i]), bound[i])
        << what << " element " << i << ": got " << out[i] << ", expected " << ref[i];
  }
}

TEST(Nl, MatmulWithAndWithoutTransposedX) {
  struct Case {
    std::int64_t m, k, n;
    bool transposeX;
    DType dtype;
  };
  for (const Case& c :
       {Case{80, 96, 200, true, DType::kFp32}, Case{100, 128, 512, false, DType::kFp32},
        Case{128, 128, 384, true, DType::kBf16}, Case{37, 70, 129, false, DType::kBf16}}) {
    const std::vector<std::int64_t> xShape =
        c.transposeX ? std::vector<std::int64_t>{c.k, c.m} : std::vector<std::int64_t>{c.m, c.k};
    auto x = randomValues(static_cast<std::size_t>(c.m * c.k), 16);
    auto y = randomValues(static_cast<std::size_t>(c.k * c.n), 17);
    if (c.dtype == DType::kBf16) {
      for (float& v : x) {
        v = bf16(v);
      }
      for (float& v : y) {
        v = bf16(v);
      }
    }
    auto def = makeKernel("matmul", [&c](Kernel& k, Tensor a, Tensor b) {
      const Tensor r = nl::matmul(nl::load(a), nl::load(b), c.transposeX);
      EXPECT_EQ(r.memory(), isa::Memory::kPsum);
      Tensor out = k.output("out", r.shape(), DType::kFp32);
      nl::store(out, r);
      return out;
    });
    const auto out = runOne(def, {{xShape, x, c.dtype}, {{c.k, c.n}, y, c.dtype}});
    std::vector<double> bound;
    const auto ref = matmulRef(x, y, c.m, c.k, c.n, c.transposeX, bound);
    // Products of fp32 (or bf16) values are exact in the PE; the K-term fp32 accumulation errs
    // by at most K·u·Σ|x·y|. The transpose of x is bit-exact.
    expectWithin(out, ref, bound, "matmul " + std::to_string(c.m) + "x" + std::to_string(c.k));
  }
}

TEST(Nl, MatmulAccumulateOverTheCallersKLoop) {
  const std::int64_t m = 64;
  const std::int64_t kTotal = 300;  // 128 + 128 + 44
  const std::int64_t n = 257;
  const auto x = randomValues(static_cast<std::size_t>(kTotal * m), 18);
  const auto y = randomValues(static_cast<std::size_t>(kTotal * n), 19);
  auto def = makeKernel("matmul_acc", [](Kernel& k, Tensor a, Tensor b) {
    Tensor acc = k.psum({a.shape(1), b.shape(1)}, DType::kFp32, "acc");
    for (std::int64_t c = 0; c < a.shape(0); c += 128) {
      const std::int64_t rows = std::min<std::int64_t>(128, a.shape(0) - c);
      nl::matmulAccumulate(acc, nl::load(a(ds(c, rows))), nl::load(b(ds(c, rows))), c > 0,
                           /*transposeX=*/true);
    }
    Tensor out = k.output("out", acc.shape(), DType::kFp32);
    nl::store(out, acc);
    return out;
  });
  const auto out = runOne(def, {{{kTotal, m}, x}, {{kTotal, n}, y}});
  std::vector<double> bound;
  const auto ref = matmulRef(x, y, m, kTotal, n, true, bound);
  // As for one matmul, with K the whole contraction (two more fp32 additions in PSUM).
  expectWithin(out, ref, bound, "matmulAccumulate");
}

// nl::matmul and nl::matmulAccumulate take x in one layout by default, NKI's [M, K]
// (nki.language.matmul's transpose_x=False). Until issue 17 matmulAccumulate defaulted to [K, M]:
// the same call then read x the other way round, and this kernel failed to trace.
TEST(Nl, MatmulAndMatmulAccumulateShareTheDefaultLayoutOfX) {
  const std::int64_t m = 64;
  const std::int64_t kDim = 96;
  const std::int64_t n = 130;
  const auto x = randomValues(static_cast<std::size_t>(m * kDim), 21);
  const auto y = randomValues(static_cast<std::size_t>(kDim * n), 22);
  auto def = makeKernel("matmul_defaults", [](Kernel& k, Tensor a, Tensor b) {
    const Tensor xt = nl::load(a);  // [M, K]
    const Tensor yt = nl::load(b);  // [K, N]
    const Tensor once = nl::matmul(xt, yt);
    Tensor acc = k.psum({a.shape(0), b.shape(1)}, DType::kFp32, "acc");
    nl::matmulAccumulate(acc, xt, yt, false);
    std::vector<Tensor> outs = {k.output("once", once.shape(), DType::kFp32),
                                k.output("acc", acc.shape(), DType::kFp32)};
    nl::store(outs[0], once);
    nl::store(outs[1], acc);
    return outs;
  });
  const auto outs = run(def, {{{m, kDim}, x}, {{kDim, n}, y}});
  ASSERT_EQ(outs.size(), 2u);
  std::vector<double> bound;
  const auto ref = matmulRef(x, y, m, kDim, n, false, bound);
  expectWithin(outs[0], ref, bound, "matmul by default");
  expectWithin(outs[1], ref, bound, "matmulAccumulate by default");
  EXPECT_EQ(outs[0], outs[1]);  // the same instructions on the same operands
}

TEST(Nl, TransposeOnTheTensorAndVectorEngines) {
  for (const std::vector<std::int64_t>& shape :
       {std::vector<std::int64_t>{100, 70}, {128, 128}, {20, 30}}) {
    const auto x = randomValues(static_cast<std::size_t>(count(shape)), 20);
    auto def = makeKernel("transpose", [](Kernel& k, Tensor in) {
      const Tensor t = nl::transpose(nl::load(in));  // tensor engine, into PSUM
      EXPECT_EQ(t.memory(), isa::Memory::kPsum);
      std::vector<Tensor> outs = {k.output("t", t.shape(), DType::kFp32)};
      nl::store(outs[0], t);
      if (in.shape(0) <= 32 && in.shape(1) <= 32) {
        const Tensor back = nl::transpose(t);  // a PSUM tile: the vector engine
        EXPECT_EQ(back.memory(), isa::Memory::kSbuf);
        outs.push_back(k.output("back", back.shape(), DType::kFp32));
        nl::store(outs[1], back);
      }
      return outs;
    });
    const auto outs = run(def, {{shape, x}});
    ASSERT_FALSE(outs.empty());
    std::vector<double> ref;
    for (std::int64_t j = 0; j < shape[1]; ++j) {
      for (std::int64_t i = 0; i < shape[0]; ++i) {
        ref.push_back(x[static_cast<std::size_t>(i * shape[1] + j)]);
      }
    }
    expectUlps(outs[0], ref, 0, "transpose");  // bit-exact moves
    if (outs.size() > 1) {
      expectUlps(outs[1], std::vector<double>(x.begin(), x.end()), 0, "transpose back");
    }
  }
}

// ---- Composites -------------------------------------------------------------------------------

TEST(Nl, SoftmaxAlongTheFreeDimension) {
  for (const std::vector<std::int64_t>& shape :
       {std::vector<std::int64_t>{128, 300}, {50, 1000}, {7, 3, 5}}) {
    const std::int64_t p = shape[0];
    const std::int64_t f = count(shape) / p;
    const auto x = randomValues(static_cast<std::size_t>(p * f), 21, -4.0f, 4.0f);
    auto def = makeKernel("softmax", [](Kernel& k, Tensor in) {
      const Tensor r = nl::softmax(nl::load(in));
      Tensor out = k.output("out", r.shape(), DType::kFp32);
      nl::store(out, r);
      return out;
    });
    const auto out = runOne(def, {{shape, x}});
    std::vector<double> ref;
    for (std::int64_t r = 0; r < p; ++r) {
      double hi = -INFINITY;
      for (std::int64_t j = 0; j < f; ++j) {
        hi = std::max<double>(hi, x[static_cast<std::size_t>(r * f + j)]);
      }
      double total = 0;
      for (std::int64_t j = 0; j < f; ++j) {
        total += std::exp(x[static_cast<std::size_t>(r * f + j)] - hi);
      }
      for (std::int64_t j = 0; j < f; ++j) {
        ref.push_back(std::exp(x[static_cast<std::size_t>(r * f + j)] - hi) / total);
      }
    }
    // The fp32 sum of f positive terms errs by at most f·u relative; x - max (|x - max| <= 8)
    // rounds to u·8 absolute in the exponent; exp, reciprocal and the multiply add 3 half-ulps.
    expectClose(out, ref, (static_cast<double>(f) + 8 + 3) * kFp32Eps, 0.0, "softmax");
  }
}

TEST(Nl, RmsNormWithRowAndFullWeights) {
  for (const std::vector<std::int64_t>& xShape : {std::vector<std::int64_t>{128, 256}, {45, 700}}) {
    const std::int64_t p = xShape[0];
    const std::int64_t f = xShape[1];
    for (const bool rowWeight : {true, false}) {
      const std::int64_t wp = rowWeight ? 1 : p;
      const auto x = randomValues(static_cast<std::size_t>(p * f), 22);
      const auto w = randomValues(static_cast<std::size_t>(wp * f), 23, 0.5f, 1.5f);
      auto def = makeKernel("rms_norm", [](Kernel& k, Tensor in, Tensor weight) {
        const Tensor r = nl::rmsNorm(nl::load(in), nl::load(weight), 1e-5f);
        Tensor out = k.output("out", r.shape(), DType::kFp32);
        nl::store(out, r);
        return out;
      });
      const auto out = runOne(def, {{xShape, x}, {{wp, f}, w}});
      std::vector<double> ref;
      for (std::int64_t r = 0; r < p; ++r) {
        double ss = 0;
        for (std::int64_t j = 0; j < f; ++j) {
          const double v = x[static_cast<std::size_t>(r * f + j)];
          ss += v * v;
        }
        const double rstd = 1.0 / std::sqrt(ss / static_cast<double>(f) + 1e-5);
        for (std::int64_t j = 0; j < f; ++j) {
          const double wv = w[static_cast<std::size_t>((rowWeight ? 0 : r) * f + j)];
          ref.push_back(x[static_cast<std::size_t>(r * f + j)] * rstd * wv);
        }
      }
      // The fp32 sum of f squares errs by at most f·u relative, of which rsqrt keeps half;
      // squaring, the scale 1/f, adding eps, rsqrt and two multiplies add a few half-ulps.
      expectClose(out, ref, (static_cast<double>(f) / 2 + 8) * kFp32Eps, 0.0,
                  rowWeight ? "rmsNorm [1, F]" : "rmsNorm [P, F]");
    }
  }
}

TEST(Nl, LayerNormWithRowParameters) {
  const std::int64_t p = 96;
  const std::int64_t f = 600;
  auto x = randomValues(static_cast<std::size_t>(p * f), 24);
  for (float& v : x) {
    v += 1.0f;
  }
  const auto gamma = randomValues(static_cast<std::size_t>(f), 25, 0.5f, 1.5f);
  const auto beta = randomValues(static_cast<std::size_t>(f), 26);
  auto def = makeKernel("layer_norm", [](Kernel& k, Tensor in, Tensor g, Tensor b) {
    const Tensor r = nl::layerNorm(nl::load(in), nl::load(g), nl::load(b), 1e-5f);
    Tensor out = k.output("out", r.shape(), DType::kFp32);
    nl::store(out, r);
    return out;
  });
  const auto out = runOne(def, {{{p, f}, x}, {{1, f}, gamma}, {{1, f}, beta}});
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
    const double rstd = 1.0 / std::sqrt(v / static_cast<double>(f) + 1e-5);
    for (std::int64_t j = 0; j < f; ++j) {
      ref.push_back((x[static_cast<std::size_t>(r * f + j)] - m) * rstd *
                        gamma[static_cast<std::size_t>(j)] +
                    beta[static_cast<std::size_t>(j)]);
    }
  }
  // The mean's fp32 sum errs by f·u·mean|x| (|x| <= 3): an absolute error of x - mean that rstd
  // (~0.9) and gamma (<= 1.5) scale; the variance errs by a few f·u relative. Together below
  // 4·f·u absolute plus f·u relative for outputs of magnitude ~ 5.
  expectClose(out, ref, static_cast<double>(f) * kFp32Eps, 4.0 * static_cast<double>(f) * kFp32Eps,
              "layerNorm");
}

TEST(Nl, SoftmaxAndRmsNormInALoopOverRaggedRowTiles) {
  // 300 rows in 128-row tiles (the last one 44 rows): every nl call in the loop body declares its
  // tiles at one line, which the allocator turns into multi-buffered rings, several of them
  // holding more than one temporary of the same shape; the run checks that they are race-free.
  const std::int64_t rows = 300;
  const std::int64_t f = 200;
  const auto x = randomValues(static_cast<std::size_t>(rows * f), 28);
  const auto w = randomValues(static_cast<std::size_t>(f), 29, 0.5f, 1.5f);
  auto def = makeKernel("row_loop", [](Kernel& k, Tensor in, Tensor weight) {
    Tensor soft = k.output("soft", in.shape(), DType::kFp32);
    Tensor norm = k.output("norm", in.shape(), DType::kFp32);
    const Tensor wt = nl::load(weight);
    for (std::int64_t r = 0; r < in.shape(0); r += 128) {
      const std::int64_t n = std::min<std::int64_t>(128, in.shape(0) - r);
      const Tensor t = nl::load(in(ds(r, n)));
      nl::store(soft(ds(r, n)), nl::softmax(t));
      nl::store(norm(ds(r, n)), nl::rmsNorm(t, wt));
    }
    return std::vector<Tensor>{soft, norm};
  });
  const auto outs = run(def, {{{rows, f}, x}, {{1, f}, w}});
  ASSERT_EQ(outs.size(), 2u);
  std::vector<double> soft;
  std::vector<double> norm;
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto row = [&](std::int64_t j) { return double{x[static_cast<std::size_t>(r * f + j)]}; };
    double hi = -INFINITY;
    double total = 0;
    double squares = 0;
    for (std::int64_t j = 0; j < f; ++j) {
      hi = std::max(hi, row(j));
      squares += row(j) * row(j);
    }
    for (std::int64_t j = 0; j < f; ++j) {
      total += std::exp(row(j) - hi);
    }
    const double rstd = 1.0 / std::sqrt(squares / static_cast<double>(f) + 1e-6);
    for (std::int64_t j = 0; j < f; ++j) {
      soft.push_back(std::exp(row(j) - hi) / total);
      norm.push_back(row(j) * rstd * w[static_cast<std::size_t>(j)]);
    }
  }
  // The bounds of the single-tile softmax and rmsNorm tests.
  expectClose(outs[0], soft, (static_cast<double>(f) + 11) * kFp32Eps, 0.0, "softmax loop");
  expectClose(outs[1], norm, (static_cast<double>(f) / 2 + 8) * kFp32Eps, 0.0, "rmsNorm loop");
}

TEST(Nl, BroadcastPartitionsRepeatsARow) {
  const std::int64_t f = 1100;  // three PSUM chunks of at most 512
  const auto row = randomValues(static_cast<std::size_t>(f), 27);
  auto def = makeKernel("broadcast", [](Kernel& k, Tensor in) {
    const Tensor r = nl::broadcastPartitions(nl::load(in), 100);
    Tensor out = k.output("out", r.shape(), DType::kFp32);
    nl::store(out, r);
    return out;
  });
  const auto out = runOne(def, {{{1, f}, row}});
  std::vector<double> ref;
  for (int p = 0; p < 100; ++p) {
    ref.insert(ref.end(), row.begin(), row.end());
  }
  expectUlps(out, ref, 0, "broadcast");  // one exact product per element
}

// The broadcast left where the tensor engine writes it, as NKI's broadcast_to feeds the next
// instruction: a [P, F] fp32 PSUM tile (three matmuls into one tile over three banks), exact; a
// ones row of another dtype than the row is an error at the caller's line.
TEST(Nl, BroadcastPartitionsInPsumLeavesTheRowInPsum) {
  const std::int64_t f = 1100;
  const auto row = randomValues(static_cast<std::size_t>(f), 29);
  auto def = makeKernel("broadcast_psum", [](Kernel& k, Tensor in) {
    const Tensor ones = nl::full(k, {1, 100}, DType::kFp32, 1.0f);
    const Tensor r = nl::broadcastPartitionsInPsum(nl::load(in), ones);
    EXPECT_EQ(r.memory(), isa::Memory::kPsum);
    Tensor out = k.output("out", r.shape(), DType::kFp32);
    nl::store(out, nl::copy(r));
    return out;
  });
  const auto out = runOne(def, {{{1, f}, row}});
  std::vector<double> ref;
  for (int p = 0; p < 100; ++p) {
    ref.insert(ref.end(), row.begin(), row.end());
  }
  expectUlps(out, ref, 0, "broadcast in PSUM");

  int line = 0;
  auto bad = makeKernel("broadcast_psum_bf16_ones", [&line](Kernel& k, Tensor in) {
    const Tensor ones = nl::full(k, {1, 100}, DType::kBf16, 1.0f);
    line = __LINE__ + 1;
    const Tensor r = nl::broadcastPartitionsInPsum(nl::load(in), ones);
    Tensor result = k.output("out", r.shape(), DType::kFp32);
    nl::store(result, nl::copy(r));
    return result;
  });
  const std::string message = compileError(bad, {{1, 64}});
  EXPECT_NE(message.find("nl_tensor_test.cpp:" + std::to_string(line) + ":"), std::string::npos)
      << message;
  EXPECT_NE(message.find("broadcastPartitionsInPsum"), std::string::npos) << message;
  EXPECT_NE(message.find("a [1, P] ones row of its dtype"), std::string::npos) << message;
}

}  // namespace
}  // namespace trn::kernel
