#include "trn/harness/fidelity.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "trn/harness/check.h"
#include "trn/kernels/registry.h"
#include "trn/runtime/session.h"
#include "trn/spec/loader.h"

namespace trn::harness {
namespace {

/// The NKI matmul tutorial's four steps (nki-samples tutorials/matrix_multiplication; figures in
/// nki-reference.md §7.1): [4096, 8192] @ [8192, 8192] bf16 on one NeuronCore of a Trn1.32xlarge.
PublishedMeasurement ladderStep(std::string kernel, std::string step, double milliseconds) {
  return {std::move(kernel),
          std::move(step),
          "trn1",
          {{"lhsT", {8192, 4096}, DType::kBf16}, {"rhs", {8192, 8192}, DType::kBf16}},
          milliseconds * 1e-3,
          "NKI matmul tutorial (nki-samples tutorials/matrix_multiplication), Trn1.32xlarge",
          true};
}

std::string inputsText(const std::vector<kernel::TensorSpec>& inputs) {
  std::vector<std::string> parts;
  for (const kernel::TensorSpec& spec : inputs) {
    parts.push_back(
        fmt::format("{}[{}] {}", spec.name, fmt::join(spec.shape, "×"), dtypeName(spec.dtype)));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string timeText(double seconds) {
  return seconds >= 1e-3 ? fmt::format("{:.2f} ms", seconds * 1e3)
                         : fmt::format("{:.2f} µs", seconds * 1e6);
}

/// Sessions by chip name, each chip loaded once for all the rows.
class Sessions {
 public:
  Result<const runtime::Session*> get(const std::string& chip) {
    auto it = sessions_.find(chip);
    if (it == sessions_.end()) {
      TRN_ASSIGN_OR_RETURN(spec::ChipSpec loaded, spec::loadChip(chip));
      it = sessions_
               .emplace(chip, std::make_unique<runtime::Session>(
                                  std::make_shared<const spec::ChipSpec>(std::move(loaded))))
               .first;
    }
    return it->second.get();
  }

 private:
  std::map<std::string, std::unique_ptr<runtime::Session>> sessions_;
};

/// The simulated time of `kernelName` at `inputs` on `chip`, timing-only.
Result<double> simulate(Sessions& sessions, const std::string& kernelName, const std::string& chip,
                        const std::vector<kernel::TensorSpec>& inputs) {
  const kernels::KernelEntry* entry = kernels::findKernel(kernelName);
  if (entry == nullptr) {
    return Status(ErrorCode::kNotFound, "fidelity: no kernel '" + kernelName + "'");
  }
  TRN_ASSIGN_OR_RETURN(const runtime::Session* session, sessions.get(chip));
  CheckOptions options;
  options.run.mode = core::RunMode::kTimingOnly;
  TRN_ASSIGN_OR_RETURN(const CheckResult result, checkKernel(*session, *entry, inputs, options));
  return static_cast<double>(result.stats.total.count()) * 1e-12;
}

}  // namespace

const std::vector<PublishedMeasurement>& publishedMeasurements() {
  static const std::vector<PublishedMeasurement> all = {
      ladderStep("matmul_tiled", "tiled", 51.80),
      ladderStep("matmul_hoisted", "hoisted loads", 42.96),
      ladderStep("matmul_blocked", "blocked free dimension", 22.07),
      ladderStep("matmul_optimised", "fully optimised", 6.97),
  };
  return all;
}

Result<std::vector<FidelityRow>> fidelityRows() {
  std::vector<FidelityRow> rows;
  Sessions sessions;
  for (const PublishedMeasurement& m : publishedMeasurements()) {
    FidelityRow row{m};
    TRN_ASSIGN_OR_RETURN(row.simulatedSeconds, simulate(sessions, m.kernel, m.chip, m.inputs));
    TRN_ASSIGN_OR_RETURN(row.trn2Seconds, simulate(sessions, m.kernel, "trn2", m.inputs));
    row.error = (row.simulatedSeconds - m.seconds) / m.seconds;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string fidelityTable(const std::vector<FidelityRow>& rows) {
  std::string out =
      "| kernel (published step) | chip | inputs | set | published | simulated | error | "
      "simulated on trn2 |\n|---|---|---|---|---|---|---|---|\n";
  std::map<bool, std::vector<double>> errors;  // by calibration
  for (const FidelityRow& row : rows) {
    const PublishedMeasurement& m = row.measurement;
    out += fmt::format("| `{}` ({}) | {} | {} | {} | {} | {} | {:+.0f} % | {} |\n", m.kernel,
                       m.step, m.chip, inputsText(m.inputs),
                       m.calibration ? "calibration" : "validation", timeText(m.seconds),
                       timeText(row.simulatedSeconds), row.error * 100, timeText(row.trn2Seconds));
    errors[m.calibration].push_back(std::abs(row.error));
  }
  out += "\n";
  for (const bool calibration : {true, false}) {
    const std::vector<double>& e = errors[calibration];
    const char* set = calibration ? "Calibration set" : "Validation set";
    if (e.empty()) {
      out += fmt::format("{}: no published measurement in this repository.\n", set);
      continue;
    }
    double sum = 0;
    for (const double x : e) {
      sum += x;
    }
    out += fmt::format("{}: {} measurements, mean |error| {:.0f} %, largest {:.0f} %.\n", set,
                       e.size(), sum / static_cast<double>(e.size()) * 100,
                       *std::max_element(e.begin(), e.end()) * 100);
  }
  return out;
}

}  // namespace trn::harness
