// A model compiled for a simulated chip, end to end: import, the graph passes (pipeline.h),
// lowering to the model kernel (lowering.h) and the kernel backend; then runs of it on a
// runtime::Session with the graph's own weights, inputs and outputs in the graph's shapes.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "trn/base/status.h"
#include "trn/graph/lowering.h"
#include "trn/graph/pipeline.h"
#include "trn/kernel/compiler.h"
#include "trn/runtime/session.h"

namespace trn::graph {

struct CompiledModel {
  LoweredModel lowered;
  std::shared_ptr<const kernel::CompiledKernel> kernel;
  /// The weights as the host arrays their tensors are filled from, in kernel input order after
  /// the graph inputs (flattened; bf16 widened to float32, which the runtime narrows back
  /// exactly; int64 narrowed to int32): converted once, read by every run.
  std::vector<runtime::NpyArray> weights;
};

/// Compiles the model at `path` for one core of the session's chip. The pipeline's stopAfter
/// must be empty (every pass runs).
Result<CompiledModel> compileModel(const runtime::Session& session, const std::string& path,
                                   const PipelineOptions& pipeline,
                                   const kernel::CompileOptions& compile = {});

/// Compiles a graph the passes have run on (shapes inferred, constants folded: runPipeline, or a
/// graph built in memory) for one core of the session's chip, with the graph's weights.
Result<CompiledModel> compileGraph(const runtime::Session& session, Graph graph,
                                   const kernel::CompileOptions& compile = {});

/// Runs a compiled model: `inputs` are the graph inputs in order, each in its graph shape
/// (ignored in timing-only mode, where they may be empty); int64 ones (token ids) are narrowed
/// to the device's int32, a value out of its range being an error. The weights come from the
/// graph. The outputs come back in graph order and shape, floating-point ones as float32.
Result<runtime::RunResult> runModel(const runtime::Session& session, const CompiledModel& model,
                                    std::span<const runtime::NpyArray> inputs,
                                    const runtime::RunOptions& options);

}  // namespace trn::graph
