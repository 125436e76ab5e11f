#include "trn/runtime/session.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "trn/base/check.h"
#include "trn/core/hazard_detector.h"
#include "trn/runtime/host_io.h"
#include "trn/spec/loader.h"

namespace trn::runtime {
namespace {

// The chip schema bounds these counts (trn/spec/chip_spec.h) so that they fit CoreLimits' int32
// fields and the race detector's agents.
static_assert(spec::kMaxSequencerResources <= INT32_MAX);
static_assert(isa::kNumEngines + spec::kMaxDmaQueuesPerCore <= core::kMaxAgents,
              "race detection must be able to follow every DMA queue a chip may declare");

/// `value` of the chip key `key` as an int32; the schema guarantees that it fits.
std::int32_t boundedInt32(std::int64_t value, std::string_view key) {
  TRN_CHECK(value >= 0 && value <= INT32_MAX)
      << key << " = " << value << " passed the chip schema but does not fit an int32";
  return static_cast<std::int32_t>(value);
}

core::CoreOptions coreOptions(const Session& session, const RunOptions& options) {
  core::CoreOptions o;
  o.limits = session.coreLimits();
  o.chip = session.sharedChip();
  o.mode = options.mode;
  o.rounding = options.rounding;
  o.seed = options.seed;
  o.poison = options.poison && core::hasData(options.mode);
  o.detectRaces = options.detectRaces;
  o.record = options.record;
  o.maxInstructions = options.maxInstructions;
  return o;
}

}  // namespace

std::vector<std::string> unboundInputs(const isa::Program& program,
                                       std::span<const std::string> bound) {
  std::vector<std::string> unbound;
  for (const isa::TensorDecl& t : program.tensors) {
    if (t.kind == isa::TensorKind::kInput &&
        std::find(bound.begin(), bound.end(), t.name) == bound.end()) {
      unbound.push_back(t.name);
    }
  }
  return unbound;
}

isa::CoreLimits coreLimits(const spec::ChipSpec& chip) {
  const spec::Core& core = chip.core;
  isa::CoreLimits limits;
  limits.partitions = core.sbuf.partitions;
  limits.sbufPartitionBytes = core.sbuf.partitionBytes.count();
  limits.psumBanks = core.psum.banks;
  limits.psumBankBytes = core.psum.bankBytes.count();
  limits.hbmBytes = chip.hbm.capacity.count();
  limits.matmulMaxContraction = core.tileLimits.matmulK;
  limits.matmulMaxStationaryFree = core.tileLimits.matmulM;
  limits.matmulMaxMovingFree = core.tileLimits.matmulN;
  limits.maxFreeElementsSbuf = core.tileLimits.vectorFSbuf;
  limits.maxFreeElementsPsum = core.tileLimits.vectorFPsum;
  limits.bnStatsMaxFree = core.tileLimits.bnStatsF;
  limits.semaphores = boundedInt32(core.sequencer.semaphores, "core.sequencer.semaphores");
  limits.registers = boundedInt32(core.sequencer.registers, "core.sequencer.registers");
  limits.dmaQueues = boundedInt32(core.dma.queuesPerEngine, "core.dma.queues_per_engine");
  limits.fp8DoubleRow = core.pe.doubleRowFp8.supported;
  limits.dmaTransposeElementBytes = 0;
  if (core.dma.transpose.supported) {
    for (const std::int64_t bytes : core.dma.transpose.elementBytes) {
      if (bytes > 0 && bytes < 8) {
        limits.dmaTransposeElementBytes |= static_cast<std::uint8_t>(1u << bytes);
      }
    }
  }
  limits.maxFreeDims = core.access.maxFreeDims;
  limits.freeDimMaxCount = core.access.freeDimMaxSize;
  limits.freeDimMinStride = core.access.freeDimMinStride;
  limits.freeDimMaxStride = core.access.freeDimMaxStride;
  limits.startPartitionRules.clear();
  for (const spec::StartPartitionRule& rule : core.access.startPartitionRules) {
    limits.startPartitionRules.push_back({rule.maxPartitions, rule.starts});
  }
  limits.matmulMinTile = core.pe.rows;  // no tiling mode unless the spec lists tile sizes
  for (const std::int64_t size : core.pe.tiling.rowTileSizes) {
    limits.matmulMinTile = std::min(limits.matmulMinTile, size);
  }
  return limits;
}

Session::Session(std::shared_ptr<const spec::ChipSpec> chip) : chip_(std::move(chip)) {
  TRN_CHECK(chip_ != nullptr) << "a session needs a chip description";
  limits_ = runtime::coreLimits(*chip_);
}

Result<Session> Session::open(const std::string& chip) {
  TRN_ASSIGN_OR_RETURN(spec::ChipSpec loaded, spec::loadChip(chip));
  return Session(std::make_shared<const spec::ChipSpec>(std::move(loaded)));
}

Result<std::shared_ptr<const kernel::CompiledKernel>> Session::compile(
    const kernel::KernelDef& kernel, std::span<const kernel::TensorSpec> specs,
    const kernel::CompileOptions& options, kernel::KernelCache* cache) const {
  if (cache != nullptr) {
    return cache->get(kernel, specs, limits_, options);
  }
  TRN_ASSIGN_OR_RETURN(kernel::CompiledKernel compiled,
                       kernel::compile(kernel, specs, limits_, options));
  return std::make_shared<const kernel::CompiledKernel>(std::move(compiled));
}

Result<RunResult> Session::run(std::shared_ptr<const isa::Program> program,
                               std::span<const TensorInput> inputs,
                               std::span<const TensorOutput> outputs,
                               const RunOptions& options) const {
  TRN_CHECK(program != nullptr) << "Session::run needs a program";
  const bool data = core::hasData(options.mode);
  if (!data && !outputs.empty()) {
    return invalidArgument("timing-only mode computes no values: outputs cannot be read");
  }
  if (data) {
    std::vector<std::string> names;
    for (const TensorInput& in : inputs) {
      names.push_back(in.tensor);
    }
    const std::vector<std::string> unbound = unboundInputs(*program, names);
    if (!unbound.empty()) {
      return invalidArgument(
          fmt::format("input tensor(s) {} have no value", fmt::join(unbound, ", ")));
    }
  }
  TRN_ASSIGN_OR_RETURN(auto core, core::NeuronCore::create(program, coreOptions(*this, options)));
  if (data) {
    for (const TensorInput& in : inputs) {
      const auto index = program->findTensor(in.tensor);
      if (!index) {
        return notFound(fmt::format("{}: the program has no tensor '{}'", in.source, in.tensor));
      }
      const isa::TensorDecl& decl = program->tensors[static_cast<std::size_t>(*index)];
      TRN_CHECK(in.array != nullptr) << in.source << ": no array";
      TRN_ASSIGN_OR_RETURN(const auto bytes, tensorFromNpy(decl, *in.array, in.source));
      TRN_RETURN_IF_ERROR(core->setTensor(in.tensor, bytes));
    }
  }
  RunResult result;
  TRN_ASSIGN_OR_RETURN(result.stats, core->run());
  for (const TensorOutput& out : outputs) {
    const auto index = program->findTensor(out.tensor);
    if (!index) {
      return notFound(fmt::format("output '{}': the program has no such tensor", out.tensor));
    }
    const isa::TensorDecl& decl = program->tensors[static_cast<std::size_t>(*index)];
    TRN_ASSIGN_OR_RETURN(const auto bytes, core->tensorBytes(out.tensor));
    TRN_ASSIGN_OR_RETURN(result.outputs.emplace_back(), npyFromTensor(decl, bytes, out.hostType));
  }
  return result;
}

Result<RunResult> Session::runKernel(std::shared_ptr<const kernel::CompiledKernel> compiled,
                                     std::span<const NpyArray> inputs,
                                     const RunOptions& options) const {
  TRN_CHECK(compiled != nullptr) << "Session::runKernel needs a compiled kernel";
  const bool data = core::hasData(options.mode);
  if (data && inputs.size() != compiled->inputs.size()) {
    return invalidArgument(fmt::format("kernel '{}' takes {} inputs; {} arrays were given",
                                       compiled->name, compiled->inputs.size(), inputs.size()));
  }
  const isa::Program& program = compiled->program;
  std::vector<TensorInput> bound;
  std::vector<TensorOutput> wanted;
  if (data) {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const std::string& name = program.tensors[i].name;
      bound.push_back({name, &inputs[i], fmt::format("input '{}'", name)});
    }
    for (std::size_t o = 0; o < compiled->outputs.size(); ++o) {
      const isa::TensorDecl& decl = program.tensors[compiled->inputs.size() + o];
      wanted.push_back({decl.name, isFloat(decl.dtype) ? std::optional(DType::kFp32)
                                                       : std::nullopt});
    }
  }
  // The core shares the compiled program rather than copying it.
  std::shared_ptr<const isa::Program> shared(compiled, &compiled->program);
  return run(std::move(shared), bound, wanted, options);
}

Result<RunResult> Session::runKernel(const kernel::CompiledKernel& compiled,
                                     std::span<const NpyArray> inputs,
                                     const RunOptions& options) const {
  return runKernel(std::make_shared<const kernel::CompiledKernel>(compiled), inputs, options);
}

Result<RunResult> Session::runKernel(const kernel::KernelDef& kernel,
                                     std::span<const kernel::TensorSpec> specs,
                                     std::span<const NpyArray> inputs, const RunOptions& options,
                                     kernel::KernelCache* cache,
                                     const kernel::CompileOptions& compileOptions) const {
  TRN_ASSIGN_OR_RETURN(auto compiled, compile(kernel, specs, compileOptions, cache));
  return runKernel(std::move(compiled), inputs, options);
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
