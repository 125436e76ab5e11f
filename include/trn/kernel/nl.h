// The nl-level API of the kernel language (NKI's nki.language): convenience functions that
// allocate their result tiles, issue the nisa instructions that compute them and return the
// result. They follow nki-reference §4: transcendental and activation functions run on the scalar
// engine (activation), binary element-wise operations on the vector engine (tensor_tensor, or
// tensor_scalar with a per-partition column or an immediate), power on GpSimd, reductions on the
// vector engine (tensor_reduce), matmul and transpose on the tensor engine, loads and stores on
// DMA. Apart from power, the kernel's engine-assignment rules choose the engines.
//
// Conventions, the same for every function:
//  - results are new SBUF tiles (matmul and the tensor-engine transpose: PSUM tiles) of the
//    operands' dtype unless `dtype` is given; operands of different dtypes promote (float with
//    integer: the float type; otherwise fp32);
//  - shapes are checked before anything is issued, and a mismatch stops tracing with an error that
//    names both operands ("file.cpp:<line>: nl.add: ..."), at the caller's line;
//  - the last parameter is the call site: every instruction and tile the function records carries
//    it, so errors, IR dumps and the profile point at the kernel author's line.
#pragma once

#include <cstdint>
#include <optional>
#include <source_location>
#include <variant>
#include <vector>

#include "trn/kernel/kernel.h"
#include "trn/kernel/tensor.h"

namespace trn::kernel::nl {

using Loc = std::source_location;
using OptDType = std::optional<DType>;

/// One operand of an element-wise function: a tile or an fp32 scalar. A tile either has the other
/// operand's shape or is a [P, 1] column broadcast along the free dimensions. Converts implicitly
/// from a number and from a Tensor.
class Operand {
 public:
  Operand(float value) : value_(value) {}            // NOLINT(google-explicit-constructor)
  Operand(const Tensor& tensor) : value_(tensor) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] const Tensor* tensor() const { return std::get_if<Tensor>(&value_); }
  [[nodiscard]] float immediate() const { return std::get<float>(value_); }

 private:
  std::variant<float, Tensor> value_;
};

// ---- Memory -----------------------------------------------------------------------------------

/// A new SBUF tile holding the HBM view `src` (rows = partitions, at most 128; the free dimensions
/// follow), cast to `dtype` on the way (DMA).
Tensor load(const Tensor& src, OptDType dtype = std::nullopt, Loc loc = Loc::current());

/// Writes the on-chip `tile` to the HBM view `dst` (same partitions/rows and free size; a PSUM
/// tile is first copied to SBUF, since DMA cannot read PSUM).
void store(const Tensor& dst, const Tensor& tile, Loc loc = Loc::current());

/// A new SBUF tile equal to `tile`, cast to `dtype` (tensor_copy).
Tensor copy(const Tensor& tile, OptDType dtype = std::nullopt, Loc loc = Loc::current());

// ---- Creation ---------------------------------------------------------------------------------

/// A new SBUF tile of `shape` filled with `value` (memset).
Tensor full(Kernel& k, const std::vector<std::int64_t>& shape, DType dtype, float value,
            Loc loc = Loc::current());
Tensor zeros(Kernel& k, const std::vector<std::int64_t>& shape, DType dtype = DType::kFp32,
             Loc loc = Loc::current());
Tensor ones(Kernel& k, const std::vector<std::int64_t>& shape, DType dtype = DType::kFp32,
            Loc loc = Loc::current());

/// A new SBUF tile of `shape` with element [p, i] = offset + p * channelMultiplier + step * i,
/// i the row-major index over the free dimensions (GpSimd iota, int32 arithmetic, then cast).
Tensor iota(Kernel& k, const std::vector<std::int64_t>& shape, DType dtype = DType::kInt32,
            std::int64_t offset = 0, std::int64_t channelMultiplier = 0, std::int64_t step = 1,
            Loc loc = Loc::current());

// ---- Element-wise: binary ---------------------------------------------------------------------
// Each comes as (tile, tile or scalar) and (scalar, tile). The arithmetic is fp32 (vector engine;
// power on GpSimd); comparisons give 1 or 0 in the result dtype.

