#include "trn/kernels/check.h"

#include <fmt/format.h>

#include <cstring>
#include <future>
#include <optional>

#include "trn/core/host_memory.h"
#include "trn/runtime/runner.h"

namespace trn::kernels {

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

std::string_view boundBy(const profile::Report& report) {
  const std::string& unit = report.criticalEngine;
  if (unit == "pe") {
    return "compute (PE)";
  }
  if (unit == "dma") {
    return "memory (DMA)";
  }
  if (unit == "act") {
    return "Scalar engine";
  }
  if (unit == "dve") {
    return "Vector engine";
  }
  if (unit == "pool") {
    return "GpSimd engine";
  }
  if (unit == "sp") {
    return "sync engine";
  }
  return "";
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

Result<CheckResult> checkKernel(const KernelEntry& entry, std::span<const kernel::TensorSpec> specs,
                                const CheckOptions& options, kernel::KernelCache* cache,
                                std::span<const HostTensor> inputs) {
  if (!options.chip) {
    return Status(ErrorCode::kInvalidArgument, "checking a kernel needs a chip description");
  }
  if (!inputs.empty() && inputs.size() != specs.size()) {
    return Status(ErrorCode::kInvalidArgument, entry.name + ": " + std::to_string(inputs.size()) +
                                                   " input arrays for " +
                                                   std::to_string(specs.size()) + " inputs");
  }
  CheckResult result;
  const isa::CoreLimits limits = runtime::coreLimits(*options.chip);
  if (cache != nullptr) {
    TRN_ASSIGN_OR_RETURN(result.compiled, cache->get(entry.def, specs, limits, options.compile));
  } else {
    TRN_ASSIGN_OR_RETURN(kernel::CompiledKernel compiled,
                         kernel::compile(entry.def, specs, limits, options.compile));
    result.compiled = std::make_shared<const kernel::CompiledKernel>(std::move(compiled));
  }

  const bool data = core::hasData(options.mode);
  if (data) {
    TRN_RETURN_IF_ERROR(checkHostMemoryForData(*result.compiled));
  }
  std::vector<runtime::NpyArray> arrays;
  if (data) {
    if (!inputs.empty()) {
      result.inputs.assign(inputs.begin(), inputs.end());
    } else {
      result.inputs =
          entry.inputs ? entry.inputs(specs, options.seed) : randomInputs(specs, options.seed);
    }
    for (const HostTensor& input : result.inputs) {
      arrays.push_back(toNpy(input));
    }
  }
  // The float64 reference runs on a second thread while the core is simulated.
  result.checked = data && options.checkNumerics;
  std::future<std::vector<HostTensor>> expectedOutputs;
  if (result.checked) {
    expectedOutputs = std::async(std::launch::async, [&entry, &inputs = result.inputs] {
      return entry.reference(inputs);
    });
  }
  runtime::KernelRunOptions run;
  run.chip = options.chip;
  run.mode = options.mode;
  run.seed = options.seed;
  run.detectRaces = options.detectRaces;
  run.record = options.record;
  run.maxInstructions = options.maxInstructions;
  TRN_ASSIGN_OR_RETURN(runtime::KernelRun ran, runtime::runKernel(*result.compiled, arrays, run));
  result.stats = std::move(ran.stats);
  result.report = profile::makeReport(result.stats, *options.chip);
  result.usefulFlops = entry.flops ? entry.flops(specs) : 0.0;
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
    const Tolerance tolerance = options.tolerance.value_or(entry.toleranceAt(specs));
    result.tolerance = tolerance;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      result.comparisons.push_back(compare(result.outputs[i], expected[i], tolerance));
      result.pass = result.pass && result.comparisons.back().pass;
    }
  }
  return result;
}

}  // namespace trn::kernels
