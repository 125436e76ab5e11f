// The run report and chip summary as JSON (report_json.h): every figure under its documented
// key (docs/cli.md), times as integer picoseconds, an idle run's critical engine as null.
#include "trn/profile/report_json.h"

#include <gtest/gtest.h>

namespace trn::profile {
namespace {

TEST(ReportJson, EveryFigureUnderItsKey) {
  Report r;
  r.chip = "trn2";
  r.mode = core::RunMode::kFunctionalTiming;
  r.timed = true;
  r.total = Picoseconds(1'000'000);
  r.instructions = 7;
  r.engines[0] = {isa::Engine::kPe,
                  3,
                  Picoseconds(600'000),
                  Picoseconds(100'000),
                  Picoseconds(300'000),
                  0.6,
                  0.1,
                  0.3};
  r.dma = {2, 4096, 8, Picoseconds(250'000), 0.25, 0.5};
  r.flops = 1 << 20;
  r.achievedTflops = 1.048576;
  r.peBf16PeakTflops = 78.6;
  r.peUtilisation = 1.048576 / 78.6;
  r.hbmBytes = 4096;
  r.hbmBytesPerSecond = 4.096e9;
  r.dmaPeakBytesPerSecond = 368e9;
  r.hbmUtilisation = 4.096e9 / 368e9;
  r.criticalEngine = "pe";
  r.criticalBusy = Picoseconds(600'000);
  const nlohmann::json j = reportToJson(r);
  EXPECT_EQ(j["chip"], "trn2");
  EXPECT_EQ(j["mode"], "functional+timing");
  EXPECT_EQ(j["timed"], true);
  EXPECT_EQ(j["total_ps"], 1'000'000);
  EXPECT_EQ(j["cores"], 1);
  EXPECT_EQ(j["instructions"], 7);
  ASSERT_EQ(j["engines"].size(), static_cast<std::size_t>(isa::kNumEngines));
  const nlohmann::json& pe = j["engines"][0];
  EXPECT_EQ(pe["engine"], "pe");
  EXPECT_EQ(pe["instructions"], 3);
  EXPECT_EQ(pe["busy_ps"], 600'000);
  EXPECT_EQ(pe["waiting_ps"], 100'000);
  EXPECT_EQ(pe["idle_ps"], 300'000);
  EXPECT_EQ(pe["busy_fraction"], 0.6);
  EXPECT_EQ(j["dma"]["transfers"], 2);
  EXPECT_EQ(j["dma"]["bytes"], 4096);
  EXPECT_EQ(j["dma"]["descriptors"], 8);
  EXPECT_EQ(j["dma"]["busy_ps"], 250'000);
  EXPECT_EQ(j["dma"]["efficiency"], 0.5);
  EXPECT_EQ(j["flops"], 1 << 20);
  EXPECT_EQ(j["pe_bf16_peak_tflops"], 78.6);
  EXPECT_EQ(j["hbm_bytes"], 4096);
  EXPECT_EQ(j["dma_peak_bytes_per_second"], 368e9);
  EXPECT_EQ(j["critical_engine"], "pe");
  EXPECT_EQ(j["critical_busy_ps"], 600'000);
  EXPECT_EQ(j.size(), 18u);  // no key left out or added without docs/cli.md

  r.criticalEngine.clear();
  EXPECT_TRUE(reportToJson(r)["critical_engine"].is_null());
}

TEST(ReportJson, ChipSummary) {
  ChipSummary s;
  s.chip = "trn2";
  s.timed = true;
  s.total = Picoseconds(2'000);
  s.cores = {{0, 0, Picoseconds(2'000), 10, 0.5, 0.25, 100, 64},
             {1, 0, Picoseconds(1'500), 9, 0.4, 0.2, 80, 32}};
  s.stacks = {{0, {0, 1}, 96, 4.8e10, 7e11, 4.8e10 / 7e11}};
  s.flops = 180;
  s.mfuUsed = 0.25;
  const nlohmann::json j = chipSummaryToJson(s);
  EXPECT_EQ(j["total_ps"], 2'000);
  ASSERT_EQ(j["cores"].size(), 2u);
  EXPECT_EQ(j["cores"][1]["physical_core"], 1);
  EXPECT_EQ(j["cores"][1]["total_ps"], 1'500);
  EXPECT_EQ(j["cores"][1]["hbm_bytes"], 32);
  EXPECT_EQ(j["stacks"][0]["cores"], nlohmann::json::array({0, 1}));
  EXPECT_EQ(j["stacks"][0]["hbm_bytes"], 96);
  EXPECT_EQ(j["flops"], 180);
  EXPECT_EQ(j["mfu_used"], 0.25);
}

}  // namespace
}  // namespace trn::profile
