#include "trn/runtime/session.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <barrier>
#include <climits>
#include <cstring>
#include <map>
#include <new>
#include <thread>

#include "trn/base/check.h"
#include "trn/core/hazard_detector.h"
#include "trn/runtime/host_io.h"
#include "trn/spec/loader.h"

namespace trn::runtime {
namespace {

// The chip schema bounds these counts (trn/spec/chip_spec.h) so that they fit CoreLimits' int32
// fields and the race detector's agents.
static_assert(spec::kMaxSequencerResources <= INT32_MAX);
static_assert(isa::kNumEngines + spec::kMaxDmaQueuesPerCore <= core::kBarrierSlot,
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
  limits.peOutputSpansBanks = core.pe.outputSpansBanks;
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

Status Session::checkLnc(int lnc) const {
  const std::vector<std::int64_t>& sizes = chip_->chip.logicalCores.sizes;
  if (std::find(sizes.begin(), sizes.end(), lnc) == sizes.end()) {
    return invalidArgument(fmt::format("LNC={} is not a logical-core size of chip '{}' (it has {})",
                                       lnc, chip_->name, fmt::join(sizes, ", ")));
  }
  return {};
}

isa::ChipProgram CompiledLaunch::chipProgram() const {
  isa::ChipProgram chip;
  chip.lnc = static_cast<int>(cores.size());
  for (std::size_t c = 0; c < cores.size(); ++c) {
    chip.cores.push_back({static_cast<int>(c), cores[c]->program});
  }
  return chip;
}

Result<CompiledLaunch> Session::compileLaunch(const kernel::KernelDef& kernel,
                                              std::span<const kernel::TensorSpec> specs,
                                              const RunOptions& options,
                                              const kernel::CompileOptions& compileOptions,
                                              kernel::KernelCache* cache,
                                              std::span<const std::int64_t> gridShape) const {
  TRN_RETURN_IF_ERROR(checkLnc(options.lnc));
  if (!gridShape.empty()) {
    const bool positive =
        std::all_of(gridShape.begin(), gridShape.end(), [](std::int64_t n) { return n > 0; });
    if (!positive || gridShape.size() > 3 || gridShape.front() % options.lnc != 0) {
      return Status(ErrorCode::kInvalidArgument,
                    fmt::format("launch grid [{}] of kernel '{}': it needs 1 to 3 positive "
                                "sizes, the first a multiple of the {} core(s) of the logical "
                                "core",
                                fmt::join(gridShape, ", "), kernel.name, options.lnc));
    }
  }
  CompiledLaunch launch;
  for (int c = 0; c < options.lnc; ++c) {
    kernel::Grid grid;
    grid.shape = gridShape.empty() ? std::vector<std::int64_t>{options.lnc}
                                   : std::vector<std::int64_t>(gridShape.begin(), gridShape.end());
    grid.cores = options.lnc;
    grid.core = c;
    if (cache != nullptr) {
      TRN_ASSIGN_OR_RETURN(launch.cores.emplace_back(),
                           cache->get(kernel, specs, limits_, compileOptions, grid));
    } else {
      TRN_ASSIGN_OR_RETURN(kernel::CompiledKernel compiled,
                           kernel::compile(kernel, specs, limits_, compileOptions, grid));
      launch.cores.push_back(std::make_shared<const kernel::CompiledKernel>(std::move(compiled)));
    }
  }
  return launch;
}

Result<RunResult> Session::run(std::shared_ptr<const isa::Program> program,
                               std::span<const TensorInput> inputs,
                               std::span<const TensorOutput> outputs,
                               const RunOptions& options) const {
  TRN_CHECK(program != nullptr) << "Session::run needs a program";
  const CoreProgram only{std::move(program), 0};
  return runCores(std::span(&only, 1), inputs, outputs, options);
}

namespace {

/// How a wider host array (float32, float64) is rounded to its tensor's type: the run's mode,
/// with a stochastic stream of its own per tensor name, so inputs never share random words.
ConvertOptions hostRounding(const RunOptions& options, const std::string& tensor) {
  ConvertOptions convert;
  convert.rounding = options.rounding;
  convert.seed = options.seed;
  std::uint64_t hash = 0xcbf29ce484222325u;  // FNV-1a: the same stream on every host
  for (const char c : tensor) {
    hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3u;
  }
  convert.stream = (std::uint64_t{1} << 63) | hash;
  return convert;
}

/// A tensor of the device: its declaration (in the first program that names it) and address.
struct DeviceTensor {
  const isa::TensorDecl* decl = nullptr;
  std::int64_t address = 0;
};

const DeviceTensor* findDeviceTensor(const std::vector<DeviceTensor>& tensors,
                                     std::string_view name) {
  for (const DeviceTensor& t : tensors) {
    if (t.decl->name == name) {
      return &t;
    }
  }
  return nullptr;
}

/// Binds the tensors of `program`, run on a core of HBM stack `stack`, to `device` by name: a
/// name `tensors` holds already is that tensor (its shape and dtype must agree), a new one is
/// allocated in the stack and added. Returns the program's tensor addresses in order.
Result<std::vector<std::int64_t>> bindTensorsByName(core::DeviceMemory& device,
                                                    const isa::Program& program, int physicalCore,
                                                    std::int64_t stack,
                                                    std::vector<DeviceTensor>& tensors) {
  std::vector<std::int64_t> addresses;
  for (const isa::TensorDecl& decl : program.tensors) {
    if (const DeviceTensor* shared = findDeviceTensor(tensors, decl.name)) {
      if (shared->decl->shape != decl.shape || shared->decl->dtype != decl.dtype) {
        return invalidArgument(fmt::format(
            "tensor '{}' is [{}] {} in one core's program but [{}] {} in physical core {}'s; "
            "programs share a tensor by name",
            decl.name, fmt::join(shared->decl->shape, ", "), dtypeName(shared->decl->dtype),
            fmt::join(decl.shape, ", "), dtypeName(decl.dtype), physicalCore));
      }
      addresses.push_back(shared->address);
      continue;
    }
    TRN_ASSIGN_OR_RETURN(
        const std::int64_t address,
        device.allocate(decl.byteSize(), stack, fmt::format("HBM tensor '{}'", decl.name)));
    tensors.push_back({&decl, address});
    addresses.push_back(address);
  }
  return addresses;
}

/// Whether some program exchanges tiles between cores (sendrecv). The thread-per-core data pass
/// cannot: each thread holds one core's SBUF, so such a run computes its data in one coupled run.
bool exchangesTiles(std::span<const CoreProgram> cores) {
  const std::size_t sendRecv = isa::InstructionBody(isa::SendRecv{}).index();
  for (const CoreProgram& cp : cores) {
    for (const isa::InstructionStream& stream : cp.program->streams) {
      for (std::size_t i = 0; i < stream.size(); ++i) {
        if (stream.typeIndex(i) == sendRecv) {
          return true;
        }
      }
    }
  }
  return false;
}

}  // namespace

/// A multi-core run with data on the host's cores. A timing-only pass of all the cores together
/// gives the time, the records and every race or deadlock. Then each core computes its data on a
/// host thread of its own in functional-only mode, meeting the other cores of its logical core at
/// a std::barrier, with poison checked there. A race-free program has one result whatever the
/// order (architecture.md), so the data are those of one coupled run, bit for bit. Returns each
/// core's statistics as a run in `options.mode` gives them.
template <typename MakeCores>
Result<std::vector<core::RunStats>> runInParallel(std::span<const CoreProgram> cores,
                                                  const core::CoreOptions& base,
                                                  const std::shared_ptr<core::DeviceMemory>& device,
                                                  MakeCores& makeCores, const RunOptions& options) {
  core::CoreOptions timing = base;
  timing.mode = core::RunMode::kTimingOnly;
  timing.poison = false;
  timing.record = base.record && core::hasTiming(options.mode);
  TRN_ASSIGN_OR_RETURN(
      std::shared_ptr<core::DeviceMemory> layout,
      core::DeviceMemory::create(device->stackBytes(), device->stacks(), false, false));
  std::vector<core::RunStats> stats;
  {
    TRN_ASSIGN_OR_RETURN(auto timed, makeCores(timing, layout, nullptr));
    std::vector<core::NeuronCore*> running;
    for (const auto& c : timed) {
      running.push_back(c.get());
    }
    TRN_ASSIGN_OR_RETURN(stats, core::runTogether(running));
  }

  std::map<int, std::ptrdiff_t> groupSizes;
  for (const CoreProgram& cp : cores) {
    ++groupSizes[cp.physicalCore / options.lnc];
  }
  std::map<int, std::shared_ptr<std::barrier<>>> groups;
  std::vector<std::shared_ptr<std::barrier<>>> hostBarriers;
  for (const CoreProgram& cp : cores) {
    const int group = cp.physicalCore / options.lnc;
    auto& barrier = groups[group];
    if (barrier == nullptr) {
      barrier = std::make_shared<std::barrier<>>(groupSizes[group]);
    }
    hostBarriers.push_back(barrier);
  }
  core::CoreOptions functional = base;
  functional.mode = core::RunMode::kFunctionalOnly;
  functional.detectRaces = false;  // the timing pass checked them
  functional.record = false;
  TRN_ASSIGN_OR_RETURN(auto computing, makeCores(functional, device, &hostBarriers));
  std::vector<Status> errors(cores.size());
  std::vector<core::RunStats> computed(cores.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < cores.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        Result<core::RunStats> r = computing[i]->run();
        if (r.ok()) {
          computed[i] = std::move(*r);
        } else {
          errors[i] = r.status().withContext(fmt::format("core {}", cores[i].physicalCore));
        }
      } catch (const std::bad_alloc&) {
        errors[i] =
            outOfRange(fmt::format("core {}: the host ran out of memory", cores[i].physicalCore));
      }
      hostBarriers[i]->arrive_and_drop();  // a failed core no longer holds its partners
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  for (const Status& error : errors) {
    TRN_RETURN_IF_ERROR(error);
  }
  if (!core::hasTiming(options.mode)) {
    return computed;
  }
  for (core::RunStats& s : stats) {
    s.mode = options.mode;
  }
  return stats;
}

Result<RunResult> Session::runCores(std::span<const CoreProgram> cores,
                                    std::span<const TensorInput> inputs,
                                    std::span<const TensorOutput> outputs,
                                    const RunOptions& options) const {
  if (cores.empty()) {
    return invalidArgument("a run needs at least one core program");
  }
  TRN_RETURN_IF_ERROR(checkLnc(options.lnc));
  const bool data = core::hasData(options.mode);
  if (!data && !outputs.empty()) {
    return invalidArgument("timing-only mode computes no values: outputs cannot be read");
  }
  const std::vector<std::int64_t>& stackOfCore = chip_->hbm.stackOfCore;
  for (std::size_t i = 0; i < cores.size(); ++i) {
    TRN_CHECK(cores[i].program != nullptr) << "core program " << i << " has no program";
    const int physical = cores[i].physicalCore;
    if (physical < 0 || physical >= chip_->chip.neuronCores ||
        static_cast<std::size_t>(physical) >= stackOfCore.size()) {
      return invalidArgument(
          fmt::format("physical core {} does not exist: chip '{}' has cores "
                      "0..{}",
                      physical, chip_->name, chip_->chip.neuronCores - 1));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (cores[j].physicalCore == physical) {
        return invalidArgument(
            fmt::format("two programs were given for physical core {}", physical));
      }
    }
  }
  if (data) {
    std::vector<std::string> names;
    for (const TensorInput& in : inputs) {
      names.push_back(in.tensor);
    }
    for (const CoreProgram& cp : cores) {
      const std::vector<std::string> unbound = unboundInputs(*cp.program, names);
      if (!unbound.empty()) {
        return invalidArgument(
            fmt::format("input tensor(s) {} have no value", fmt::join(unbound, ", ")));
      }
    }
  }

  // One device memory; a tensor name is one device tensor, in the stack of its first core.
  const bool poison = options.poison && data;
  TRN_ASSIGN_OR_RETURN(std::shared_ptr<core::DeviceMemory> device,
                       core::DeviceMemory::create(chip_->hbm.stackCapacity.count(),
                                                  chip_->hbm.stacks, data, poison));
  std::vector<DeviceTensor> tensors;
  std::vector<std::vector<std::int64_t>> addresses(cores.size());
  for (std::size_t i = 0; i < cores.size(); ++i) {
    const CoreProgram& cp = cores[i];
    TRN_ASSIGN_OR_RETURN(
        addresses[i],
        bindTensorsByName(*device, *cp.program, cp.physicalCore,
                          stackOfCore[static_cast<std::size_t>(cp.physicalCore)], tensors));
  }
  // The cores as `o` configures them, on `memory`, each meeting the others of its logical core at
  // (*hostBarriers)[i] when given.
  auto makeCores = [&](const core::CoreOptions& o,
                       const std::shared_ptr<core::DeviceMemory>& memory,
                       const std::vector<std::shared_ptr<std::barrier<>>>* hostBarriers)
      -> Result<std::vector<std::unique_ptr<core::NeuronCore>>> {
    std::vector<std::unique_ptr<core::NeuronCore>> made;
    for (std::size_t i = 0; i < cores.size(); ++i) {
      core::CoreOptions own = o;
      if (hostBarriers != nullptr) {
        own.hostBarrier = (*hostBarriers)[i];
      }
      own.physicalCore = cores[i].physicalCore;
      own.logicalCore = cores[i].physicalCore / options.lnc;
      own.device = memory;
      own.tensorAddresses = addresses[i];
      TRN_ASSIGN_OR_RETURN(made.emplace_back(), core::NeuronCore::create(cores[i].program, own));
    }
    return made;
  };
  const core::CoreOptions base = coreOptions(*this, options);
  if (data) {
    for (const TensorInput& in : inputs) {
      const DeviceTensor* tensor = findDeviceTensor(tensors, in.tensor);
      if (tensor == nullptr) {
        return notFound(fmt::format("{}: no program has a tensor '{}'", in.source, in.tensor));
      }
      TRN_CHECK(in.array != nullptr) << in.source << ": no array";
      TRN_ASSIGN_OR_RETURN(const auto bytes, tensorFromNpy(*tensor->decl, *in.array, in.source,
                                                           hostRounding(options, in.tensor)));
      TRN_RETURN_IF_ERROR(device->write(tensor->address, bytes));
    }
  }
  RunResult result;
  if (data && cores.size() > 1 && options.parallel && !exchangesTiles(cores)) {
    TRN_ASSIGN_OR_RETURN(result.cores, runInParallel(cores, base, device, makeCores, options));
  } else {
    TRN_ASSIGN_OR_RETURN(auto simulated, makeCores(base, device, nullptr));
    std::vector<core::NeuronCore*> running;
    for (const auto& c : simulated) {
      running.push_back(c.get());
    }
    TRN_ASSIGN_OR_RETURN(result.cores, core::runTogether(running));
  }
  for (const CoreProgram& cp : cores) {
    result.physicalCores.push_back(cp.physicalCore);
  }
  result.stats = result.cores.size() == 1 ? result.cores.front() : core::mergeStats(result.cores);
  for (const TensorOutput& out : outputs) {
    const DeviceTensor* tensor = findDeviceTensor(tensors, out.tensor);
    if (tensor == nullptr) {
      return notFound(fmt::format("output '{}': no program has such a tensor", out.tensor));
    }
    TRN_ASSIGN_OR_RETURN(const auto bytes, device->read(tensor->address, tensor->decl->byteSize()));
    TRN_ASSIGN_OR_RETURN(result.outputs.emplace_back(),
                         npyFromTensor(*tensor->decl, bytes, out.hostType));
  }
  return result;
}

Result<RanksResult> Session::runRanks(const fabric::Topology& topology,
                                      std::span<const RankProgram> ranks,
                                      const RunOptions& options) const {
  if (ranks.empty()) {
    return invalidArgument("a system run needs at least one rank");
  }
  if (static_cast<std::int64_t>(ranks.size()) > topology.chips()) {
    return invalidArgument(
        topology.ranksPerChip() == 1
            ? fmt::format("{} ranks, but the system has {} chips (a rank per chip)", ranks.size(),
                          topology.chips())
            : fmt::format("{} ranks, but the system has {} logical cores ({} per chip)",
                          ranks.size(), topology.chips(), topology.ranksPerChip()));
  }
  // Logical-core ranks: rank r on the first physical core of logical core r mod L of chip r / L,
  // the ranks of a chip sharing its device memory.
  const std::int64_t perChip = topology.ranksPerChip();
  if (perChip > 1 && chip_->chip.neuronCores % perChip != 0) {
    return invalidArgument(fmt::format("{} ranks per chip, but a {} chip has {} cores", perChip,
                                       chip_->name, chip_->chip.neuronCores));
  }
  // The physical cores a place holds: its logical core's, or at a rank per chip the chip's.
  const std::int64_t coresOfPlace = chip_->chip.neuronCores / perChip;
  auto physicalCoreOf = [&](std::size_t r) {
    return static_cast<int>(static_cast<std::int64_t>(r) % perChip * coresOfPlace);
  };
  const bool data = core::hasData(options.mode);
  const core::CoreOptions base = coreOptions(*this, options);
  std::vector<std::shared_ptr<core::DeviceMemory>> devices;
  std::vector<std::unique_ptr<core::NeuronCore>> cores;
  std::vector<std::size_t> firstCoreOf;  // per rank, its first core's index in `cores`
  std::vector<std::vector<DeviceTensor>> tensors(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const RankProgram& rank = ranks[r];
    TRN_CHECK(rank.program != nullptr) << "rank " << r << " has no program";
    auto inRank = [r](const Status& s) { return s.withContext(fmt::format("rank {}", r)); };
    std::vector<const isa::Program*> programs = {rank.program.get()};
    for (const auto& other : rank.otherCores) {
      TRN_CHECK(other != nullptr) << "rank " << r << " has a core without a program";
      programs.push_back(other.get());
    }
    if (static_cast<std::int64_t>(programs.size()) > coresOfPlace) {
      return inRank(invalidArgument(fmt::format(
          "{} core programs, but a rank runs on {} physical core(s) of a {} chip ({})",
          programs.size(), coresOfPlace, chip_->name,
          perChip > 1 ? fmt::format("{} ranks per chip", perChip) : "a rank per chip")));
    }
    if (programs.size() > 1) {
      TRN_RETURN_IF_ERROR(inRank(checkLnc(static_cast<int>(programs.size()))));
    }
    if (data) {
      std::vector<std::string> names;
      for (const TensorInput& in : rank.inputs) {
        names.push_back(in.tensor);
      }
      for (const isa::Program* program : programs) {
        const std::vector<std::string> unbound = unboundInputs(*program, names);
        if (!unbound.empty()) {
          return inRank(invalidArgument(
              fmt::format("input tensor(s) {} have no value", fmt::join(unbound, ", "))));
        }
      }
    } else if (!rank.outputs.empty()) {
      return invalidArgument("timing-only mode computes no values: outputs cannot be read");
    }
    const auto chipIndex = static_cast<std::size_t>(static_cast<std::int64_t>(r) / perChip);
    if (devices.size() <= chipIndex) {
      TRN_ASSIGN_OR_RETURN(
          std::shared_ptr<core::DeviceMemory> made,
          core::DeviceMemory::create(chip_->hbm.stackCapacity.count(), chip_->hbm.stacks, data,
                                     options.poison && data));
      devices.push_back(std::move(made));
    }
    const std::shared_ptr<core::DeviceMemory>& device = devices[chipIndex];
    std::vector<core::CoreOptions> own(programs.size(), base);
    for (std::size_t j = 0; j < programs.size(); ++j) {
      own[j].physicalCore = physicalCoreOf(r) + static_cast<int>(j);
      own[j].logicalCore = static_cast<int>(r);
      own[j].device = device;
      auto addresses = bindTensorsByName(*device, *programs[j], own[j].physicalCore,
                                         chip_->hbm.stackOf(own[j].physicalCore), tensors[r]);
      if (!addresses.ok()) {
        return inRank(addresses.status());
      }
      own[j].tensorAddresses = std::move(*addresses);
    }
    for (const TensorInput& in : rank.inputs) {
      const DeviceTensor* tensor = findDeviceTensor(tensors[r], in.tensor);
      if (tensor == nullptr) {
        return inRank(notFound(fmt::format("{}: no tensor '{}'", in.source, in.tensor)));
      }
      TRN_CHECK(in.array != nullptr) << in.source << ": no array";
      TRN_ASSIGN_OR_RETURN(const auto bytes, tensorFromNpy(*tensor->decl, *in.array, in.source,
                                                           hostRounding(options, in.tensor)));
      TRN_RETURN_IF_ERROR(device->write(tensor->address, bytes));
    }
    firstCoreOf.push_back(cores.size());
    for (std::size_t j = 0; j < programs.size(); ++j) {
      std::shared_ptr<const isa::Program> program = j == 0 ? rank.program : rank.otherCores[j - 1];
      Result<std::unique_ptr<core::NeuronCore>> made =
          core::NeuronCore::create(std::move(program), own[j]);
      if (!made.ok()) {
        return inRank(made.status());
      }
      cores.push_back(std::move(*made));
    }
  }
  firstCoreOf.push_back(cores.size());
  std::vector<core::NeuronCore*> running;
  for (const auto& c : cores) {
    running.push_back(c.get());
  }
  fabric::FabricCollectives fabric(topology);
  TRN_ASSIGN_OR_RETURN(std::vector<core::RunStats> stats, core::runTogether(running, &fabric));
  RanksResult result;
  result.stats = stats.size() == 1 ? stats.front() : core::mergeStats(stats);
  result.collectives = fabric.records();
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    RunResult& rank = result.ranks.emplace_back();
    const std::span<const core::RunStats> own =
        std::span(stats).subspan(firstCoreOf[r], firstCoreOf[r + 1] - firstCoreOf[r]);
    rank.stats = own.size() == 1 ? own.front() : core::mergeStats(own);
    rank.cores.assign(own.begin(), own.end());
    for (std::size_t j = 0; j < own.size(); ++j) {
      rank.physicalCores.push_back(physicalCoreOf(r) + static_cast<int>(j));
    }
    for (const TensorOutput& out : ranks[r].outputs) {
      const DeviceTensor* tensor = findDeviceTensor(tensors[r], out.tensor);
      if (tensor == nullptr) {
        return notFound(fmt::format("rank {}: output '{}': no such tensor", r, out.tensor));
      }
      TRN_ASSIGN_OR_RETURN(const auto bytes, cores[firstCoreOf[r]]->device().read(
                                                 tensor->address, tensor->decl->byteSize()));
      TRN_ASSIGN_OR_RETURN(rank.outputs.emplace_back(),
                           npyFromTensor(*tensor->decl, bytes, out.hostType));
    }
  }
  return result;
}

Result<RunResult> Session::runLaunch(const CompiledLaunch& launch, std::span<const NpyArray> inputs,
                                     const RunOptions& options) const {
  std::vector<const NpyArray*> borrowed;
  for (const NpyArray& array : inputs) {
    borrowed.push_back(&array);
  }
  return runLaunch(launch, std::span<const NpyArray* const>(borrowed), options);
}

Result<RunResult> Session::runLaunch(const CompiledLaunch& launch,
                                     std::span<const NpyArray* const> inputs,
                                     const RunOptions& options) const {
  TRN_CHECK(!launch.cores.empty()) << "Session::runLaunch needs a compiled launch";
  const kernel::CompiledKernel& first = launch.first();
  const bool data = core::hasData(options.mode);
  if (data && inputs.size() != first.inputs.size()) {
    return invalidArgument(fmt::format("kernel '{}' takes {} inputs; {} arrays were given",
                                       first.name, first.inputs.size(), inputs.size()));
  }
  std::vector<TensorInput> bound;
  std::vector<TensorOutput> wanted;
  if (data) {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const std::string& name = first.inputs[i].name;
      bound.push_back({name, inputs[i], fmt::format("input '{}'", name)});
    }
    for (const kernel::TensorSpec& out : first.outputs) {
      wanted.push_back({out.name, isFloat(out.dtype) ? std::optional(DType::kFp32) : std::nullopt});
    }
  }
  // The cores share the compiled programs rather than copying them.
  std::vector<CoreProgram> programs;
  for (std::size_t c = 0; c < launch.cores.size(); ++c) {
    const auto& compiled = launch.cores[c];
    programs.push_back(
        {std::shared_ptr<const isa::Program>(compiled, &compiled->program), static_cast<int>(c)});
  }
  return runCores(programs, bound, wanted, options);
}

Result<RunResult> Session::runKernel(std::shared_ptr<const kernel::CompiledKernel> compiled,
                                     std::span<const NpyArray> inputs,
                                     const RunOptions& options) const {
  TRN_CHECK(compiled != nullptr) << "Session::runKernel needs a compiled kernel";
  CompiledLaunch launch;
  launch.cores.push_back(std::move(compiled));
  RunOptions one = options;
  one.lnc = 1;  // a compiled kernel is one core's program
  return runLaunch(launch, inputs, one);
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
  TRN_ASSIGN_OR_RETURN(CompiledLaunch launch,
                       compileLaunch(kernel, specs, options, compileOptions, cache));
  return runLaunch(launch, inputs, options);
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
