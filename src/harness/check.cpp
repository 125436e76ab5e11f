#include "trn/harness/check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <future>
#include <optional>

#include "trn/core/host_memory.h"

namespace trn::harness {

runtime::NpyArray toNpy(const HostTensor& tensor) {
  std::vector<float> values(tensor.values.begin(), tensor.values.end());
  return runtime::floatArray(tensor.shape, values);
}

HostTensor fromNpy(const runtime::NpyArray& array) {
  HostTensor t = HostTensor::zeros(array.shape);
  const std::size_t n = t.values.size();
  auto widen = [&]<typename T>(T) {
    std::vector<T> raw(n);
    std::memcpy(raw.data(), array.data.data(), n * sizeof(T));
    for (std::size_t i = 0; i < n; ++i) {
      t.values[i] = static_cast<double>(raw[i]);
    }
  };
  switch (array.type) {
    case runtime::NpyType::kFloat32:
      widen(float{});
      break;
    case runtime::NpyType::kFloat64:
      widen(double{});
      break;
    case runtime::NpyType::kInt8:
      widen(std::int8_t{});
      break;
    case runtime::NpyType::kUInt8:
      widen(std::uint8_t{});
      break;
    case runtime::NpyType::kInt16:
      widen(std::int16_t{});
      break;
    case runtime::NpyType::kUInt16:
      widen(std::uint16_t{});
      break;
    case runtime::NpyType::kInt32:
      widen(std::int32_t{});
      break;
    case runtime::NpyType::kUInt32:
      widen(std::uint32_t{});
      break;
    case runtime::NpyType::kInt64:
      widen(std::int64_t{});
      break;
    case runtime::NpyType::kUInt64:
      widen(std::uint64_t{});
      break;
    default:
      TRN_CHECK(false) << "fromNpy: unsupported array type";
  }
  return t;
}

std::string boundBy(const CheckResult& result) {
  return result.report.timed ? profile::verdictLabel(result.verdict) : std::string();
}

namespace {

/// The harness keeps every input and output on the host several times (float64 values, the
/// float32 array handed to the core, the reference's float64 result): about this many bytes an
/// element, on top of what the core itself maps.
constexpr std::uint64_t kHostBytesPerElement = 8 + 4 + 8;

Status checkHostMemoryForData(const kernel::CompiledKernel& compiled) {
  const std::optional<std::uint64_t> available = core::availableHostMemory();
  if (!available) {
    return {};
  }
  std::uint64_t elements = 0;
  for (const isa::TensorDecl& t : compiled.program.tensors) {
    if (t.kind != isa::TensorKind::kScratch) {
      elements += static_cast<std::uint64_t>(t.elementCount());
    }
  }
  const std::uint64_t need = elements * kHostBytesPerElement;
  if (need <= *available) {
    return {};
  }
  constexpr double kGiB = 1u << 30;
  return outOfRange(fmt::format(
      "checking this kernel keeps {} input and output elements on the host, about {:.3g} GiB, "
      "but the host has {:.3g} GiB available; --mode timing-only needs no values",
      elements, static_cast<double>(need) / kGiB, static_cast<double>(*available) / kGiB));
}

}  // namespace

Status checkAutoCast(const KernelEntry& entry, std::span<const kernel::TensorSpec> specs,
                     kernel::AutoCast autoCast) {
  if (autoCast.mode != kernel::AutoCast::kMatmult || !entry.autoCastInputs.empty() || !entry.flops ||
      entry.flops(specs) == 0) {
    return {};
  }
  std::vector<std::string> casting;
  for (const KernelEntry& other : kernels::referenceKernels()) {
    if (!other.autoCastInputs.empty()) {
      casting.push_back(other.name);
    }
  }
  return Status(ErrorCode::kUnsupported,
                fmt::format("kernel '{}' does not auto-cast: its matrix products use its input "
                            "dtypes (kernels that do: {})",
                            entry.name, fmt::join(casting, ", ")));
}

Result<CheckResult> checkKernel(const runtime::Session& session, const KernelEntry& entry,
                                std::span<const kernel::TensorSpec> specs,
                                const CheckOptions& options, kernel::KernelCache* cache,
                                std::span<const HostTensor> inputs) {
  if (!inputs.empty() && inputs.size() != specs.size()) {
    return Status(ErrorCode::kInvalidArgument, entry.name + ": " + std::to_string(inputs.size()) +
                                                   " input arrays for " +
                                                   std::to_string(specs.size()) + " inputs");
  }
  if (options.run.lnc > 1 && !entry.spmd) {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("kernel '{}' does not split its work over SPMD programs: at LNC={} "
                              "every core would compute all of it (kernels list marks those "
                              "that do [spmd])",
                              entry.name, options.run.lnc));
  }
  TRN_RETURN_IF_ERROR(checkAutoCast(entry, specs, options.compile.autoCast));
  const kernel::AutoCast& autoCast = options.compile.autoCast;
  // Under auto-cast the matmul operands of fp32 inputs are of the auto-cast type (bf16 unless
  // chosen otherwise): the reference reads them so, and the tolerance is that of such operands.
  std::vector<kernel::TensorSpec> judgedSpecs(specs.begin(), specs.end());
  if (autoCast.mode == kernel::AutoCast::kMatmult) {
    for (const std::size_t i : entry.autoCastInputs) {
      if (i < judgedSpecs.size() && judgedSpecs[i].dtype == DType::kFp32) {
        judgedSpecs[i].dtype = autoCast.type;
      }
    }
  }
  CheckResult result;
  TRN_ASSIGN_OR_RETURN(
      result.launch, session.compileLaunch(entry.def, specs, options.run, options.compile, cache));
  result.compiled = result.launch.cores.front();

