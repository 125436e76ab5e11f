// The run report (report.h) and the chip summary (chip_summary.h) as JSON values, for the
// command line's --json output and any other tool that wants the figures in machine-readable
// form. Times are integer picoseconds (keys ending in _ps), byte counts integers, fractions and
// rates doubles; the field names are the reports' own in snake_case. docs/cli.md lists them as
// part of the `trnsim --json` schema; a change of a name or meaning bumps kReportJsonVersion.
#pragma once

#include <nlohmann/json.hpp>

#include "trn/profile/chip_summary.h"
#include "trn/profile/report.h"
#include "trn/profile/verdict.h"

namespace trn::profile {

/// The version of the JSON layout below (and of the `trnsim --json` documents that embed it).
inline constexpr int kReportJsonVersion = 1;

/// One run report: chip, mode, timed, total_ps, cores, instructions, engines[] (engine,
/// instructions, busy_ps, waiting_ps, idle_ps and their fractions), dma{}, flops,
/// achieved_tflops, pe_bf16_peak_tflops, pe_utilisation, hbm_bytes, hbm_bytes_per_second,
/// dma_peak_bytes_per_second, hbm_utilisation, critical_engine (null when nothing was busy) and
/// critical_busy_ps.
nlohmann::json reportToJson(const Report& report);

/// A verdict (verdict.h): bound, subject, headline, evidence[], remedies[], and text (its
/// formatVerdict rendering).
nlohmann::json verdictToJson(const Verdict& verdict);

/// A chip summary: chip, timed, total_ps, cores[], stacks[], flops, achieved_tflops,
/// used_peak_tflops, chip_peak_tflops, mfu_used, mfu_chip.
nlohmann::json chipSummaryToJson(const ChipSummary& summary);

}  // namespace trn::profile
