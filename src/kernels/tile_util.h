// Helpers the reference kernels share (internal to the kernels module): row-tile arithmetic,
// each SPMD program instance's share of the work, input checks that fail at the kernel's line, a
// 1-D parameter vector on every partition, and loads that run ahead of the compute.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <source_location>
#include <string>

#include "trn/kernel/kernel.h"

namespace trn::kernels::detail {

/// Partitions of one SBUF tile (NKI nl.tile_size.pmax).
inline constexpr std::int64_t kPartitions = 128;

/// Rows of the tile starting at `start` when `size` rows are cut into tiles of `tile`.
inline std::int64_t clip(std::int64_t tile, std::int64_t start, std::int64_t size) {
  return std::min(tile, size - start);
}

/// A contiguous block [begin, begin + count) of a kernel's work items (rows, columns, heads, ...).
struct ProgramShare {
  std::int64_t begin = 0;
  std::int64_t count = 0;

  [[nodiscard]] std::int64_t end() const { return begin + count; }
  [[nodiscard]] bool empty() const { return count == 0; }
};

/// The share of `n` items that this SPMD program instance takes (NKI nl.program_id(0) of
/// nl.num_programs(0)): the items are cut into units of `unit` (the last one may be short), and
/// instance i of P takes the i-th of P contiguous runs of units, the first (units mod P) runs one
/// unit longer than the rest. Shares start on unit boundaries and only the one holding the last
/// unit can end short of one, so the instances cut the tiles a single instance would. With one
/// program the share is [0, n); an instance left without a unit (fewer than P units) gets count
/// 0 and should emit nothing. Only grid axis 0 splits: instances along other axes repeat it.
ProgramShare programShare(const kernel::Kernel& k, std::int64_t n, std::int64_t unit = 1);

/// True for the dtypes the normalisation kernels take (fp32, bf16, fp16).
bool isFloat16Or32(DType dtype);

/// Fails at `loc` with "<kernel>: <what> must be <rank>-D, not <shape>" unless `t` has `rank`
/// dimensions.
void requireRank(kernel::Kernel& k, const kernel::Tensor& t, int rank,
                 const std::string& kernelName, const std::string& what,
                 std::source_location loc = std::source_location::current());

/// Fails at `loc` unless `t` has a floating-point dtype of 2 or 4 bytes.
void requireFloat(kernel::Kernel& k, const kernel::Tensor& t, const std::string& kernelName,
                  const std::string& what,
                  std::source_location loc = std::source_location::current());

/// A new SBUF tile [partitions, D] holding the HBM vector `vec` [D] on every partition, in the
/// vector's dtype: the vector is loaded as one [1, D] row (one small DMA) and repeated onto the
/// partitions by K = 1 matmuls with a ones row into PSUM, 512 columns at a time (exact: every
/// output is 1 x w), copied to SBUF by the scalar engine. Unlike a stride-0 HBM row broadcast,
/// this moves the vector through DMA once, not once per partition.
kernel::Tensor broadcastOnChip(kernel::Kernel& k, const kernel::Tensor& vec,
                               std::int64_t partitions, const char* name,
                               std::source_location loc = std::source_location::current());

/// Tiles loaded `depth` tiles ahead of their use: the loads of the first `depth` tiles are traced
/// at construction, and each take() traces the load `depth` tiles further on. The load function
/// declares its tile and issues its DMA at the site it is given, one site for all tiles, so they
/// share one ring of depth + 1 buffers and the DMA queues always hold the next loads. With depth
/// 0 each tile is loaded when it is taken. take() is called at most `count` times.
class TilePrefetcher {
 public:
  using LoadFn = std::function<kernel::Tensor(std::int64_t index, std::source_location site)>;

  TilePrefetcher(std::int64_t count, std::int64_t depth, LoadFn load,
                 std::source_location site = std::source_location::current());

  /// The next tile, in index order.
  kernel::Tensor take();

 private:
  std::int64_t count_;
  std::int64_t depth_;
  std::int64_t next_ = 0;
  LoadFn load_;
  std::source_location site_;
  std::deque<kernel::Tensor> loaded_;
};

}  // namespace trn::kernels::detail
