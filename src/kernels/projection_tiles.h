// Tiling helpers shared by the projection kernels (linear.cpp, mlp.cpp): the tensor-engine tile
// sizes, PSUM banks handed out in rotation, the on-chip transpose of token-major activations into
// contraction-major tiles, and a balance between the two engines that can drain PSUM.
// Internal to the kernels module.
#pragma once

#include <cstdint>
#include <optional>
#include <source_location>
#include <string>
#include <utility>
#include <vector>

#include "tile_util.h"
#include "trn/isa/enums.h"
#include "trn/kernel/kernel.h"

namespace trn::kernels::detail {

// kPartitions (tile_util.h), 128 SBUF partitions: the tensor engine's contraction (K) and
// stationary free (M) limit.
/// The tensor engine's moving free size limit: one 2 KiB PSUM bank of fp32.
inline constexpr std::int64_t kMovingMax = 512;
/// Columns of x per activation load: four K tiles, 512 KiB for 512 bf16 token rows.
inline constexpr std::int64_t kColumnBlock = 512;

inline std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

/// PSUM banks [first, first + count) handed out round-robin: each tile declared through next()
/// starts at the next bank of the rotation, so `count` consecutive tiles never share a bank and
/// the tensor engine can fill some while other engines drain the rest. The backend orders reuse
/// of a bank after the last read of its previous tile.
class PsumRotation {
 public:
  PsumRotation(kernel::Kernel& k, std::int64_t first, std::int64_t count);

  /// A new PSUM tile of at most one bank at the next bank of the rotation.
  kernel::Tensor next(std::vector<std::int64_t> shape, DType dtype, const std::string& name,
                      std::source_location loc = std::source_location::current());

 private:
  kernel::Kernel* k_;
  std::int64_t first_;
  std::int64_t count_;
  std::int64_t turn_ = 0;
};

/// Spreads PSUM-to-SBUF copies over the vector and scalar engines: each copy goes to the engine
/// whose estimated work (cycles of the cost formulas: vector n/2 from PSUM at 0.96 GHz, scalar n
/// at 1.2 GHz) ends first.
class EvacuationBalance {
 public:
  /// dst = src (cast to dst's dtype) on the vector or the scalar engine.
  void copy(const kernel::Tensor& dst, const kernel::Tensor& src,
            std::source_location loc = std::source_location::current());
  /// Counts vector-engine work done outside copy(), in nanoseconds.
  void addVectorWork(double nanoseconds) { vectorNs_ += nanoseconds; }
  /// Counts scalar-engine work done outside copy(), in nanoseconds.
  void addScalarWork(double nanoseconds) { scalarNs_ += nanoseconds; }

 private:
  double vectorNs_ = 0;
  double scalarNs_ = 0;
};

/// Rows [s0, s0 + rows) of the token-major HBM tensor x[S, K] transposed on chip into the SBUF
/// tile xT[128, KT, rows] (KT = ceil(K / 128)) with xT[p, t, s] = x[s0 + s, 128 t + p]: K on
/// partitions, ready to be the tensor engine's stationary or moving operand; rows <= 512.
/// The constructor issues the loads of the whole block (one DMA per 512 columns of all its
/// tokens, in column order, triggered by GpSimd so they queue in that order) so they run ahead;
/// transposeThrough() issues the tensor-engine transposes of 128 x 128 blocks (one K tile of
/// every token tile per PSUM bank of `psum`) and their copies to SBUF through `balance`, K tile by
/// K tile, as late as the caller likes.
class TokenBlock {
 public:
  TokenBlock(kernel::Kernel& k, const kernel::Tensor& x, std::int64_t s0, std::int64_t rows,
             PsumRotation& psum, EvacuationBalance& balance);

  /// xT in the kernel's matmul dtype of x (Kernel::matmulDType); K tile t is valid once
  /// transposeThrough(t) was called.
  [[nodiscard]] const kernel::Tensor& transposed() const { return xT_; }

  /// Transposes K tiles up to `kTile` (clamped to the last), one PSUM bank and copy per K tile
  /// (under auto-cast, each K tile of the rows is first cast to bf16 on the vector or scalar
  /// engine, so that the tensor engine transposes at the bf16 rate).
  void transposeThrough(std::int64_t kTile);

