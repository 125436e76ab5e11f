// Synthetic workloads: a generator of large programs shaped like a compiled, software-pipelined
// tile kernel (DMA loads on every queue, TensorE matmuls accumulating in PSUM, an activation,
// Vector and GpSimd element-wise work, DMA stores), with multi-buffered SBUF and PSUM slots and
// semaphores that order every cross-engine and DMA dependency. The programs are race-free and
// deadlock-free by construction; the timing benchmark and the core tests run them at any size.
#pragma once

#include <cstdint>

#include "trn/base/status.h"
#include "trn/isa/core_limits.h"
#include "trn/isa/program.h"

namespace trn::bench {

/// The shape of a generated pipeline program.
///
/// Tile t uses SBUF slot b = t % sbufSlots and PSUM bank p = t % psumSlots, and issues:
///   sp:   dma_copy   x -> xs[b][k] (contractionSteps x loadSplit partition blocks)
///   act:  dma_copy   w -> ws[b][k] (contractionSteps)
///   pe:   nc_matmul  ps[p] (+)= ws[b][k]^T @ xs[b][k], bf16 K x M and K x N into fp32 PSUM
///   pool: iota (even t) or memset (odd t) -> gs[b] (fp32)
///   act:  activation gelu ps[p] -> hs[b] (bf16)
///   dve:  tensor_tensor os[b] = hs[b] + gs[b]; tensor_scalar os[b] = os[b] * 0.5 + 0.25
///   sp:   dma_copy   os[b] -> out (storeSplit partition blocks; columns of slot b)
/// with K = M = 128 and N = 512 on Trainium2 (the chip's matmul limits and PSUM bank). Every
/// transfer goes to the next DMA queue round-robin. Each (slot, producer) pair has its own
/// semaphore, incremented by 1 per signal; consumers wait `s >= count`. All signals on one
/// semaphore are ordered by happens-before, so a wait names exactly the signals it needs (RAW,
/// WAR and WAW on every buffer, including the HBM output columns). Engines run ahead of each
/// other: the loads of a tile are issued before the compute of the previous ones.
struct GeneratorOptions {
  /// Total instructions: whole tiles (at least one), then `nop`s at the end of the Sync engine's
  /// stream to reach the count exactly.
  std::int64_t instructions = 1'000'000;
  /// SBUF buffers per operand, >= 2.
  std::int32_t sbufSlots = 4;
  /// PSUM banks the matmul results rotate through, 2..psumBanks.
  std::int32_t psumSlots = 4;
  /// Contraction steps of K rows per output tile (matmuls accumulated in one PSUM bank), >= 1.
  std::int32_t contractionSteps = 2;
  /// DMA transfers per operand-x load and per store, each a block of partitions; divides K / M.
  std::int32_t loadSplit = 2;
  std::int32_t storeSplit = 2;
  /// Column blocks of the HBM inputs that successive tiles read, >= 1.
  std::int32_t inputBlocks = 8;
  /// DMA queues used round-robin; 0 means all of them.
  std::int32_t dmaQueues = 0;
};

/// Instructions one tile issues (before the `nop` padding).
std::int64_t pipelineInstructionsPerTile(const GeneratorOptions& options);

/// Semaphores the program uses (one per SBUF slot and producer).
std::int64_t pipelineSemaphoreCount(const GeneratorOptions& options);

/// Builds the program. Error when the options are invalid or do not fit `limits` (semaphores,
/// PSUM banks, SBUF bytes per partition, DMA queues, matmul tile limits).
Result<isa::Program> generatePipelineProgram(const GeneratorOptions& options,
                                             const isa::CoreLimits& limits = {});

}  // namespace trn::bench
