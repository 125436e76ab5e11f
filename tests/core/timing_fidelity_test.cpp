// First-principles fidelity of the trn2 timing model (docs/timing.md "Fidelity"): a long stream
// of full-size bf16 matmuls reaches the per-core peak, narrow moving tiles hit the minimum
// initiation interval, a large HBM->SBUF copy approaches the per-core DMA bandwidth and small
// transfers are overhead-bound. The figures are printed for the documentation.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "timed_run.h"

namespace trn::core {
namespace {

/// Fraction of the dense BF16 TensorE peak reached by a stream of `count` matmuls with a
/// 128x128 stationary and a 128x`columns` moving tile (fresh stationary each time).
double matmulUtilisation(int count, int columns, const RunStats** out = nullptr) {
  const auto chip = testing::trn2();  // throttling on, as shipped
  std::string text;
  for (int i = 0; i < count; ++i) {
    text += fmt::format(
        "pe: nc_matmul dst=psum[0:128]+{}:fp32[[1,{}]] stationary=sbuf[0:128]+{}:bf16[[1,128]] "
        "moving=sbuf[0:128]+8192:bf16[[1,{}]]\n",
        (i % 8) * 2048, columns, (i % 16) * 256, columns);
  }
  static RunStats stats;
  stats = testing::runTimed(text, chip);
  if (out != nullptr) {
    *out = &stats;
  }
  const spec::TensorEngine& pe = chip->core.pe;
  const double peak = 2.0 * pe.rows * pe.columns * static_cast<double>(pe.clock.count());
  const double seconds = static_cast<double>(stats.total.count()) * 1e-12;
  return static_cast<double>(stats.flops) / seconds / peak;
}

TEST(TimingFidelity, LongBf16MatmulStreamReachesThePerCorePeak) {
  const double utilisation = matmulUtilisation(2000, 512);
  std::printf("bf16 128x128 @ 128x512 stream: %.2f %% of peak\n", 100 * utilisation);
  EXPECT_GE(utilisation, 0.95);
  EXPECT_LE(utilisation, 1.0);
}

TEST(TimingFidelity, NarrowMovingTilesHitTheMinimumInitiationInterval) {
  const auto chip = testing::trn2();
  const std::int64_t minIi = chip->core.pe.mmMinInitiationInterval;
  for (const int columns : {256, 128, 64, 32, 16}) {
    const RunStats* stats = nullptr;
    const double utilisation = matmulUtilisation(2000, columns, &stats);
    const std::int64_t cycles = stats->records.back().cycles;
    std::printf("moving %3d columns: %4lld cycles per matmul, %.2f %% of peak\n", columns,
                static_cast<long long>(cycles), 100 * utilisation);
    // max(min(64, N_stationary), N_moving): the floor binds at and below 64 columns.
    EXPECT_EQ(cycles, std::max<std::int64_t>(minIi, columns));
    if (columns < minIi) {
      EXPECT_NEAR(utilisation, static_cast<double>(columns) / static_cast<double>(minIi), 0.02);
    } else {
      EXPECT_GE(utilisation, 0.95);
    }
  }
}

/// Achieved HBM->SBUF bandwidth of `transfers` loads of 128 partitions x `bytesPerPartition`,
/// spread over `queues` queues, as a fraction of the per-core DMA bandwidth.
double loadBandwidthFraction(int transfers, std::int64_t bytesPerPartition, int queues) {
  const auto chip = testing::trn2();
  const std::int64_t n = bytesPerPartition / 2;
  std::string text = fmt::format(".tensor a input bf16 [128, {}]\n", n);
  for (int i = 0; i < transfers; ++i) {
    text += fmt::format(
        "sp: dma_copy dst=sbuf[0:128]+{}:bf16[[1,{}]] src=hbm:a:bf16[[{},128],[1,{}]] queue={}\n",
        (i % queues) * bytesPerPartition, n, n, n, i % queues);
  }
  const RunStats stats = testing::runTimed(text, chip);
  const double peak =
      static_cast<double>(chip->core.dma.enginesPerCore * chip->core.dma.engineBandwidth.count());
  const double achieved =
      static_cast<double>(stats.dma.bytes) / (static_cast<double>(stats.total.count()) * 1e-12);
  return achieved / peak;
}

TEST(TimingFidelity, LargeHbmToSbufCopyApproachesThePerCoreDmaBandwidth) {
  const double fraction = loadBandwidthFraction(32, 32768, 4);
  std::printf("32 loads of 128 x 32 KiB on 4 queues: %.1f %% of the core's DMA bandwidth\n",
              100 * fraction);
  EXPECT_GE(fraction, 0.90);
  EXPECT_LE(fraction, 1.0);
}

TEST(TimingFidelity, SmallTransfersAreOverheadBound) {
  const double fraction = loadBandwidthFraction(256, 64, 16);
  std::printf("256 loads of 128 x 64 B on 16 queues: %.1f %% of the core's DMA bandwidth\n",
              100 * fraction);
  EXPECT_LE(fraction, 0.25);
  const double medium = loadBandwidthFraction(64, 2048, 16);
  std::printf("64 loads of 128 x 2 KiB on 16 queues: %.1f %% of the core's DMA bandwidth\n",
              100 * medium);
  EXPECT_GT(medium, fraction);
}

}  // namespace
}  // namespace trn::core
