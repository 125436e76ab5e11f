// The numerical core of TensorE emulation: one matmul tile, out[m][n] = sum_k stationary[k][m] *
// moving[k][n], computed exactly as architecture.md specifies for Trainium2. Each product is
// exact and the sum is accumulated in fp32 sequentially along the contraction index k (an fp32
// fused multiply-add chain starting from zero); the tile sum is then written to PSUM, or added to
// what PSUM holds with one fp32 addition. The result is therefore independent of how the loops
// are blocked or vectorised, bit for bit, on every host. Inputs are fp32 (narrower formats are
// widened exactly before the call). Vectorised with Highway's dynamic dispatch.
#pragma once

#include <cstddef>

namespace trn::isa {

/// Row-major fp32 matrix view: element (row, col) is at data[row * stride + col].
template <typename T>
struct MatrixView {
  T* data = nullptr;
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::size_t stride = 0;  ///< elements between consecutive rows; >= cols
};

/// How a tile result combines with the destination.
enum class PsumWrite {
  kOverwrite,   ///< first matmul of an accumulation group: out = tile
  kAccumulate,  ///< later matmuls: out = fp32(out + tile)
};

/// Computes the tile: stationary is K x M, moving is K x N, out is M x N. Requires matching
/// shapes (checked); no aliasing between out and the inputs.
void matmulTile(MatrixView<const float> stationary, MatrixView<const float> moving,
                MatrixView<float> out, PsumWrite mode);

/// The same computation written as the plain definition (three loops, std::fma). Used as the
/// bit-exact reference in tests and for tiny shapes.
void matmulTileReference(MatrixView<const float> stationary, MatrixView<const float> moving,
                         MatrixView<float> out, PsumWrite mode);

}  // namespace trn::isa
