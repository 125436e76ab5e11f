// Highway compiles this file once per SIMD target and dispatches at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/isa/matmul_kernel.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cmath>

#include "trn/base/check.h"
#include "trn/isa/matmul_kernel.h"

HWY_BEFORE_NAMESPACE();
namespace trn::isa {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// Computes a kRows x (kVecs vectors) block of the output. For every output element the k loop
/// runs in order 0..K-1 with one fused multiply-add per step, exactly like the reference.
template <std::size_t kRows, std::size_t kVecs, class D>
HWY_INLINE void computeBlock(D d, const float* stationary, std::size_t stationaryStride,
                             const float* moving, std::size_t movingStride, float* out,
                             std::size_t outStride, std::size_t depth, bool accumulate) {
  using V = hn::Vec<D>;
  const std::size_t lanes = hn::Lanes(d);
  V acc[kRows][kVecs];
  for (std::size_t r = 0; r < kRows; ++r) {
    for (std::size_t v = 0; v < kVecs; ++v) {
      acc[r][v] = hn::Zero(d);
    }
  }
  for (std::size_t k = 0; k < depth; ++k) {
    const float* movingRow = moving + k * movingStride;
    const float* stationaryRow = stationary + k * stationaryStride;
    V b[kVecs];
    for (std::size_t v = 0; v < kVecs; ++v) {
      b[v] = hn::LoadU(d, movingRow + v * lanes);
    }
    for (std::size_t r = 0; r < kRows; ++r) {
      const V a = hn::Set(d, stationaryRow[r]);
      for (std::size_t v = 0; v < kVecs; ++v) {
        acc[r][v] = hn::MulAdd(a, b[v], acc[r][v]);
      }
    }
  }
  for (std::size_t r = 0; r < kRows; ++r) {
    for (std::size_t v = 0; v < kVecs; ++v) {
      float* dst = out + r * outStride + v * lanes;
      hn::StoreU(accumulate ? hn::Add(hn::LoadU(d, dst), acc[r][v]) : acc[r][v], d, dst);
    }
  }
}

/// Dispatches a block of `rows` (1..kMaxRows) rows to the matching instantiation.
template <std::size_t kVecs, class D>
HWY_INLINE void computeRows(D d, std::size_t rows, const float* stationary,
                            std::size_t stationaryStride, const float* moving,
                            std::size_t movingStride, float* out, std::size_t outStride,
                            std::size_t depth, bool accumulate) {
  switch (rows) {
#define TRN_ROWS_CASE(n)                                                                        \
  case n:                                                                                       \
    computeBlock<n, kVecs>(d, stationary, stationaryStride, moving, movingStride, out, outStride, \
                           depth, accumulate);                                                   \
    break;
    TRN_ROWS_CASE(1)
    TRN_ROWS_CASE(2)
    TRN_ROWS_CASE(3)
    TRN_ROWS_CASE(4)
    TRN_ROWS_CASE(5)
    TRN_ROWS_CASE(6)
#undef TRN_ROWS_CASE
    default:
      TRN_UNREACHABLE() << "row block of " << rows;
  }
}

void MatmulTileImpl(const float* stationary, std::size_t stationaryStride, const float* moving,
                    std::size_t movingStride, float* out, std::size_t outStride, std::size_t depth,
                    std::size_t rows, std::size_t cols, bool accumulate) {
  constexpr std::size_t kMaxRows = 6;
  constexpr std::size_t kWideVecs = 4;
  const hn::ScalableTag<float> d;
  const std::size_t lanes = hn::Lanes(d);
  std::size_t col = 0;
  // Panels of kWideVecs vectors, then single vectors, then a scalar tail.
  for (; col + kWideVecs * lanes <= cols; col += kWideVecs * lanes) {
    for (std::size_t row = 0; row < rows; row += kMaxRows) {
      computeRows<kWideVecs>(d, std::min(kMaxRows, rows - row), stationary + row, stationaryStride,
                             moving + col, movingStride, out + row * outStride + col, outStride,
                             depth, accumulate);
    }
  }
  for (; col + lanes <= cols; col += lanes) {
    for (std::size_t row = 0; row < rows; row += kMaxRows) {
      computeRows<1>(d, std::min(kMaxRows, rows - row), stationary + row, stationaryStride,
                     moving + col, movingStride, out + row * outStride + col, outStride, depth,
                     accumulate);
    }
  }
  for (; col < cols; ++col) {
    for (std::size_t row = 0; row < rows; ++row) {
      float acc = 0.0f;
      for (std::size_t k = 0; k < depth; ++k) {
        acc = std::fma(stationary[k * stationaryStride + row], moving[k * movingStride + col], acc);
      }
      float& dst = out[row * outStride + col];
      dst = accumulate ? dst + acc : acc;
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace trn::isa
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace trn::isa {

HWY_EXPORT(MatmulTileImpl);

namespace {
void checkShapes(const MatrixView<const float>& stationary, const MatrixView<const float>& moving,
                 const MatrixView<float>& out) {
  TRN_CHECK(stationary.rows == moving.rows)
      << "contraction mismatch: stationary has " << stationary.rows << " rows, moving "
      << moving.rows;
  TRN_CHECK(out.rows == stationary.cols && out.cols == moving.cols)
      << "output is " << out.rows << "x" << out.cols << ", expected " << stationary.cols << "x"
      << moving.cols;
  TRN_CHECK(stationary.stride >= stationary.cols && moving.stride >= moving.cols &&
            out.stride >= out.cols)
      << "a row stride is smaller than its row";
}
}  // namespace

void matmulTile(MatrixView<const float> stationary, MatrixView<const float> moving,
                MatrixView<float> out, PsumWrite mode) {
  checkShapes(stationary, moving, out);
  HWY_DYNAMIC_DISPATCH(MatmulTileImpl)(stationary.data, stationary.stride, moving.data,
                                       moving.stride, out.data, out.stride, stationary.rows,
                                       out.rows, out.cols, mode == PsumWrite::kAccumulate);
}

void matmulTileReference(MatrixView<const float> stationary, MatrixView<const float> moving,
                         MatrixView<float> out, PsumWrite mode) {
  checkShapes(stationary, moving, out);
  for (std::size_t m = 0; m < out.rows; ++m) {
    for (std::size_t n = 0; n < out.cols; ++n) {
      float acc = 0.0f;
      for (std::size_t k = 0; k < stationary.rows; ++k) {
        acc = std::fma(stationary.data[k * stationary.stride + m], moving.data[k * moving.stride + n],
                       acc);
      }
      float& dst = out.data[m * out.stride + n];
      dst = mode == PsumWrite::kAccumulate ? dst + acc : acc;
    }
  }
}

}  // namespace trn::isa
#endif  // HWY_ONCE
