#include "json_output.h"

#include <cstdio>
#include <functional>
#include <numeric>
#include <string>

#include "exit_codes.h"
#include "messages.h"
#include "trn/profile/report_json.h"
#include "trnsim_version.h"

namespace trn::tools {

std::string_view versionString() {
  static const std::string version =
      std::string(kTrnsimGitDescribe).empty()
          ? std::string(kTrnsimVersion)
          : std::string(kTrnsimVersion) + " (git " + kTrnsimGitDescribe + ")";
  return version;
}

nlohmann::json jsonDocument(std::string_view command) {
  return {
      {"schema", "trnsim"},
      {"schema_version", kJsonSchemaVersion},
      {"trnsim_version", std::string(kTrnsimVersion)},
      {"command", std::string(command)},
  };
}

nlohmann::json checkResultToJson(std::string_view kernel, const harness::CheckResult& result) {
  nlohmann::json inputs = nlohmann::json::array();
  for (const kernel::TensorSpec& t : result.compiled->inputs) {
    inputs.push_back(
        {{"name", t.name}, {"shape", t.shape}, {"dtype", std::string(dtypeName(t.dtype))}});
  }
  nlohmann::json outputs = nlohmann::json::array();
  for (std::size_t i = 0; i < result.comparisons.size(); ++i) {
    const harness::Comparison& c = result.comparisons[i];
    const kernel::TensorSpec& out = result.compiled->outputs[i];
    outputs.push_back({{"name", out.name},
                       {"shape", out.shape},
                       {"dtype", std::string(dtypeName(out.dtype))},
                       {"elements", std::accumulate(out.shape.begin(), out.shape.end(),
                                                    std::int64_t{1}, std::multiplies<>())},
                       {"max_abs_error", c.maxAbsError},
                       {"max_rel_error", c.maxRelError},
                       {"failures", c.failures},
                       {"pass", c.pass}});
  }
  const kernel::CompileSummary& s = result.compiled->summary;
  const std::string bound = harness::boundBy(result);
  const nlohmann::json verdict = result.report.timed ? profile::verdictToJson(result.verdict)
                                                      : nlohmann::json(nullptr);
  return {
      {"kernel", std::string(kernel)},
      {"inputs", std::move(inputs)},
      {"compiled",
       {{"instructions", s.instructions},
        {"semaphore_waits", s.semaphoreWaits},
        {"sbuf_peak_bytes", s.sbufPeakBytes},
        {"psum_peak_bytes", s.psumPeakBytes},
        {"spills", s.spills},
        {"spill_bytes", s.spillBytes}}},
      {"numerics",
       {{"checked", result.checked},
        {"pass", result.pass},
        {"atol", result.tolerance.atol},
        {"rtol", result.tolerance.rtol},
        {"outputs", std::move(outputs)}}},
      {"useful_flops", result.usefulFlops},
      {"mfu", result.mfu},
      {"bound_by", bound.empty() ? nlohmann::json(nullptr) : nlohmann::json(bound)},
      {"verdict", verdict},
      {"report", profile::reportToJson(result.report)},
  };
}

void printJson(nlohmann::json doc, int exitCode) {
  doc["exit_code"] = exitCode;
  doc["status"] = exitCodeName(exitCode);
  std::fputs((doc.dump(2) + "\n").c_str(), stdout);
  std::fflush(stdout);
}

int reportJsonError(std::string_view command, const Status& status) {
  const int code = reportError(status);
  nlohmann::json doc = jsonDocument(command);
  doc["error"] = {{"category", std::string(errorCodeName(status.code()))},
                  {"message", status.message()}};
  printJson(std::move(doc), code);
  return code;
}

}  // namespace trn::tools
