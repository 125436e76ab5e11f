// The demo's second part: a model exported from PyTorch (the transformer block that
// scripts/export_torch_models.py writes) through the graph compiler onto the chip, its output
// checked against PyTorch's own.
#pragma once

#include "trn/base/status.h"
#include "trn/core/timeline.h"
#include "trn/runtime/session.h"

namespace trn::tools {

/// Compiles and runs the model, prints a short report and sets `pass` false when its output is
/// outside the tolerance. A build without the model files says so and passes.
Status runDemoModel(const runtime::Session& session, core::RunMode mode, bool& pass);

}  // namespace trn::tools
