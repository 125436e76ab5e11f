#include "trn/runtime/kernel_runner.h"

#include <fmt/format.h>

#include <cstring>

#include "trn/core/neuron_core.h"
#include "trn/runtime/runner.h"

namespace trn::runtime {

Result<KernelRun> runKernel(const kernel::CompiledKernel& compiled,
                            std::span<const NpyArray> inputs, const KernelRunOptions& options) {
  if (!options.chip) {
    return Status(ErrorCode::kInvalidArgument, "running a kernel needs a chip description");
  }
  const bool data = core::hasData(options.mode);
  if (data && inputs.size() != compiled.inputs.size()) {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("kernel '{}' takes {} inputs; {} arrays were given", compiled.name,
                              compiled.inputs.size(), inputs.size()));
  }
  core::CoreOptions coreOptions;
  coreOptions.limits = coreLimits(*options.chip);
  coreOptions.mode = options.mode;
  coreOptions.chip = options.chip;
  coreOptions.seed = options.seed;
  coreOptions.poison = options.poison && data;
  coreOptions.detectRaces = options.detectRaces;
  coreOptions.record = options.record;
  coreOptions.maxInstructions = options.maxInstructions;
  TRN_ASSIGN_OR_RETURN(auto core, core::NeuronCore::create(compiled.program, coreOptions));
  if (data) {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const isa::TensorDecl& decl = compiled.program.tensors[i];
      TRN_ASSIGN_OR_RETURN(const auto bytes,
                           tensorFromNpy(decl, inputs[i], fmt::format("input '{}'", decl.name)));
      TRN_RETURN_IF_ERROR(core->setTensor(decl.name, bytes));
    }
  }
  KernelRun run;
  TRN_ASSIGN_OR_RETURN(run.stats, core->run());
  if (data) {
    for (std::size_t o = 0; o < compiled.outputs.size(); ++o) {
      const isa::TensorDecl& decl = compiled.program.tensors[compiled.inputs.size() + o];
      TRN_ASSIGN_OR_RETURN(const auto bytes, core->tensorBytes(decl.name));
      const std::optional<DType> host =
          isFloat(decl.dtype) ? std::optional<DType>(DType::kFp32) : std::nullopt;
      TRN_ASSIGN_OR_RETURN(run.outputs.emplace_back(), npyFromTensor(decl, bytes, host));
    }
  }
  return run;
}

Result<KernelRun> runKernel(const kernel::KernelDef& kernel,
                            std::span<const kernel::TensorSpec> specs,
                            std::span<const NpyArray> inputs, const KernelRunOptions& options,
                            kernel::KernelCache* cache,
                            const kernel::CompileOptions& compileOptions) {
  if (!options.chip) {
    return Status(ErrorCode::kInvalidArgument, "running a kernel needs a chip description");
  }
  const isa::CoreLimits limits = coreLimits(*options.chip);
  if (cache != nullptr) {
    TRN_ASSIGN_OR_RETURN(const auto compiled, cache->get(kernel, specs, limits, compileOptions));
    return runKernel(*compiled, inputs, options);
  }
  TRN_ASSIGN_OR_RETURN(const kernel::CompiledKernel compiled,
                       kernel::compile(kernel, specs, limits, compileOptions));
  return runKernel(compiled, inputs, options);
}

NpyArray floatArray(std::vector<std::int64_t> shape, std::span<const float> values) {
  NpyArray a;
  a.type = NpyType::kFloat32;
  a.shape = std::move(shape);
  a.data.resize(values.size() * sizeof(float));
  std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

std::vector<float> floatValues(const NpyArray& array) {
  TRN_CHECK(array.type == NpyType::kFloat32) << "floatValues needs a float32 array";
  std::vector<float> out(array.data.size() / sizeof(float));
  std::memcpy(out.data(), array.data.data(), array.data.size());
  return out;
}

}  // namespace trn::runtime
