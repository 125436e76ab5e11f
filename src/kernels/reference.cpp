#include "trn/kernels/reference.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <cblas.h>

#include "trn/base/check.h"
#include "trn/numerics/convert.h"

namespace trn::kernels {

HostTensor HostTensor::zeros(std::vector<std::int64_t> shape) {
  std::int64_t n = 1;
  for (const std::int64_t d : shape) {
    n *= d;
  }
  return HostTensor{std::move(shape), std::vector<double>(static_cast<std::size_t>(n), 0.0)};
}

Comparison compare(const HostTensor& out, const HostTensor& ref, Tolerance tolerance) {
  Comparison c;
  if (out.shape != ref.shape || out.values.size() != ref.values.size()) {
    c.failures = std::max(out.size(), ref.size());
    return c;
  }
  double worstExcess = -INFINITY;
  for (std::int64_t i = 0; i < out.size(); ++i) {
    const double error = std::fabs(out[i] - ref[i]);
    const double allowed = tolerance.atol + tolerance.rtol * std::fabs(ref[i]);
    if (!(error <= allowed)) {
      ++c.failures;
    }
    if (std::isnan(error)) {
      c.maxAbsError = NAN;
      c.worstElement = i;
      worstExcess = INFINITY;
      continue;
    }
    c.maxAbsError = std::max(c.maxAbsError, error);
    if (ref[i] != 0.0) {
      c.maxRelError = std::max(c.maxRelError, error / std::fabs(ref[i]));
    }
    if (error - allowed > worstExcess) {
      worstExcess = error - allowed;
      c.worstElement = i;
    }
  }
  c.pass = c.failures == 0;
  return c;
}

double unitRoundoff(DType dtype) { return std::ldexp(1.0, -(dtypeTraits(dtype).mantissaBits + 1)); }

double roundTo(double value, DType dtype) { return quantize(static_cast<float>(value), dtype); }

HostTensor randomInput(const kernel::TensorSpec& spec, std::uint64_t seed, double lo, double hi) {
  HostTensor t = HostTensor::zeros(spec.shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (double& v : t.values) {
    v = roundTo(dist(rng), spec.dtype);
  }
  return t;
}

std::vector<HostTensor> randomInputs(std::span<const kernel::TensorSpec> specs,
                                     std::uint64_t seed) {
  std::vector<HostTensor> inputs;
  inputs.reserve(specs.size());
  for (const kernel::TensorSpec& spec : specs) {
    inputs.push_back(randomInput(spec, seed++));
  }
  return inputs;
}

HostTensor matmul(const HostTensor& a, const HostTensor& b) {
  TRN_CHECK(a.shape.size() == 2 && b.shape.size() == 2 && a.dim(1) == b.dim(0))
      << "matmul of " << formatShape(a.shape) << " and " << formatShape(b.shape);
  HostTensor c = HostTensor::zeros({a.dim(0), b.dim(1)});
  gemm({.m = a.dim(0), .n = b.dim(1), .k = a.dim(1)}, a.values.data(), b.values.data(),
       c.values.data());
  return c;
}

HostTensor matmulTransposedA(const HostTensor& aT, const HostTensor& b) {
  TRN_CHECK(aT.shape.size() == 2 && b.shape.size() == 2 && aT.dim(0) == b.dim(0))
      << "matmulTransposedA of " << formatShape(aT.shape) << " and " << formatShape(b.shape);
  HostTensor c = HostTensor::zeros({aT.dim(1), b.dim(1)});
  gemm({.m = aT.dim(1), .n = b.dim(1), .k = aT.dim(0), .transposeA = true}, aT.values.data(),
       b.values.data(), c.values.data());
  return c;
}

void gemm(const GemmShape& shape, const double* a, const double* b, double* c) {
  if (shape.m == 0 || shape.n == 0) {
    return;
  }
  TRN_CHECK(shape.m <= kMaxGemmExtent && shape.n <= kMaxGemmExtent && shape.k <= kMaxGemmExtent)
      << "gemm of " << shape.m << "x" << shape.k << " by " << shape.k << "x" << shape.n
      << " exceeds BLAS's int range";
  const auto m = static_cast<blasint>(shape.m);
  const auto n = static_cast<blasint>(shape.n);
  const auto k = static_cast<blasint>(shape.k);
  cblas_dgemm(CblasRowMajor, shape.transposeA ? CblasTrans : CblasNoTrans,
              shape.transposeB ? CblasTrans : CblasNoTrans, m, n, k, 1.0, a,
              shape.transposeA ? m : k, b, shape.transposeB ? k : n, shape.beta, c, n);
}

std::string formatShape(std::span<const std::int64_t> shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    text += (i == 0 ? "" : ", ") + std::to_string(shape[i]);
  }
  return text + "]";
}

}  // namespace trn::kernels