 private:
  kernel::Kernel* k_;
  PsumRotation* psum_;
  EvacuationBalance* balance_;
  std::int64_t kSize_;
  std::int64_t rows_;
  kernel::Tensor rowsTile_;  ///< x rows [min(rows, 128), token tiles, K]
  kernel::Tensor xT_;
  std::int64_t transposedTiles_ = 0;  ///< K tiles transposed so far
};

/// Rows (K tiles) [t0, t0 + count) x columns [n0, n0 + width) of the HBM matrix w[K, N] as one
/// SBUF tile [128, count, width] loaded by one DMA (tile[p, j, c] = w[128 (t0 + j) + p, n0 + c]).
/// A group with the ragged last K tile must hold only that tile; it has fewer partitions.
/// `count` K tiles of w's columns [n0, n0 + width) from K tile t0, in one DMA, in the kernel's
/// matmul dtype of w: under auto-cast an fp32 load is cast to bf16 by `casts`.
kernel::Tensor loadWeightTiles(kernel::Kernel& k, const kernel::Tensor& w, std::int64_t t0,
                               std::int64_t count, std::int64_t n0, std::int64_t width,
                               EvacuationBalance& casts);

/// Weight tiles streamed through SBUF in a fixed order of DMA groups (loadWeightTiles): when a
/// group is first asked for, the groups after it are loaded until `lookahead` K tiles of them
/// are, so the loads run that far ahead of the tensor engine (the group tiles form rings of the
/// groups live at once). The loads are triggered by the tensor engine, in its program order, on
/// its single DMA queue, so they arrive one after another in the order they are used.
class WeightStream {
 public:
  struct Group {
    kernel::Tensor w;  ///< the HBM matrix [K, N]
    std::int64_t t0 = 0;
    std::int64_t count = 1;
    std::int64_t n0 = 0;
    std::int64_t width = 0;
  };

  /// `casts` runs the bf16 casts of weights under auto-cast.
  WeightStream(kernel::Kernel& k, std::int64_t lookahead, EvacuationBalance& casts)
      : k_(&k), casts_(&casts), lookahead_(lookahead) {}

  /// Consecutive groups: [first, first + count).
  struct Range {
    std::size_t first = 0;
    std::size_t count = 0;
  };

  /// Appends the groups covering every K tile of columns [n0, n0 + width) of w, in K order
  /// (`perLoad` full K tiles per group, the ragged last K tile alone).
  Range addColumns(const kernel::Tensor& w, std::int64_t n0, std::int64_t width,
                   std::int64_t perLoad);

  /// As addColumns for two matrices of one height, their groups interleaved (a's first, b's
  /// first, a's second, ...); tiles() of the range returns them in that order.
  Range addColumnPair(const kernel::Tensor& a, const kernel::Tensor& b, std::int64_t n0,
                      std::int64_t width, std::int64_t perLoad);

  /// The K tiles [depth, width] of the `count` groups from `first` on, in K order; loads them
  /// and `lookahead` K tiles beyond them if not loaded yet. Groups must be asked for in order.
  std::vector<kernel::Tensor> tiles(std::size_t first, std::size_t count);

  /// tiles() of a range made by addColumnPair, split into a's K tiles and b's.
  std::pair<std::vector<kernel::Tensor>, std::vector<kernel::Tensor>> pairTiles(Range range);

 private:
  void loadThrough(std::size_t last);

  kernel::Kernel* k_;
  EvacuationBalance* casts_;
  std::int64_t lookahead_;
  std::vector<Group> groups_;
  std::vector<kernel::Tensor> loaded_;
};

/// One output column tile of a projection: out[s0 + s, n0 + c] = act(sum_k aT[k, s] w[k, n0 + c]
/// (+ or x r[s0 + s, n0 + c]) (+ b[n0 + c])) for s < rows <= 512, c < width <= 512, with aT the
/// SBUF tile [128, KT, rows] (K on partitions) and w's K tiles the stream's `groups`.
struct ColumnTile {
  kernel::Tensor activationsT;
  std::int64_t s0 = 0;
  std::int64_t rows = 0;
  std::int64_t n0 = 0;
  std::int64_t width = 0;
  WeightStream::Range groups;
  const kernel::Tensor* residual = nullptr;  ///< HBM r [S, N], or none
  kernel::Tensor out;                        ///< HBM out [S, N]
  /// HBM b [1, N] added to every row (one SBUF tile of its columns, broadcast over the
  /// partitions by its DMA, serves every token tile), or none; not with a residual.
  const kernel::Tensor* bias = nullptr;
  /// Applied last, on the scalar engine, to the fp32 sum (one rounding to out's dtype).
  std::optional<isa::ActivationFunction> activation;
  /// How r meets the sum: added (a residual) or multiplied (a SwiGLU MLP's gate times its up
  /// projection).
  isa::AluOp residualOp = isa::AluOp::kAdd;
};

/// Computes `tile`: every token tile (128 rows) accumulates over K in its own fp32 PSUM bank of
/// `accumulators`; the K tiles meet all token tiles in turn, so each weight tile is read once,
/// except in the last weight group, which finishes the token tiles one by one so their
/// evacuations (a copy through `balance`, or the residual or bias add on the vector engine, then
/// the activation on the scalar engine) and stores overlap the remaining matmuls. The residual
/// or bias is loaded by the vector engine half way through K. When `pending` is given, its
/// transposes are issued one K tile ahead of the matmuls.
void projectColumn(kernel::Kernel& k, const ColumnTile& tile, WeightStream& weights,
                   PsumRotation& accumulators, EvacuationBalance& balance, TokenBlock* pending);

/// "name: what is wrong" failures of the projection kernels' input checks, at `loc`.
[[noreturn]] void failInput(kernel::Kernel& k, const std::string& kernelName,
                            const std::string& message, std::source_location loc);

}  // namespace trn::kernels::detail
