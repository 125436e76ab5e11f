// The ranges of chip values the simulator can represent (src/spec/chip_schema.cpp, docs/spec.md
// "Ranges"): the values of issue 13 that aborted or overflowed inside the old ranges are now
// rejected at their file, line and column with the key path, the value and the allowed range, and
// the bounds themselves still load.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "test_util.h"

namespace trn::spec {
namespace {

/// Loads an overlay of `base` whose line 4 onwards is `body`.
Result<ChipSpec> loadOverlay(const std::string& body, const std::string& base = "trn2") {
  return loadChipFromString(fmt::format("version: 1\nname: r\nbase: {}\n{}", base, body),
                            "r.yaml");
}

/// The one error of an overlay that must not load.
std::string overlayError(const std::string& body, const std::string& base = "trn2") {
  const Result<ChipSpec> spec = loadOverlay(body, base);
  EXPECT_FALSE(spec.ok()) << body;
  return spec.ok() ? std::string() : spec.status().message();
}

TEST(ChipRanges, SbufOfOneTebibytePerPartitionIsRejected) {
  EXPECT_EQ(overlayError("core:\n  sbuf:\n    partition_bytes: 1TiB\n"),
            "r.yaml:6:22: core.sbuf.partition_bytes: '1TiB' is out of range; expected a value in "
            "[1B, 256MiB]");
  EXPECT_EQ(overlayError("core:\n  sbuf:\n    partitions: 4096\n    partition_bytes: 256MiB\n"
                         "    total_bytes: 1TiB\n    layouts: [row_major]\n"),
            "r.yaml:8:18: core.sbuf.total_bytes: '1TiB' is out of range; expected a value in "
            "[1B, 64GiB]");
}

TEST(ChipRanges, RegistersMustFitAnInt32AndAPerSequencerFile) {
  EXPECT_EQ(overlayError("core:\n  sequencer:\n    registers: 2147483648\n"),
            "r.yaml:6:16: core.sequencer.registers: '2147483648' is out of range; expected a "
            "value in [0, 65536]");
}

TEST(ChipRanges, HundredMillionSemaphoresAreRejected) {
  EXPECT_EQ(overlayError("core:\n  sequencer:\n    semaphores: 100000000\n"),
            "r.yaml:6:17: core.sequencer.semaphores: '100000000' is out of range; expected a "
            "value in [1, 65536]");
}

TEST(ChipRanges, DmaQueuesAreBoundedByTheRaceDetector) {
  EXPECT_EQ(overlayError("core:\n  dma:\n    queues_per_engine: 19\n"),
            "r.yaml:6:24: core.dma.queues_per_engine: '19' is out of range; expected a value in "
            "[1, 18]");
}

TEST(ChipRanges, OneBytePerSecondOfHbmIsRejected) {
  EXPECT_EQ(overlayError("hbm:\n  bandwidth: 1B/s\n"),
            "r.yaml:5:14: hbm.bandwidth: '1B/s' is out of range; expected a value in [1GB/s, "
            "1000TB/s]");
  EXPECT_EQ(overlayError("core:\n  dma:\n    engine_bandwidth: 999MB/s\n"),
            "r.yaml:6:23: core.dma.engine_bandwidth: '999MB/s' is out of range; expected a value "
            "in [1GB/s, 1000TB/s]");
}

TEST(ChipRanges, ClocksCyclesAndLatenciesKeepTimeInsideInt64Picoseconds) {
  EXPECT_EQ(overlayError("core:\n  dve:\n    clock: 99MHz\n"),
            "r.yaml:6:12: core.dve.clock: '99MHz' is out of range; expected a value in [100MHz, "
            "100GHz]");
  EXPECT_EQ(overlayError("core:\n  sp:\n    clock: 101GHz\n"),
            "r.yaml:6:12: core.sp.clock: '101GHz' is out of range; expected a value in [100MHz, "
            "100GHz]");
  EXPECT_EQ(overlayError("costs:\n  min_ii: 1000001\n"),
            "r.yaml:5:11: costs.min_ii: '1000001' is out of range; expected a value in [0, "
            "1000000]");
  EXPECT_EQ(overlayError("core:\n  dma:\n    fixed_cost: 2ms\n"),
            "r.yaml:6:17: core.dma.fixed_cost: '2ms' is out of range; expected a value in [0ps, "
            "1ms]");
}

TEST(ChipRanges, DivisorsOfTheTimingModelStayAboveZero) {
  EXPECT_EQ(overlayError("core:\n  pe:\n    power_throttle:\n      start_fraction: 0\n"),
            "r.yaml:7:23: core.pe.power_throttle.start_fraction: '0' is out of range; expected a "
            "value in [0.01, 1]");
  EXPECT_EQ(overlayError("core:\n  dma:\n    compute_efficiency: 0%\n"),
            "r.yaml:6:25: core.dma.compute_efficiency: '0' is out of range; expected a value in "
            "[0.01, 1]");
  // Trn1 has no DMA transpose and records its efficiencies as 0; turning it on needs them.
  EXPECT_EQ(overlayError("core:\n  dma:\n    transpose:\n      supported: true\n"
                         "      element_bytes: [2]\n      hbm_to_sbuf_efficiency: 90%\n",
                         "trn1"),
            "r.yaml:7:18: core.dma.transpose.supported: "
            "core.dma.transpose.sbuf_to_sbuf_efficiency is 0; the DMA model divides by it, so it "
            "must be >= 0.01 when core.dma.transpose.supported is true");
}

TEST(ChipRanges, MemoriesStayFarInsideTheHostAddressSpace) {
  EXPECT_EQ(overlayError("core:\n  psum:\n    bank_bytes: 32MiB\n"),
            "r.yaml:6:17: core.psum.bank_bytes: '32MiB' is out of range; expected a value in "
            "[1B, 16MiB]");
  EXPECT_EQ(overlayError("hbm:\n  stack_capacity: 512GiB\n"),
            "r.yaml:5:19: hbm.stack_capacity: '512GiB' is out of range; expected a value in [1B, "
            "256GiB]");
  EXPECT_EQ(overlayError("hbm:\n  stacks: 65\n"),
            "r.yaml:5:11: hbm.stacks: '65' is out of range; expected a value in [1, 64]");
}

TEST(ChipRanges, TheBoundsThemselvesLoad) {
  const Result<ChipSpec> spec = loadOverlay(
      "core:\n"
      "  sequencer: {registers: 65536, semaphores: 65536, events: 65536}\n"
      "  sbuf: {partition_bytes: 256MiB, total_bytes: 32GiB}\n"
      "  dma: {queues_per_engine: 18, engine_bandwidth: 1GB/s, fixed_cost: 1ms}\n"
      "  pe: {clock: 100GHz}\n"
      "  dve: {clock: 100MHz}\n"
      "hbm: {stack_capacity: 256GiB, capacity: 1TiB, bandwidth: 1GB/s}\n"
      "costs: {min_ii: 1000000}\n");
  ASSERT_TRUE(spec.ok()) << spec.status().toString();
  EXPECT_EQ(spec->core.sequencer.registers, kMaxSequencerResources);
  EXPECT_EQ(spec->core.sequencer.semaphores, kMaxSequencerResources);
  EXPECT_EQ(spec->core.dma.queuesPerEngine, kMaxDmaQueuesPerCore);
  EXPECT_EQ(spec->core.sbuf.totalBytes, Bytes(std::int64_t{32} << 30));
  EXPECT_EQ(spec->hbm.capacity, Bytes(std::int64_t{1} << 40));
}

TEST(ChipRanges, TheRealChipsAreInsideEveryRange) {
  for (const char* chip : {"trn1", "trn2", "trn3", "examples/trn2-wide-sbuf"}) {
    const Result<ChipSpec> spec = loadChip(chip);
    EXPECT_TRUE(spec.ok()) << chip << ": " << spec.status().toString();
  }
}

}  // namespace
}  // namespace trn::spec
