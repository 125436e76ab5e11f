#include "trn/graph/pipeline.h"

#include <fmt/format.h>

#include <algorithm>

#include "trn/graph/auto_cast.h"
#include "trn/graph/conv_layout.h"
#include "trn/graph/fold.h"
#include "trn/graph/fold_batchnorm.h"
#include "trn/graph/fuse_attention.h"
#include "trn/graph/fuse_layer_norm.h"
#include "trn/graph/fuse_linear.h"
#include "trn/graph/fuse_rms_norm.h"
#include "trn/graph/fuse_rope.h"
#include "trn/graph/layout.h"
#include "trn/graph/shard.h"

namespace trn::graph {

const std::vector<std::string>& passNames() {
  static const std::vector<std::string> names = {
      "import",         "shapes",    "fold",        "fold-batchnorm",
      "fuse-attention", "layout",    "fuse-linear", "fuse-layer-norm",
      "fuse-rms-norm",  "fuse-rope", "auto-cast",   "shard"};
  return names;
}

Result<Graph> runPipeline(const std::string& path, const PipelineOptions& options) {
  for (const std::string& pass : options.dumpAfter) {
    if (std::find(passNames().begin(), passNames().end(), pass) == passNames().end()) {
      return invalidArgument(fmt::format("unknown pass '{}' (the passes are: {})", pass,
                                         fmt::join(passNames(), ", ")));
    }
  }
  if (!options.stopAfter.empty() &&
      std::find(passNames().begin(), passNames().end(), options.stopAfter) == passNames().end()) {
    return invalidArgument(fmt::format("unknown pass '{}' (the passes are: {})", options.stopAfter,
                                       fmt::join(passNames(), ", ")));
  }
  auto after = [&](const std::string& pass, const Graph& graph) {
    if (options.dump && std::find(options.dumpAfter.begin(), options.dumpAfter.end(), pass) !=
                            options.dumpAfter.end()) {
      options.dump(pass, graph);
    }
    return pass == options.stopAfter;
  };
  TRN_ASSIGN_OR_RETURN(Graph graph, importOnnx(path, options.import));
  if (after("import", graph)) {
    return graph;
  }
  TRN_RETURN_IF_ERROR(inferShapes(graph, options.shapes));
  if (after("shapes", graph)) {
    return graph;
  }
  TRN_RETURN_IF_ERROR(foldConstants(graph));
  if (after("fold", graph)) {
    return graph;
  }
  TRN_RETURN_IF_ERROR(foldBatchNorms(graph).status());
  if (after("fold-batchnorm", graph)) {
    return graph;
  }
  if (options.fuseAttention) {
    TRN_RETURN_IF_ERROR(fuseAttention(graph).status());
  }
  if (after("fuse-attention", graph)) {
    return graph;
  }
  TRN_RETURN_IF_ERROR(chooseLayouts(graph, options.layout));
  TRN_RETURN_IF_ERROR(layOutConvWeights(graph));
  if (after("layout", graph)) {
    return graph;
  }
  if (options.fusePatterns) {
    TRN_RETURN_IF_ERROR(fuseLinear(graph).status());
  }
  if (after("fuse-linear", graph)) {
    return graph;
  }
  if (options.fusePatterns) {
    TRN_RETURN_IF_ERROR(fuseLayerNorm(graph).status());
  }
  if (after("fuse-layer-norm", graph)) {
    return graph;
  }
  if (options.fusePatterns) {
    TRN_RETURN_IF_ERROR(fuseRmsNorm(graph).status());
  }
  if (after("fuse-rms-norm", graph)) {
    return graph;
  }
  if (options.fusePatterns) {
    TRN_RETURN_IF_ERROR(fuseRope(graph).status());
  }
  if (after("fuse-rope", graph)) {
    return graph;
  }
  if (options.castAll) {
    TRN_RETURN_IF_ERROR(castAll(graph, *options.castAll));
  }
  if (after("auto-cast", graph)) {
    return graph;
  }
  TRN_RETURN_IF_ERROR(shardGraph(graph, options.tensorParallel));
  after("shard", graph);
  return graph;
}

}  // namespace trn::graph