  const bool data = core::hasData(options.run.mode);
  if (data) {
    TRN_RETURN_IF_ERROR(checkHostMemoryForData(*result.compiled));
  }
  std::vector<runtime::NpyArray> arrays;
  if (data) {
    if (!inputs.empty()) {
      result.inputs.assign(inputs.begin(), inputs.end());
    } else {
      result.inputs =
          entry.inputs ? entry.inputs(specs, options.run.seed) : kernels::randomInputs(specs, options.run.seed);
    }
    for (const HostTensor& input : result.inputs) {
      arrays.push_back(toNpy(input));
    }
  }
  // The float64 reference runs on a second thread while the core is simulated.
  result.checked = data && options.checkNumerics;
  std::future<std::vector<HostTensor>> expectedOutputs;
  if (result.checked) {
    std::vector<HostTensor> judged = result.inputs;
    for (std::size_t i = 0; i < judged.size(); ++i) {
      if (judgedSpecs[i].dtype != specs[i].dtype) {
        for (double& v : judged[i].values) {
          v = kernels::roundTo(v, judgedSpecs[i].dtype);
        }
      }
    }
    expectedOutputs = std::async(std::launch::async, [&entry, judged = std::move(judged)] {
      return entry.reference(judged);
    });
  }
  TRN_ASSIGN_OR_RETURN(runtime::RunResult ran,
                       session.runLaunch(result.launch, arrays, options.run));
  result.stats = std::move(ran.stats);
  result.cores = std::move(ran.cores);
  result.physicalCores = std::move(ran.physicalCores);
  result.report = profile::makeReport(result.stats, session.chip());
  result.usefulFlops = entry.flops ? entry.flops(specs) : 0.0;
  if (result.report.timed) {
    std::vector<const isa::Program*> programs;
    for (const auto& core : result.launch.cores) {
      programs.push_back(&core->program);
    }
    TRN_ASSIGN_OR_RETURN(result.verdict,
                         profile::explainSlowestCore(programs, result.cores, session.chip()));
  }
  const double seconds = static_cast<double>(result.report.total.count()) * 1e-12;
  if (seconds > 0 && result.report.peBf16PeakTflops > 0) {
    result.mfu = result.usefulFlops / (seconds * result.report.peBf16PeakTflops * 1e12);
  }

  if (data) {
    for (const runtime::NpyArray& output : ran.outputs) {
      result.outputs.push_back(fromNpy(output));
    }
  }
  if (result.checked) {
    const std::vector<HostTensor> expected = expectedOutputs.get();
    if (expected.size() != result.outputs.size()) {
      return Status(ErrorCode::kFailedPrecondition,
                    entry.name + ": the reference returned " + std::to_string(expected.size()) +
                        " outputs, the kernel " + std::to_string(result.outputs.size()));
    }
    const Tolerance tolerance = options.tolerance.value_or(entry.toleranceAt(judgedSpecs));
    result.tolerance = tolerance;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      result.comparisons.push_back(kernels::compare(result.outputs[i], expected[i], tolerance));
      result.pass = result.pass && result.comparisons.back().pass;
    }
  }
  return result;
}

}  // namespace trn::harness
