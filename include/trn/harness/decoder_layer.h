// One Llama-style transformer decoder layer run as a sequence of reference kernels on one
// simulated NeuronCore: RMSNorm → QKV projection → RoPE on q and k → causal grouped-query flash
// attention → output projection with the residual → RMSNorm → SwiGLU MLP with the residual.
// Every kernel's outputs are checked against its float64 reference on the inputs it was given,
// and each step reports its simulated time, MFU and what bounds it. Between kernels the host
// only reinterprets layouts (splitting the fused QKV output into heads and merging the heads
// back), which a framework does with strided views; no arithmetic happens outside the kernels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trn/base/status.h"
#include "trn/harness/check.h"

namespace trn::harness {

struct DecoderLayerConfig {
  std::int64_t tokens = 512;
  std::int64_t hidden = 2048;
  std::int64_t heads = 32;   ///< query heads
  std::int64_t kvHeads = 4;  ///< key/value heads (grouped-query attention)
  std::int64_t headDim = 64;
  std::int64_t intermediate = 5632;  ///< MLP width
  DType dtype = DType::kBf16;        ///< activations and weights
  double ropeTheta = 10000.0;

  /// TinyLlama-1.1B's layer shapes at 512 tokens (the default above).
  static DecoderLayerConfig tinyLlama() { return {}; }
  /// A small layer for tests: 128 tokens, hidden 256, 4 query and 2 kv heads of 64, MLP 512.
  static DecoderLayerConfig small();
};

/// One kernel run of the layer.
struct LayerStep {
  std::string name;    ///< what it computes in the layer, e.g. "qkv projection"
  std::string kernel;  ///< registry name
  CheckResult result;  ///< without its inputs and outputs (the layer passes them on)
};

struct DecoderLayerRun {
  std::vector<LayerStep> steps;
  Picoseconds total;       ///< sum of the steps' simulated times (they run one after another)
  double usefulFlops = 0;  ///< sum of the steps' useful FLOPs
  double mfu = 0;          ///< usefulFlops / (total x dense BF16 peak)
  bool pass = true;        ///< every step's every output within its tolerance
  HostTensor output;       ///< the layer's output [tokens, hidden] (empty in timing-only mode)
};

/// Runs the layer in `session` on seeded inputs (`options.run.seed`) in `options.run.mode`.
/// Errors: a kernel that does not compile or run (with its step named), or a config the kernels
/// reject.
Result<DecoderLayerRun> runDecoderLayer(const runtime::Session& session,
                                        const DecoderLayerConfig& config,
                                        const CheckOptions& options = {});

}  // namespace trn::harness
