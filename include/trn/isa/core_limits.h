// The hardware limits an instruction is verified against: memory geometry and per-instruction
// tile limits of one NeuronCore. Filled from the chip description (spec module) by the core, so
// the ISA stays independent of how specs are stored; defaults are Trainium2's.
#pragma once

#include <compare>
#include <cstdint>
#include <vector>

namespace trn::isa {

/// Where an on-chip access of up to `maxPartitions` partitions may start (spec
/// core.access.start_partition_rules, hardware-trn2.md §5.1).
struct StartPartitionRule {
  std::int64_t maxPartitions = 0;
  std::vector<std::int64_t> starts;

  auto operator<=>(const StartPartitionRule&) const = default;
};

struct CoreLimits {
  std::int64_t partitions = 128;              ///< SBUF and PSUM partitions
  std::int64_t sbufPartitionBytes = 224 * 1024;
  std::int64_t psumBanks = 8;
  std::int64_t psumBankBytes = 2 * 1024;      ///< per partition
  std::int64_t hbmBytes = std::int64_t{96} << 30;  ///< device memory the program's tensors share
  std::int64_t matmulMaxContraction = 128;    ///< K (partitions of both operands)
  std::int64_t matmulMaxStationaryFree = 128; ///< M
  std::int64_t matmulMaxMovingFree = 512;     ///< N (one fp32 PSUM bank)
  std::int64_t maxFreeElementsSbuf = 65536;   ///< Vector/Scalar free size from SBUF
  std::int64_t maxFreeElementsPsum = 4096;    ///< Vector/Scalar free size from PSUM
  std::int64_t bnStatsMaxFree = 512;
  std::int32_t semaphores = 256;
  std::int32_t registers = 64;                ///< 32-bit registers per sequencer
  std::int32_t dmaQueues = 16;
  bool fp8DoubleRow = true;                   ///< NC-v3+: perf_mode=double_row
  /// NC-v4: a tensor-engine result may span PSUM banks (spec core.pe.output_spans_banks); before,
  /// it lies in one bank.
  bool peOutputSpansBanks = false;
  /// dma_transpose: bit n set when n-byte elements can be transposed by DMA (spec
  /// core.dma.transpose; NC-v3+: 2 and 4 bytes); 0 when the chip has no DMA transpose (Trn1).
  std::uint8_t dmaTransposeElementBytes = (1u << 2) | (1u << 4);
  /// Smallest PE tiling-mode tile (rows or columns) of nc_matmul tile_size: 32 on NC-v3+ (4x32
  /// tiles), 64 on NC-v2 (2x64); spec core.pe.tiling.
  std::int64_t matmulMinTile = 32;
  /// On-chip access patterns (spec core.access): free dimensions (at most kMaxFreeDims, what the
  /// program formats hold), the size and stride range of one free dimension, and the start
  /// partitions compute engines may use, by ascending partition count.
  std::int64_t maxFreeDims = 4;
  std::int64_t freeDimMaxCount = 65535;
  std::int64_t freeDimMinStride = -32768;
  std::int64_t freeDimMaxStride = 32767;
  std::vector<StartPartitionRule> startPartitionRules = {
      {32, {0, 32, 64, 96}}, {64, {0, 64}}, {128, {0}}};

  [[nodiscard]] std::int64_t psumPartitionBytes() const { return psumBanks * psumBankBytes; }
  [[nodiscard]] std::int64_t sbufBytes() const { return partitions * sbufPartitionBytes; }
  [[nodiscard]] std::int64_t psumBytes() const { return partitions * psumPartitionBytes(); }

  auto operator<=>(const CoreLimits&) const = default;
};

}  // namespace trn::isa
