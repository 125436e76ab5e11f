// Internal: the range of every number of a chip description. Every number has a range the
// simulator can represent and that is physically meaningful; the reasons are summarised in
// docs/spec.md ("Ranges"). Trn1-Trn3 values are well inside each.
#pragma once

#include <cstdint>

#include "trn/base/ratio.h"
#include "trn/base/units.h"

namespace trn::spec::detail {

/// Counts that are only compared or used in exact (overflow-checked) cost formulas.
inline constexpr std::int64_t kMaxCount = std::int64_t{1} << 32;
/// Fixed cycle costs paid per instruction (64-600 on Trn1-Trn3): at the slowest clock (kMinClock,
/// 10 ns a cycle) 10^6 cycles are 10 ms, so 10^8 such instructions stay inside int64 picoseconds.
inline constexpr std::int64_t kMaxCycles = 1'000'000;
/// Free sizes and strides in elements: one partition holds at most kMaxPartitionBytes.
inline constexpr std::int64_t kMaxElements = std::int64_t{1} << 28;
/// Per-partition SBUF: the ISA addresses a partition with int64 offsets, but the functional core
/// reserves partitions x partition_bytes of host address space for each simulated core (with up
/// to 64 cores per logical core). 256 MiB is over 1000x Trn3's 256 KiB.
inline const Bytes kMaxPartitionBytes(std::int64_t{256} << 20);
/// Per-core SBUF (Trn2: 24 MiB): 64 cores of SBUF and PSUM stay far inside a 47-bit (128 TiB)
/// user address space next to the HBM.
inline const Bytes kMaxSbufBytes(std::int64_t{64} << 30);
/// Per-partition PSUM (16 KiB on Trn1-Trn3), and one bank of it.
inline const Bytes kMaxPsumPartitionBytes(std::int64_t{16} << 20);
/// One HBM stack (24-36 GiB today) and the whole device memory: 64 stacks of 256 GiB.
inline const Bytes kMaxStackBytes(std::int64_t{256} << 30);
inline const Bytes kMaxHbmBytes(std::int64_t{16} << 40);
/// DMA engines of one core (16 on Trn1-Trn3); the DMA model keeps per-engine state per core.
inline constexpr std::int64_t kMaxDmaEngines = 256;
/// Sizes of DMA descriptors, knees and buffers (16 B-64 KiB today).
inline const Bytes kMaxDmaBytes(std::int64_t{1} << 30);
/// Engine clocks (0.96-2.8 GHz today): a cycle is 10 ps to 10 ns, so cycle counts convert to
/// picoseconds exactly enough and a long run stays far from kMaxSimulatedTime (2^62 ps, 53 days).
inline const Hertz kMinClock(100'000'000);
inline const Hertz kMaxClock(100'000'000'000);
/// Bandwidths the timing model divides by (DMA engine 17-33 GB/s, HBM 0.8-4.9 TB/s today): at
/// 1 GB/s a whole terabyte moves in 18 minutes of simulated time, far inside int64 picoseconds.
inline const BytesPerSecond kMinModelledBandwidth(1'000'000'000);
/// Every bandwidth, documented or modelled (0 = none where allowed): 1 PB/s.
inline const BytesPerSecond kMaxBandwidth(1'000'000'000'000'000);
/// Fixed latencies and time windows (15 us at most today).
inline const Picoseconds kMaxLatency(1'000'000'000);
inline const Ratio kZero(0);
inline const Ratio kOne(1);
/// A utilisation or efficiency the timing model divides by.
inline const Ratio kOnePercent = Ratio::make(1, 100).value();

}  // namespace trn::spec::detail
