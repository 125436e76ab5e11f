// --json: the commands that run something (run, kernels bench, demo) can print one JSON
// document on stdout instead of their text, for scripts. Every document starts with the same
// header (schema, schema_version, trnsim_version, command) and ends with exit_code and status;
// a failing command prints a document with an "error" object (category, message) as well as the
// usual line on stderr. docs/cli.md has the schemas.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "trn/base/status.h"
#include "trn/harness/check.h"

namespace trn::tools {

/// Version of the --json documents; bumped when a field is renamed or changes meaning.
inline constexpr int kJsonSchemaVersion = 1;

/// The version string of `trnsim --version`: the project version, then git describe's when the
/// build found one ("0.1.0 (git 0d88ec5-dirty)").
std::string_view versionString();

/// A document's common header for `command` ("run", "kernels bench", "demo").
nlohmann::json jsonDocument(std::string_view command);

/// Adds exit_code and status to `doc` and prints it on stdout.
void printJson(nlohmann::json doc, int exitCode);

/// A kernel run checked against its reference: kernel name, inputs[] (name, shape, dtype),
/// compiled{}, numerics{} (checked, pass, atol, rtol, outputs[]), useful_flops, mfu, bound_by
/// and report (profile/report_json.h).
nlohmann::json checkResultToJson(std::string_view kernel, const harness::CheckResult& result);

/// Prints the error of `status` on stderr and a document for `command` with an "error" object
/// on stdout; returns the exit status.
int reportJsonError(std::string_view command, const Status& status);

}  // namespace trn::tools
