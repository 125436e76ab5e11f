#include "trn/kernels/reference.h"

#include <algorithm>
#include <cmath>
#include <random>

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
  const std::int64_t m = a.dim(0);
  const std::int64_t k = a.dim(1);
  const std::int64_t n = b.dim(1);
  HostTensor c = HostTensor::zeros({m, n});
  for (std::int64_t i = 0; i < m; ++i) {
    double* row = &c.values[static_cast<std::size_t>(i * n)];
    for (std::int64_t p = 0; p < k; ++p) {
      const double x = a[i * k + p];
      const double* brow = &b.values[static_cast<std::size_t>(p * n)];
      for (std::int64_t j = 0; j < n; ++j) {
        row[j] += x * brow[j];
      }
    }
  }
  return c;
}

HostTensor matmulTransposedA(const HostTensor& aT, const HostTensor& b) {
  TRN_CHECK(aT.shape.size() == 2 && b.shape.size() == 2 && aT.dim(0) == b.dim(0))
      << "matmulTransposedA of " << formatShape(aT.shape) << " and " << formatShape(b.shape);
  const std::int64_t k = aT.dim(0);
  const std::int64_t m = aT.dim(1);
  const std::int64_t n = b.dim(1);
  HostTensor c = HostTensor::zeros({m, n});
  for (std::int64_t p = 0; p < k; ++p) {
    const double* brow = &b.values[static_cast<std::size_t>(p * n)];
    for (std::int64_t i = 0; i < m; ++i) {
      const double x = aT[p * m + i];
      double* row = &c.values[static_cast<std::size_t>(i * n)];
      for (std::int64_t j = 0; j < n; ++j) {
        row[j] += x * brow[j];
      }
    }
  }
  return c;
}

std::string formatShape(std::span<const std::int64_t> shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    text += (i == 0 ? "" : ", ") + std::to_string(shape[i]);
  }
  return text + "]";
}

}  // namespace trn::kernels
