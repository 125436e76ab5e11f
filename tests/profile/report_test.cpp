#include "trn/profile/report.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "trn/spec/loader.h"

namespace trn::profile {
namespace {

constexpr std::int64_t kNs = 1000;  // picoseconds per nanosecond

spec::ChipSpec loadTrn2() {
  Result<spec::ChipSpec> chip = spec::loadChip("trn2");
  TRN_CHECK(chip.ok()) << chip.status().toString();
  return std::move(chip).value();
}

const spec::ChipSpec& trn2() {
  static const spec::ChipSpec kChip = loadTrn2();
  return kChip;
}

core::EngineTotals& totals(core::RunStats& stats, isa::Engine engine) {
  return stats.engines[static_cast<std::size_t>(engine)];
}

const EngineUsage& usage(const Report& report, isa::Engine engine) {
  return report.engines[static_cast<std::size_t>(engine)];
}

/// A timed run of 1000 ns: PE busy 600 ns and waiting 100 ns; ACT busy 200 ns and waiting
/// 500 ns; SP busy 50 ns; DVE and POOL unused; DMA moving data for 800 ns.
core::RunStats timedStats() {
  core::RunStats stats;
  stats.mode = core::RunMode::kFunctionalTiming;
  stats.total = Picoseconds(1000 * kNs);
  stats.instructions = 7;
  totals(stats, isa::Engine::kPe) = {3, Picoseconds(600 * kNs), Picoseconds(100 * kNs)};
  totals(stats, isa::Engine::kAct) = {1, Picoseconds(200 * kNs), Picoseconds(500 * kNs)};
  totals(stats, isa::Engine::kSp) = {3, Picoseconds(50 * kNs), Picoseconds(0)};
  stats.dma.transfers = 3;
  stats.dma.bytes = 200'000;
  stats.dma.hbmBytes = 184'000;
  stats.dma.descriptors = 384;
  stats.dma.busy = Picoseconds(800 * kNs);
  stats.flops = 2LL * 128 * 128 * 512;
  return stats;
}

TEST(ProfileReport, Trn2PeaksComeFromTheChipDescription) {
  ASSERT_EQ(trn2().core.pe.rows, 128);
  ASSERT_EQ(trn2().core.pe.columns, 128);
  ASSERT_EQ(trn2().core.pe.clock.count(), 2'400'000'000);
  ASSERT_EQ(trn2().core.dma.enginesPerCore, 16);
  ASSERT_EQ(trn2().core.dma.engineBandwidth.count(), 23'000'000'000);  // 23 B/ns

  const Report report = makeReport(timedStats(), trn2());
  EXPECT_EQ(report.chip, "trn2");
  EXPECT_DOUBLE_EQ(report.peBf16PeakTflops, 128.0 * 128 * 2 * 2.4e9 / 1e12);  // 78.6432
  EXPECT_DOUBLE_EQ(report.dmaPeakBytesPerSecond, 16 * 23e9);                  // 368 GB/s
}

TEST(ProfileReport, EngineTimeSplitsIntoBusyWaitingAndIdle) {
  const Report report = makeReport(timedStats(), trn2());
  EXPECT_TRUE(report.timed);
  EXPECT_EQ(report.total, Picoseconds(1000 * kNs));
  EXPECT_EQ(report.instructions, 7u);

  const EngineUsage& pe = usage(report, isa::Engine::kPe);
  EXPECT_EQ(pe.engine, isa::Engine::kPe);
  EXPECT_EQ(pe.instructions, 3u);
  EXPECT_EQ(pe.busy, Picoseconds(600 * kNs));
  EXPECT_EQ(pe.waiting, Picoseconds(100 * kNs));
  EXPECT_EQ(pe.idle, Picoseconds(300 * kNs));
  EXPECT_DOUBLE_EQ(pe.busyFraction, 0.6);
  EXPECT_DOUBLE_EQ(pe.waitingFraction, 0.1);
  EXPECT_DOUBLE_EQ(pe.idleFraction, 0.3);

  const EngineUsage& act = usage(report, isa::Engine::kAct);
  EXPECT_EQ(act.instructions, 1u);
  EXPECT_EQ(act.idle, Picoseconds(300 * kNs));
  EXPECT_DOUBLE_EQ(act.busyFraction, 0.2);
  EXPECT_DOUBLE_EQ(act.waitingFraction, 0.5);

  const EngineUsage& sp = usage(report, isa::Engine::kSp);
  EXPECT_EQ(sp.idle, Picoseconds(950 * kNs));
  EXPECT_DOUBLE_EQ(sp.busyFraction, 0.05);
  EXPECT_DOUBLE_EQ(sp.idleFraction, 0.95);

  const EngineUsage& dve = usage(report, isa::Engine::kDve);
  EXPECT_EQ(dve.instructions, 0u);
  EXPECT_EQ(dve.busy, Picoseconds(0));
  EXPECT_EQ(dve.idle, Picoseconds(1000 * kNs));
  EXPECT_DOUBLE_EQ(dve.idleFraction, 1.0);
  EXPECT_EQ(usage(report, isa::Engine::kPool).engine, isa::Engine::kPool);
}

TEST(ProfileReport, IdleTimeIsNeverNegative) {
  core::RunStats stats = timedStats();
  totals(stats, isa::Engine::kAct) = {1, Picoseconds(700 * kNs), Picoseconds(400 * kNs)};
  const Report report = makeReport(stats, trn2());
  const EngineUsage& act = usage(report, isa::Engine::kAct);
  EXPECT_EQ(act.idle, Picoseconds(0));
  EXPECT_DOUBLE_EQ(act.idleFraction, 0.0);
  EXPECT_DOUBLE_EQ(act.busyFraction, 0.7);
  EXPECT_DOUBLE_EQ(act.waitingFraction, 0.4);
}

TEST(ProfileReport, ComputeRateAndPeUtilisation) {
  const Report report = makeReport(timedStats(), trn2());
  const double flops = 2.0 * 128 * 128 * 512;  // 16,777,216
  const double seconds = 1000e-9;
  EXPECT_EQ(report.flops, 16'777'216);
  EXPECT_DOUBLE_EQ(report.achievedTflops, flops / seconds / 1e12);  // 16.777216
  const double peakFlopsPerSecond = 128.0 * 128 * 2 * 2.4e9;
  EXPECT_DOUBLE_EQ(report.peUtilisation, flops / seconds / peakFlopsPerSecond);
  EXPECT_NEAR(report.peUtilisation, 0.21333, 1e-5);
}

TEST(ProfileReport, PeUtilisationCanExceedTheBf16Peak) {
  core::RunStats stats = timedStats();
  // Twice the BF16 peak for 1000 ns, as FP8 double-row matmuls can do.
  stats.flops = 2 * 78'643'200;
  const Report report = makeReport(stats, trn2());
  EXPECT_DOUBLE_EQ(report.peUtilisation, 2.0);
}

TEST(ProfileReport, HbmBandwidthAndDmaEfficiency) {
  const Report report = makeReport(timedStats(), trn2());
  EXPECT_EQ(report.hbmBytes, 184'000);
  // 184,000 B in 1 us = 184 GB/s = half of 16 x 23 GB/s.
  EXPECT_DOUBLE_EQ(report.hbmBytesPerSecond, 184e9);
  EXPECT_DOUBLE_EQ(report.hbmUtilisation, 0.5);

  const DmaUsage& dma = report.dma;
  EXPECT_EQ(dma.transfers, 3u);
  EXPECT_EQ(dma.bytes, 200'000);
  EXPECT_EQ(dma.descriptors, 384);
  EXPECT_EQ(dma.busy, Picoseconds(800 * kNs));
  EXPECT_DOUBLE_EQ(dma.busyFraction, 0.8);
  // 200,000 B over 800 ns against 368 B/ns: 200,000 / 294,400.
  EXPECT_DOUBLE_EQ(dma.efficiency, 200'000.0 / (800 * 368.0));
}

TEST(ProfileReport, DmaEfficiencyIsZeroWhenDmaNeverMoved) {
  core::RunStats stats = timedStats();
  stats.dma = {};
  const Report report = makeReport(stats, trn2());
  EXPECT_DOUBLE_EQ(report.dma.efficiency, 0.0);
  EXPECT_DOUBLE_EQ(report.hbmUtilisation, 0.0);
}

TEST(ProfileReport, CriticalEngineIsTheBusiest) {
  // DMA (800 ns) beats PE (600 ns).
  const Report withDma = makeReport(timedStats(), trn2());
  EXPECT_EQ(withDma.criticalEngine, "dma");
  EXPECT_EQ(withDma.criticalBusy, Picoseconds(800 * kNs));

  core::RunStats stats = timedStats();
  stats.dma.busy = Picoseconds(100 * kNs);
  const Report withPe = makeReport(stats, trn2());
  EXPECT_EQ(withPe.criticalEngine, "pe");
  EXPECT_EQ(withPe.criticalBusy, Picoseconds(600 * kNs));
}

TEST(ProfileReport, CriticalEngineTiesGoToEngineOrder) {
  core::RunStats stats = timedStats();
  totals(stats, isa::Engine::kAct).busy = Picoseconds(800 * kNs);
  totals(stats, isa::Engine::kPool).busy = Picoseconds(800 * kNs);
  // ACT, POOL and DMA all 800 ns: ACT comes first.
  EXPECT_EQ(makeReport(stats, trn2()).criticalEngine, "act");

  totals(stats, isa::Engine::kPe).busy = Picoseconds(800 * kNs);
  EXPECT_EQ(makeReport(stats, trn2()).criticalEngine, "pe");
}

TEST(ProfileReport, NothingBusyHasNoCriticalEngine) {
  core::RunStats stats;
  stats.mode = core::RunMode::kTimingOnly;
  const Report report = makeReport(stats, trn2());
  EXPECT_TRUE(report.timed);
  EXPECT_EQ(report.criticalEngine, "");
  EXPECT_DOUBLE_EQ(report.achievedTflops, 0.0);
  EXPECT_DOUBLE_EQ(usage(report, isa::Engine::kPe).idleFraction, 0.0);
  EXPECT_NE(formatReport(report).find("none (nothing was busy)"), std::string::npos);
}

TEST(ProfileReport, FunctionalOnlyRunsKeepCountsAndHaveNoTimes) {
  core::RunStats stats;
  stats.mode = core::RunMode::kFunctionalOnly;
  stats.instructions = 4;
  totals(stats, isa::Engine::kPe).instructions = 1;
  totals(stats, isa::Engine::kAct).instructions = 1;
  totals(stats, isa::Engine::kSp).instructions = 2;
  stats.flops = 1000;
  stats.dma.transfers = 2;
  stats.dma.bytes = 4096;
  stats.dma.hbmBytes = 4096;

  const Report report = makeReport(stats, trn2());
  EXPECT_FALSE(report.timed);
  EXPECT_EQ(report.total, Picoseconds(0));
  EXPECT_EQ(report.instructions, 4u);
  EXPECT_EQ(usage(report, isa::Engine::kSp).instructions, 2u);
  EXPECT_EQ(usage(report, isa::Engine::kSp).idle, Picoseconds(0));
  EXPECT_DOUBLE_EQ(usage(report, isa::Engine::kSp).idleFraction, 0.0);
  EXPECT_EQ(report.flops, 1000);
  EXPECT_DOUBLE_EQ(report.achievedTflops, 0.0);
  EXPECT_DOUBLE_EQ(report.peUtilisation, 0.0);
  EXPECT_EQ(report.hbmBytes, 4096);
  EXPECT_DOUBLE_EQ(report.hbmUtilisation, 0.0);
  EXPECT_EQ(report.dma.transfers, 2u);
  EXPECT_DOUBLE_EQ(report.dma.efficiency, 0.0);
  EXPECT_EQ(report.criticalEngine, "");

  const std::string text = formatReport(report);
  EXPECT_NE(text.find("functional-only"), std::string::npos) << text;
  EXPECT_NE(text.find("unavailable"), std::string::npos) << text;
  EXPECT_EQ(text.find("TFLOP/s"), std::string::npos) << text;
  EXPECT_EQ(text.find("nan"), std::string::npos) << text;
}

TEST(ProfileReport, FormattedReportShowsEveryFigure) {
  const std::string text = formatReport(makeReport(timedStats(), trn2()));
  for (const std::string_view expected :
       {"trn2, functional+timing", "1.000 us (1000000 ps)", "600.000 ns", "300.000 ns", "60.0",
        "950.000 ns", "16.777 TFLOP/s", "21.3 % of the BF16 dense peak (78.6 TFLOP/s)",
        "184000 bytes moved, 184.000 GB/s; 50.0 % of the core DMA peak (368.0 GB/s)",
        "3 transfers, 200000 bytes, 384 descriptors", "efficiency 67.9 %",
        "dma (busy 800.000 ns, 80.0 % of total)"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << "missing '" << expected << "' in\n"
                                                      << text;
  }
  // One row per engine, in engine order.
  std::size_t previous = 0;
  for (const isa::Engine engine : isa::kAllEngines) {
    const std::size_t row = text.find(fmt::format("\n{:<8}", isa::engineName(engine)));
    ASSERT_NE(row, std::string::npos) << text;
    EXPECT_GT(row, previous);
    previous = row;
  }
}

}  // namespace
}  // namespace trn::profile