Tensor add(const Tensor& a, const Operand& b, OptDType dtype = std::nullopt,
           Loc loc = Loc::current());
Tensor add(float a, const Tensor& b, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor subtract(const Tensor& a, const Operand& b, OptDType dtype = std::nullopt,
                Loc loc = Loc::current());
Tensor subtract(float a, const Tensor& b, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor multiply(const Tensor& a, const Operand& b, OptDType dtype = std::nullopt,
                Loc loc = Loc::current());
Tensor multiply(float a, const Tensor& b, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor divide(const Tensor& a, const Operand& b, OptDType dtype = std::nullopt,
              Loc loc = Loc::current());
Tensor divide(float a, const Tensor& b, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor maximum(const Tensor& a, const Operand& b, OptDType dtype = std::nullopt,
               Loc loc = Loc::current());
Tensor maximum(float a, const Tensor& b, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor minimum(const Tensor& a, const Operand& b, OptDType dtype = std::nullopt,
               Loc loc = Loc::current());
Tensor minimum(float a, const Tensor& b, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor power(const Tensor& a, const Operand& b, OptDType dtype = std::nullopt,
             Loc loc = Loc::current());
Tensor power(float a, const Tensor& b, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor equal(const Tensor& a, const Operand& b, OptDType dtype = std::nullopt,
             Loc loc = Loc::current());
Tensor equal(float a, const Tensor& b, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor notEqual(const Tensor& a, const Operand& b, OptDType dtype = std::nullopt,
                Loc loc = Loc::current());
Tensor notEqual(float a, const Tensor& b, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor less(const Tensor& a, const Operand& b, OptDType dtype = std::nullopt,
            Loc loc = Loc::current());
Tensor less(float a, const Tensor& b, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor lessEqual(const Tensor& a, const Operand& b, OptDType dtype = std::nullopt,
                 Loc loc = Loc::current());
Tensor lessEqual(float a, const Tensor& b, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor greater(const Tensor& a, const Operand& b, OptDType dtype = std::nullopt,
               Loc loc = Loc::current());
Tensor greater(float a, const Tensor& b, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor greaterEqual(const Tensor& a, const Operand& b, OptDType dtype = std::nullopt,
                    Loc loc = Loc::current());
Tensor greaterEqual(float a, const Tensor& b, OptDType dtype = std::nullopt,
                    Loc loc = Loc::current());

/// cond ? a : b element by element (cond non-zero); a and b tiles of cond's shape or scalars.
/// The result dtype is that of the tile operands (fp32 when both are scalars).
Tensor where(const Tensor& cond, const Operand& a, const Operand& b, OptDType dtype = std::nullopt,
             Loc loc = Loc::current());

// ---- Element-wise: unary ----------------------------------------------------------------------
// Scalar engine (activation; evaluated in double and rounded once to fp32) except negative
// (vector engine, exact) and reciprocal (the vector engine's correctly rounded division, the
// precise one of nki-reference §4).

Tensor negative(const Tensor& x, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor reciprocal(const Tensor& x, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor abs(const Tensor& x, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor square(const Tensor& x, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor exp(const Tensor& x, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor log(const Tensor& x, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor sqrt(const Tensor& x, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor rsqrt(const Tensor& x, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor tanh(const Tensor& x, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor sigmoid(const Tensor& x, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor relu(const Tensor& x, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor gelu(const Tensor& x, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor silu(const Tensor& x, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor sin(const Tensor& x, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor erf(const Tensor& x, OptDType dtype = std::nullopt, Loc loc = Loc::current());
Tensor softplus(const Tensor& x, OptDType dtype = std::nullopt, Loc loc = Loc::current());

// ---- Reductions -------------------------------------------------------------------------------
// Over the free dimensions axis..last (axis >= 1; 1 = all of them), vector engine, folded in order
// in fp32. The result keeps dimensions 0..axis-1, then (keepdims) a 1 for each reduced dimension;
// it has at least two dimensions, so reducing all free dimensions always gives [P, 1].

Tensor sum(const Tensor& x, int axis = 1, bool keepdims = false, OptDType dtype = std::nullopt,
           Loc loc = Loc::current());
Tensor max(const Tensor& x, int axis = 1, bool keepdims = false, OptDType dtype = std::nullopt,
           Loc loc = Loc::current());
Tensor min(const Tensor& x, int axis = 1, bool keepdims = false, OptDType dtype = std::nullopt,
           Loc loc = Loc::current());
Tensor prod(const Tensor& x, int axis = 1, bool keepdims = false, OptDType dtype = std::nullopt,
            Loc loc = Loc::current());
/// sum / n, one fp32 division.
Tensor mean(const Tensor& x, int axis = 1, bool keepdims = false, OptDType dtype = std::nullopt,
            Loc loc = Loc::current());
/// Population variance (ddof 0) over all free dimensions: mean((x - mean)^2), [P, 1].
Tensor var(const Tensor& x, OptDType dtype = std::nullopt, Loc loc = Loc::current());

// ---- Tensor engine ----------------------------------------------------------------------------

/// x @ y into a new PSUM fp32 tile [M, N]. By default x is [M, K], as in NKI's
/// nki.language.matmul (transpose_x=False), and is first transposed on the tensor engine through
/// PSUM and copied back to SBUF; with transposeX, x is already [K, M] (the stationary operand) and
/// nothing is transposed. y is [K, N]. K <= 128, M <= 128, N <= 512.
Tensor matmul(const Tensor& x, const Tensor& y, bool transposeX = false, Loc loc = Loc::current());

/// dst[M, N] (+)= x @ y into the caller's PSUM tile, for the caller's own K loops: accumulate =
/// false starts the accumulation group, true adds to it. x as in matmul, with the same default
/// (x is [M, K] unless transposeX; pass true in K loops over an already transposed x to save the
/// transposes).
void matmulAccumulate(const Tensor& dst, const Tensor& x, const Tensor& y, bool accumulate,
                      bool transposeX = false, Loc loc = Loc::current());

/// data[P, F]^T, bit-exact: on the tensor engine into a new PSUM tile when data is in SBUF with
/// P, F <= 128 and 2- or 4-byte elements; otherwise on the vector engine into a new SBUF tile
/// when P, F <= 32.
Tensor transpose(const Tensor& data, Loc loc = Loc::current());

// ---- Composites -------------------------------------------------------------------------------

/// Softmax along the free dimensions: exp(x - max) with the sum fused into the activation,
/// one reciprocal per partition, one multiply.
Tensor softmax(const Tensor& x, OptDType dtype = std::nullopt, Loc loc = Loc::current());

/// x * rsqrt(mean(x^2) + eps) * weight, over the free dimension of x [P, F]; weight is [1, F]
/// (broadcast to the partitions on the tensor engine) or [P, F].
Tensor rmsNorm(const Tensor& x, const Tensor& weight, float eps = 1e-6f,
               OptDType dtype = std::nullopt, Loc loc = Loc::current());

/// (x - mean) * rsqrt(var + eps) * gamma + beta over the free dimension of x [P, F]; gamma and
/// beta are [1, F] or [P, F].
Tensor layerNorm(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps = 1e-5f,
                 OptDType dtype = std::nullopt, Loc loc = Loc::current());

/// A [1, F] tile repeated on `partitions` partitions, as a new SBUF tile of its dtype: K = 1
/// matmuls with a ones row into PSUM (exact), 512 columns at a time, copied back to SBUF.
Tensor broadcastPartitions(const Tensor& row, std::int64_t partitions, Loc loc = Loc::current());

/// The same broadcast left where the tensor engine writes it, as NKI's `broadcast_to` of a
/// one-partition tile is one TensorE instruction whose PSUM result the next instruction reads:
/// a new fp32 PSUM tile [P, F] = ones^T @ row, with `ones` a [1, P] SBUF row of 1s of the row's
/// dtype that the caller makes once (F up to what PSUM holds; 512 columns per matmul).
Tensor broadcastPartitionsInPsum(const Tensor& row, const Tensor& ones, Loc loc = Loc::current());

}  // namespace trn::kernel::nl
