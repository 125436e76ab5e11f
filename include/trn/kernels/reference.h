// What the CPU references of the reference kernels work on: float64 host tensors, seeded inputs
// rounded to the kernel's input dtypes (so a reference sees exactly the values the kernel sees),
// and the numerics check that compares a kernel output with its reference element by element,
// with numpy.allclose semantics as the public NKI tests use (nki-reference §8).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "trn/kernel/compiler.h"
#include "trn/numerics/dtype.h"

namespace trn::kernels {

/// A dense row-major float64 tensor on the host.
struct HostTensor {
  std::vector<std::int64_t> shape;
  std::vector<double> values;

  /// A tensor of `shape` filled with zeros.
  static HostTensor zeros(std::vector<std::int64_t> shape);

  [[nodiscard]] std::int64_t size() const { return static_cast<std::int64_t>(values.size()); }
  /// Extent of dimension `d`.
  [[nodiscard]] std::int64_t dim(std::size_t d) const { return shape.at(d); }
  double& operator[](std::int64_t i) { return values[static_cast<std::size_t>(i)]; }
  double operator[](std::int64_t i) const { return values[static_cast<std::size_t>(i)]; }
};

/// The element-wise acceptance test: |out - ref| <= atol + rtol * |ref|.
struct Tolerance {
  double atol = 1e-5;
  double rtol = 1e-5;
};

/// The unit roundoff of round-to-nearest into `dtype`: 2^-p for p significand bits (fp32 2^-24,
/// bf16 2^-8, fp16 2^-11, fp8 e4m3 2^-4); the relative error bound of one rounding.
double unitRoundoff(DType dtype);

/// How a kernel output compares with its reference.
struct Comparison {
  double maxAbsError = 0;          ///< max |out - ref|
  double maxRelError = 0;          ///< max |out - ref| / |ref| over elements with ref != 0
  std::int64_t failures = 0;       ///< elements outside the tolerance (NaN counts as outside)
  std::int64_t worstElement = -1;  ///< flat index of the element furthest outside (or closest)
  bool pass = false;
};

/// Compares `out` with `ref` (equal shapes required; a shape mismatch is a failure with
/// failures = max(size) and no errors measured).
Comparison compare(const HostTensor& out, const HostTensor& ref, Tolerance tolerance);

/// `value` as the kernel reads it from an input of `dtype` (fp32 first, then round to nearest
/// even into `dtype`).
double roundTo(double value, DType dtype);

/// Values uniform in [lo, hi) from `seed`, rounded to `spec.dtype`.
HostTensor randomInput(const kernel::TensorSpec& spec, std::uint64_t seed, double lo = -1.0,
                       double hi = 1.0);

/// One randomInput per spec, seeds seed, seed + 1, ...
std::vector<HostTensor> randomInputs(std::span<const kernel::TensorSpec> specs, std::uint64_t seed);

/// a[M, K] @ b[K, N] in float64 (2-D; K must agree).
HostTensor matmul(const HostTensor& a, const HostTensor& b);

/// a[K, M]^T @ b[K, N] in float64: the tensor engine's stationary-transposed product.
HostTensor matmulTransposedA(const HostTensor& aT, const HostTensor& b);

/// The largest extent gemm takes (BLAS counts are int).
inline constexpr std::int64_t kMaxGemmExtent = 2147483647;

/// The operands of a float64 product c[m, n] = op(a) @ op(b) + beta * c, all dense row-major:
/// op(a) is a[m, k] (or a[k, m] transposed), op(b) is b[k, n] (or b[n, k] transposed).
struct GemmShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  bool transposeA = false;
  bool transposeB = false;
  double beta = 0.0;
};

/// The product every reference builds on, through the host's BLAS (OpenBLAS dgemm): about 16x
/// faster than a plain loop nest on this class of host.
void gemm(const GemmShape& shape, const double* a, const double* b, double* c);

/// "[a, b, c]".
std::string formatShape(std::span<const std::int64_t> shape);

}  // namespace trn::kernels
