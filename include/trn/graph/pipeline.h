// The graph compiler's graph-level pass pipeline: import, shape inference, constant folding,
// batch-norm folding into convolutions, attention fusion, layout choice, pattern fusion,
// auto-cast and tensor-parallel sharding (lowering follows: lowering.h, model.h). Each pass has a
// name for --dump-after; the pipeline stops after the last pass asked for.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/graph/graph.h"
#include "trn/graph/layout.h"
#include "trn/graph/onnx_import.h"
#include "trn/graph/shape_inference.h"

namespace trn::graph {

struct PipelineOptions {
  ImportOptions import;
  ShapeOptions shapes;
  LayoutOptions layout;
  /// Run the attention fusion pass (fuse_attention.h): attention subgraphs become one
  /// trn.FlashAttention node each, lowered to the library's flash attention.
  bool fuseAttention = true;
  /// Run the pattern fusion passes: products with their bias and activation become trn.Linear
  /// nodes (fuse_linear.h), RMS norms trn.RmsNorm nodes (fuse_rms_norm.h), rotary embeddings
  /// trn.Rope nodes (fuse_rope.h).
  bool fusePatterns = true;
  /// Run the auto-cast pass (auto_cast.h, `--auto-cast all`): every fp32 computation in this
  /// type (bf16; the pass names any other as an error).
  std::optional<ElementType> castAll;
  /// Ranks of the shard pass (shard.h, `--tp N`): above 1, the graph is sharded over them.
  int tensorParallel = 1;
  /// Pass names after which the graph is handed to `dump`, in pipeline order.
  std::vector<std::string> dumpAfter;
  /// Receives the pass name and the graph after each pass in dumpAfter.
  std::function<void(std::string_view pass, const Graph&)> dump;
  /// The last pass to run (a name from passNames()); empty runs them all.
  std::string stopAfter;
};

/// The pass names, in order.
const std::vector<std::string>& passNames();

/// Imports `path` and runs the passes.
Result<Graph> runPipeline(const std::string& path, const PipelineOptions& options);

}  // namespace trn::graph
