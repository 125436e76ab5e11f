#include "trn/harness/decoder_layer.h"

#include <cmath>
#include <utility>

#include "trn/kernels/registry.h"

namespace trn::harness {

DecoderLayerConfig DecoderLayerConfig::small() {
  DecoderLayerConfig c;
  c.tokens = 128;
  c.hidden = 256;
  c.heads = 4;
  c.kvHeads = 2;
  c.headDim = 64;
  c.intermediate = 512;
  return c;
}

namespace {

using kernel::TensorSpec;

/// qkv[s, (first + h) * d + j] as [heads, tokens, d].
HostTensor splitHeads(const HostTensor& qkv, std::int64_t first, std::int64_t heads,
                      std::int64_t d) {
  const std::int64_t tokens = qkv.dim(0);
  const std::int64_t width = qkv.dim(1);
  HostTensor out = HostTensor::zeros({heads, tokens, d});
  for (std::int64_t h = 0; h < heads; ++h) {
    for (std::int64_t s = 0; s < tokens; ++s) {
      for (std::int64_t j = 0; j < d; ++j) {
        out[(h * tokens + s) * d + j] = qkv[s * width + (first + h) * d + j];
      }
    }
  }
  return out;
}

/// o[h, s, j] as [tokens, heads * d].
HostTensor mergeHeads(const HostTensor& o) {
  const std::int64_t heads = o.dim(0);
  const std::int64_t tokens = o.dim(1);
  const std::int64_t d = o.dim(2);
  HostTensor out = HostTensor::zeros({tokens, heads * d});
  for (std::int64_t h = 0; h < heads; ++h) {
    for (std::int64_t s = 0; s < tokens; ++s) {
      for (std::int64_t j = 0; j < d; ++j) {
        out[s * heads * d + h * d + j] = o[(h * tokens + s) * d + j];
      }
    }
  }
  return out;
}

/// cos (or sin) of position s times theta^(-2i/d), [tokens, d/2], rounded to fp32.
HostTensor ropeTable(std::int64_t tokens, std::int64_t d, double theta, bool sine) {
  HostTensor t = HostTensor::zeros({tokens, d / 2});
  for (std::int64_t s = 0; s < tokens; ++s) {
    for (std::int64_t i = 0; i < d / 2; ++i) {
      const double angle = static_cast<double>(s) *
                           std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(d));
      t[s * (d / 2) + i] = kernels::roundTo(sine ? std::sin(angle) : std::cos(angle), DType::kFp32);
    }
  }
  return t;
}

class LayerRunner {
 public:
  LayerRunner(const runtime::Session& session, const DecoderLayerConfig& config,
              const CheckOptions& options)
      : session_(session), c_(config), options_(options), data_(core::hasData(options.run.mode)) {}

  Result<DecoderLayerRun> run() {
    const std::int64_t s = c_.tokens;
    const std::int64_t h = c_.hidden;
    const std::int64_t d = c_.headDim;
    const std::int64_t qkvWidth = (c_.heads + 2 * c_.kvHeads) * d;
    const DType t = c_.dtype;
    const double attnScale = 1.0 / std::sqrt(static_cast<double>(h));
    const double mlpScale = 1.0 / std::sqrt(static_cast<double>(c_.intermediate));

    const TensorSpec xSpec{"x", {s, h}, t};
    const HostTensor x = input(xSpec, -1.0, 1.0);
    const HostTensor attnNorm = input({"w", {h}, t}, 0.8, 1.2);
    const HostTensor mlpNorm = input({"w", {h}, t}, 0.8, 1.2);
    const HostTensor wqkv = input({"w", {h, qkvWidth}, t}, -attnScale, attnScale);
    const HostTensor wo = input({"w", {c_.heads * d, h}, t}, -attnScale, attnScale);
    const HostTensor wg = input({"wg", {h, c_.intermediate}, t}, -attnScale, attnScale);
    const HostTensor wu = input({"wu", {h, c_.intermediate}, t}, -attnScale, attnScale);
    const HostTensor wd = input({"wd", {c_.intermediate, h}, t}, -mlpScale, mlpScale);
    const HostTensor cosTable = data_ ? ropeTable(s, d, c_.ropeTheta, false) : HostTensor{};
    const HostTensor sinTable = data_ ? ropeTable(s, d, c_.ropeTheta, true) : HostTensor{};

    TRN_ASSIGN_OR_RETURN(std::vector<HostTensor> xn, step("attention rmsnorm", "rmsnorm",
                                                          {xSpec, {"w", {h}, t}}, {x, attnNorm}));
    TRN_ASSIGN_OR_RETURN(std::vector<HostTensor> qkv,
                         step("qkv projection", "linear",
                              {{"x", {s, h}, t}, {"w", {h, qkvWidth}, t}}, {first(xn), wqkv}));
    const TensorSpec tableSpec{"cos", {s, d / 2}, DType::kFp32};
    const TensorSpec sinSpec{"sin", {s, d / 2}, DType::kFp32};
    TRN_ASSIGN_OR_RETURN(std::vector<HostTensor> q,
                         step("rope q", "rope", {{"x", {c_.heads, s, d}, t}, tableSpec, sinSpec},
                              {heads(qkv, 0, c_.heads), cosTable, sinTable}));
    TRN_ASSIGN_OR_RETURN(std::vector<HostTensor> k,
                         step("rope k", "rope", {{"x", {c_.kvHeads, s, d}, t}, tableSpec, sinSpec},
                              {heads(qkv, c_.heads, c_.kvHeads), cosTable, sinTable}));
    TRN_ASSIGN_OR_RETURN(std::vector<HostTensor> o,
                         step("causal attention", "flash_attention",
                              {{"q", {c_.heads, s, d}, t},
                               {"k", {c_.kvHeads, s, d}, t},
                               {"v", {c_.kvHeads, s, d}, t}},
                              {first(q), first(k), heads(qkv, c_.heads + c_.kvHeads, c_.kvHeads)}));
    TRN_ASSIGN_OR_RETURN(
        std::vector<HostTensor> h1,
        step("output projection + residual", "linear_residual",
             {{"x", {s, c_.heads * d}, t}, {"w", {c_.heads * d, h}, t}, {"r", {s, h}, t}},
             {data_ ? mergeHeads(first(o)) : HostTensor{}, wo, x}));
    TRN_ASSIGN_OR_RETURN(
        std::vector<HostTensor> hn,
        step("mlp rmsnorm", "rmsnorm", {{"x", {s, h}, t}, {"w", {h}, t}}, {first(h1), mlpNorm}));
    TRN_ASSIGN_OR_RETURN(std::vector<HostTensor> out, step("swiglu mlp + residual", "swiglu_mlp",
                                                           {{"x", {s, h}, t},
                                                            {"wg", {h, c_.intermediate}, t},
                                                            {"wu", {h, c_.intermediate}, t},
                                                            {"wd", {c_.intermediate, h}, t},
                                                            {"r", {s, h}, t}},
                                                           {first(hn), wg, wu, wd, first(h1)}));
    run_.output = first(out);
    const double seconds = static_cast<double>(run_.total.count()) * 1e-12;
    const double peak = run_.steps.front().result.report.peBf16PeakTflops * 1e12;
    run_.mfu = seconds > 0 && peak > 0 ? run_.usefulFlops / (seconds * peak) : 0.0;
    return std::move(run_);
  }

