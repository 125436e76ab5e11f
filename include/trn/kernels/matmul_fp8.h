// The fp8 matmul with per-column dequantisation scales of Trainium2 (after nki-samples
// `quantized_double_row_matmul`): out[M, N] = (lhsT[K, M]^T @ rhs[K, N]) * scale[None, :], both
// operands fp8 (e4m3 as Trainium2 uses it, or e5m2), scale fp32, result fp32. The tensor engine
// runs in the fp8 double-row mode (perf_mode = double_row): one instruction contracts 256 rows,
// laid out [128 partitions, 2, F] with the two halves 128 rows apart, in the time a bf16 matmul
// contracts 128, so the PE does twice the bf16 work per cycle. Every product of two fp8 values
// is exact in fp32 and the K sum accumulates in fp32 in PSUM; the scale is applied while the
// vector engine evacuates PSUM (one fp32 multiply by a partition-broadcast scale row). Sizes
// need not be multiples of the tiles: M and N tiles are clipped, and the K rows beyond the last
// multiple of 256 are contracted by ordinary (single-row) fp8 matmuls. On a chip without the
// double-row mode (Trn1, NC-v2) every pair of K tiles is two ordinary fp8 matmuls instead.
#pragma once

#include <cstdint>

#include "trn/kernel/kernel.h"

namespace trn::kernels {

/// Largest contraction the kernel takes: it keeps a K x 512 fp8 column panel of rhs on chip.
inline constexpr std::int64_t kMatmulFp8MaxK = 16384;

/// Column widths of the on-chip operand groups; 0 chooses them from K: the widest multiple of
/// 512 (panelN, at most 2048) and of 128 (blockM, at most 512) whose K x width fp8 group takes at
/// most 48 KiB and 24 KiB per partition.
struct MatmulFp8Blocking {
  std::int64_t panelN = 0;  ///< rhs columns held on chip (a multiple of 512)
  std::int64_t blockM = 0;  ///< lhsT columns loaded at once (a multiple of 128)
};

/// out[M, N] fp32 = (lhsT[K, M]^T @ rhs[K, N]) * scale[N]. rhs is held on chip in column
/// panels and loaded once, the next panel prefetched while the current one is in use; lhsT is
/// loaded once per panel in column blocks, double-buffered; each [128, 512] output tile
/// accumulates all of K in one PSUM bank.
kernel::Tensor matmulFp8Scaled(kernel::Kernel& k, kernel::Tensor lhsT, kernel::Tensor rhs,
                               kernel::Tensor scale, MatmulFp8Blocking blocking = {});

}  // namespace trn::kernels
