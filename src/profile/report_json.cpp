#include "trn/profile/report_json.h"

#include <string>

#include "trn/isa/engine.h"

namespace trn::profile {

nlohmann::json reportToJson(const Report& report) {
  nlohmann::json engines = nlohmann::json::array();
  for (const EngineUsage& e : report.engines) {
    engines.push_back({
        {"engine", std::string(isa::engineName(e.engine))},
        {"instructions", e.instructions},
        {"busy_ps", e.busy.count()},
        {"waiting_ps", e.waiting.count()},
        {"idle_ps", e.idle.count()},
        {"busy_fraction", e.busyFraction},
        {"waiting_fraction", e.waitingFraction},
        {"idle_fraction", e.idleFraction},
    });
  }
  const DmaUsage& d = report.dma;
  return {
      {"chip", report.chip},
      {"mode", std::string(core::runModeName(report.mode))},
      {"timed", report.timed},
      {"total_ps", report.total.count()},
      {"cores", report.cores},
      {"instructions", report.instructions},
      {"engines", std::move(engines)},
      {"dma",
       {{"transfers", d.transfers},
        {"bytes", d.bytes},
        {"descriptors", d.descriptors},
        {"busy_ps", d.busy.count()},
        {"busy_fraction", d.busyFraction},
        {"efficiency", d.efficiency}}},
      {"flops", report.flops},
      {"achieved_tflops", report.achievedTflops},
      {"pe_bf16_peak_tflops", report.peBf16PeakTflops},
      {"pe_utilisation", report.peUtilisation},
      {"hbm_bytes", report.hbmBytes},
      {"hbm_bytes_per_second", report.hbmBytesPerSecond},
      {"dma_peak_bytes_per_second", report.dmaPeakBytesPerSecond},
      {"hbm_utilisation", report.hbmUtilisation},
      {"critical_engine", report.criticalEngine.empty() ? nlohmann::json(nullptr)
                                                        : nlohmann::json(report.criticalEngine)},
      {"critical_busy_ps", report.criticalBusy.count()},
  };
}

nlohmann::json verdictToJson(const Verdict& verdict) {
  return {{"bound", std::string(boundName(verdict.bound))},
          {"subject", verdict.subject},
          {"headline", verdict.headline},
          {"evidence", verdict.evidence},
          {"remedies", verdict.remedies},
          {"text", formatVerdict(verdict)}};
}

nlohmann::json chipSummaryToJson(const ChipSummary& summary) {
  nlohmann::json cores = nlohmann::json::array();
  for (const CoreSummary& c : summary.cores) {
    cores.push_back({
        {"physical_core", c.physicalCore},
        {"stack", c.stack},
        {"total_ps", c.total.count()},
        {"instructions", c.instructions},
        {"pe_busy_fraction", c.peBusyFraction},
        {"dma_busy_fraction", c.dmaBusyFraction},
        {"flops", c.flops},
        {"hbm_bytes", c.hbmBytes},
    });
  }
  nlohmann::json stacks = nlohmann::json::array();
  for (const StackSummary& s : summary.stacks) {
    stacks.push_back({
        {"stack", s.stack},
        {"cores", s.cores},
        {"hbm_bytes", s.hbmBytes},
        {"bytes_per_second", s.bytesPerSecond},
        {"peak_bytes_per_second", s.peakBytesPerSecond},
        {"utilisation", s.utilisation},
    });
  }
  return {
      {"chip", summary.chip},
      {"timed", summary.timed},
      {"total_ps", summary.total.count()},
      {"cores", std::move(cores)},
      {"stacks", std::move(stacks)},
      {"flops", summary.flops},
      {"achieved_tflops", summary.achievedTflops},
      {"used_peak_tflops", summary.usedPeakTflops},
      {"chip_peak_tflops", summary.chipPeakTflops},
      {"mfu_used", summary.mfuUsed},
      {"mfu_chip", summary.mfuChip},
  };
}

}  // namespace trn::profile