 private:
  /// A seeded input in [lo, hi) rounded to its dtype (nothing in timing-only mode).
  HostTensor input(const TensorSpec& spec, double lo, double hi) {
    return data_ ? kernels::randomInput(spec, options_.run.seed * 1000 + nextSeed_++, lo, hi) : HostTensor{};
  }

  HostTensor first(const std::vector<HostTensor>& outputs) const {
    return data_ ? outputs.front() : HostTensor{};
  }

  HostTensor heads(const std::vector<HostTensor>& qkv, std::int64_t firstHead,
                   std::int64_t count) const {
    return data_ ? splitHeads(qkv.front(), firstHead, count, c_.headDim) : HostTensor{};
  }

  /// Runs and checks one kernel; returns its outputs.
  Result<std::vector<HostTensor>> step(std::string name, const std::string& kernelName,
                                       std::vector<TensorSpec> specs,
                                       std::vector<HostTensor> inputs) {
    const KernelEntry* entry = kernels::findKernel(kernelName);
    if (entry == nullptr) {
      return Status(ErrorCode::kNotFound, "decoder layer step '" + name + "': no kernel '" +
                                              kernelName + "' in the registry");
    }
    if (!data_) {
      inputs.clear();
    }
    Result<CheckResult> result = checkKernel(session_, *entry, specs, options_, &cache_, inputs);
    if (!result.ok()) {
      return Status(result.status().code(), "decoder layer step '" + name + "' (" + kernelName +
                                                "): " + result.status().message());
    }
    run_.total += result->report.total;
    run_.usefulFlops += result->usefulFlops;
    run_.pass = run_.pass && result->pass;
    // The step keeps its figures and comparisons; its inputs and outputs (hundreds of MB of
    // float64 weights at the default shapes) move on or go.
    std::vector<HostTensor> outputs = std::move(result->outputs);
    result->outputs.clear();
    result->inputs.clear();
    run_.steps.push_back(LayerStep{std::move(name), kernelName, std::move(result).value()});
    return outputs;
  }

  const runtime::Session& session_;
  DecoderLayerConfig c_;
  CheckOptions options_;
  bool data_;
  kernel::KernelCache cache_;
  DecoderLayerRun run_;
  std::uint64_t nextSeed_ = 0;
};

}  // namespace

Result<DecoderLayerRun> runDecoderLayer(const runtime::Session& session,
                                        const DecoderLayerConfig& config,
                                        const CheckOptions& options) {
  if (config.tokens < 1 || config.hidden < 1 || config.heads < 1 || config.kvHeads < 1 ||
      config.headDim < 2 || config.headDim % 2 != 0 || config.intermediate < 1 ||
      config.heads % config.kvHeads != 0) {
    return invalidArgument(
        "decoder layer: tokens, hidden, heads, kv heads and MLP width must be positive, the head "
        "dimension even, and the query heads a multiple of the kv heads");
  }
  return LayerRunner(session, config, options).run();
}

}  // namespace trn::harness
