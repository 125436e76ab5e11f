#include "trn/core/neuron_core.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "sequencer_state.h"
#include "trn/base/checked.h"
#include "trn/base/rng.h"
#include "trn/core/hazard_detector.h"
#include "trn/core/host_memory.h"
#include "trn/isa/exec_context.h"
#include "trn/isa/program_text.h"
#include "trn/isa/verifier.h"

namespace trn::core {

using isa::AccessPattern;
using isa::Engine;
using isa::Memory;

namespace {

/// Calls fn(partition, byteOffset, runLength) for each run of consecutive elements of `ap`, in
/// access-pattern order; byteOffset is relative to the partition (or HBM row) start. A run is a
/// stretch of the innermost dimension with stride 1, or a single element.
template <typename Fn>
void forEachRun(const AccessPattern& ap, Fn&& fn) {
  const std::int64_t elementBytes = byteSize(ap.dtype);
  const int inner = ap.numDims - 1;
  const isa::Dim innermost = ap.dims[static_cast<std::size_t>(inner)];
  std::array<std::int64_t, isa::kMaxFreeDims> index{};
  const std::int64_t outerCount = ap.freeSize() / innermost.count;
  for (std::int64_t p = 0; p < ap.partitionCount; ++p) {
    index.fill(0);
    for (std::int64_t o = 0; o < outerCount; ++o) {
      std::int64_t base = ap.offset;
      for (int d = 0; d < inner; ++d) {
        base += index[static_cast<std::size_t>(d)] * ap.dims[static_cast<std::size_t>(d)].stride *
                elementBytes;
      }
      if (innermost.stride == 1) {
        fn(p, base, innermost.count);
      } else {
        for (std::int64_t i = 0; i < innermost.count; ++i) {
          fn(p, base + i * innermost.stride * elementBytes, std::int64_t{1});
        }
      }
      for (int d = inner - 1; d >= 0; --d) {
        auto& idx = index[static_cast<std::size_t>(d)];
        if (++idx < ap.dims[static_cast<std::size_t>(d)].count) {
          break;
        }
        idx = 0;
      }
    }
  }
}

}  // namespace

/// Executes instructions against the core's memories and the issuing sequencer's state.
class NeuronCore::Context final : public isa::ExecContext {
 public:
  Context(NeuronCore& core, SequencerState& seq, Engine engine)
      : core_(core), seq_(seq), engine_(engine) {}

  std::span<float> scratchFloats(int slot, std::size_t count) override {
    TRN_CHECK(slot >= 0 && slot < kScratchSlots) << "scratch slot " << slot;
    std::vector<float>& buffer = core_.scratch_[static_cast<std::size_t>(slot)];
    if (buffer.size() < count) {
      buffer.resize(count);
    }
    return std::span(buffer.data(), count);
  }

  void readFloats(const AccessPattern& ap, std::span<float> out) override {
    std::size_t pos = 0;
    forEachRun(ap, [&](std::int64_t p, std::int64_t offset, std::int64_t count) {
      const auto [memory, address] = locate(ap, p, offset);
      const auto bytes = static_cast<std::size_t>(count * byteSize(ap.dtype));
      checkInitialised(*memory, address, bytes, ap);
      convertToFloat(std::span(memory->data() + address, bytes), ap.dtype,
                     out.subspan(pos, static_cast<std::size_t>(count)));
      pos += static_cast<std::size_t>(count);
    });
  }

  void writeFloats(const AccessPattern& ap, std::span<const float> values) override {
    const ConvertOptions options{core_.options_.rounding, false, core_.options_.seed,
                                 roundingStream()};
    std::size_t pos = 0;
    forEachRun(ap, [&](std::int64_t p, std::int64_t offset, std::int64_t count) {
      const auto [memory, address] = locate(ap, p, offset);
      const auto bytes = static_cast<std::size_t>(count * byteSize(ap.dtype));
      convertFromFloat(values.subspan(pos, static_cast<std::size_t>(count)), ap.dtype,
                       std::span(memory->data() + address, bytes), options, pos);
      memory->markWritten(address, bytes);
      pos += static_cast<std::size_t>(count);
    });
  }

  void readBytes(const AccessPattern& ap, std::span<std::byte> out) override {
    std::size_t pos = 0;
    forEachRun(ap, [&](std::int64_t p, std::int64_t offset, std::int64_t count) {
      const auto [memory, address] = locate(ap, p, offset);
      const auto bytes = static_cast<std::size_t>(count * byteSize(ap.dtype));
      checkInitialised(*memory, address, bytes, ap);
      std::memcpy(out.data() + pos, memory->data() + address, bytes);
      pos += bytes;
    });
  }

  void writeBytes(const AccessPattern& ap, std::span<const std::byte> in) override {
    std::size_t pos = 0;
    forEachRun(ap, [&](std::int64_t p, std::int64_t offset, std::int64_t count) {
      const auto [memory, address] = locate(ap, p, offset);
      const auto bytes = static_cast<std::size_t>(count * byteSize(ap.dtype));
      std::memcpy(memory->data() + address, in.data() + pos, bytes);
      memory->markWritten(address, bytes);
      pos += bytes;
    });
  }

  std::span<float> accumulators() override { return seq_.accumulators; }

  std::int32_t& reg(int index) override {
    TRN_CHECK(index >= 0 && static_cast<std::size_t>(index) < seq_.registers.size())
        << "register " << index << " (the verifier should have rejected it)";
    return seq_.registers[static_cast<std::size_t>(index)];
  }

  std::uint32_t randomWord() override {
    return CounterRng(seq_.rngSeed, static_cast<std::uint64_t>(engine_)).at(seq_.rngPosition++);
  }

  void seedRandom(std::uint64_t seed) override {
    seq_.rngSeed = seed;
    seq_.rngPosition = 0;
  }

  void jumpTo(std::int64_t index) override { jump_ = index; }

  /// The first poison read of the current instruction, if any.
  [[nodiscard]] const Status& fault() const { return fault_; }
  [[nodiscard]] std::int64_t jump() const { return jump_; }

 private:
  /// The memory and byte address of element run (p, offset) of `ap`.
  std::pair<TrackedBytes*, std::size_t> locate(const AccessPattern& ap, std::int64_t p,
                                               std::int64_t offset) {
    std::int64_t address = 0;
    TrackedBytes* memory = nullptr;
    switch (ap.memory) {
      case Memory::kSbuf:
        memory = &core_.sbuf_;
        address = (ap.partitionStart + p) * core_.options_.limits.sbufPartitionBytes + offset;
        break;
      case Memory::kPsum:
        memory = &core_.psum_;
        address = (ap.partitionStart + p) * core_.options_.limits.psumPartitionBytes() + offset;
        break;
      case Memory::kHbm:
        memory = core_.hbm_;
        address =
            core_.tensorAddress(ap.tensor) + p * ap.partitionStride * byteSize(ap.dtype) + offset;
        break;
    }
    TRN_CHECK(address >= 0 && static_cast<std::size_t>(address) < memory->size())
        << "access outside " << isa::memoryName(ap.memory) << " at byte " << address
        << " (the verifier should have rejected it)";
    return {memory, static_cast<std::size_t>(address)};
  }

  void checkInitialised(const TrackedBytes& memory, std::size_t address, std::size_t bytes,
                        const AccessPattern& ap) {
    if (!fault_.ok()) {
      return;
    }
    const std::optional<std::size_t> hole = memory.firstUnwritten(address, bytes);
    if (!hole) {
      return;
    }
    std::string where;
    if (ap.memory == Memory::kHbm) {
      where = fmt::format("tensor '{}' byte {}",
                          core_.program_->tensors[static_cast<std::size_t>(ap.tensor)].name,
                          static_cast<std::int64_t>(*hole) - core_.tensorAddress(ap.tensor));
    } else {
      const auto partitionBytes = static_cast<std::size_t>(
          ap.memory == Memory::kSbuf ? core_.options_.limits.sbufPartitionBytes
                                     : core_.options_.limits.psumPartitionBytes());
      where = fmt::format("{} partition {} byte {}", isa::memoryName(ap.memory),
                          *hole / partitionBytes, *hole % partitionBytes);
    }
    fault_ = failedPrecondition(fmt::format("poison: reads never-written memory at {}", where));
  }

  /// Stochastic-rounding stream of the current instruction: its engine and its position in that
  /// engine's execution sequence, independent of how engines interleave.
  [[nodiscard]] std::uint64_t roundingStream() const {
    return (static_cast<std::uint64_t>(engine_) << 56) | seq_.executed;
  }

  NeuronCore& core_;
  SequencerState& seq_;
  Engine engine_;
  Status fault_;
  std::int64_t jump_ = -1;
};

NeuronCore::NeuronCore(std::shared_ptr<const isa::Program> program, CoreOptions options)
    : program_(std::move(program)), options_(std::move(options)) {}

Status NeuronCore::bindTensors() {
  const std::vector<isa::TensorDecl>& tensors = program_->tensors;
  std::vector<std::int64_t>& addresses = options_.tensorAddresses;
  if (options_.device == nullptr) {
    if (!addresses.empty()) {
      return invalidArgument("tensor addresses were given without the device memory they lie in");
    }
    Checked<std::int64_t> total = 0;
    for (const isa::TensorDecl& t : tensors) {
      total += (Checked<std::int64_t>(std::max<std::int64_t>(t.byteSize(), 1)) + kDeviceAlignment);
    }
    if (!total.valid()) {
      return outOfRange("the program's HBM tensors together overflow a 64-bit size");
    }
    TRN_ASSIGN_OR_RETURN(options_.device,
                         DeviceMemory::create(std::max<std::int64_t>(total.value(), 1), 1,
                                              hasData(options_.mode), options_.poison));
    for (const isa::TensorDecl& t : tensors) {
      TRN_ASSIGN_OR_RETURN(
          addresses.emplace_back(),
          options_.device->allocate(t.byteSize(), 0, fmt::format("HBM tensor '{}'", t.name)));
    }
    return {};
  }
  if (addresses.size() != tensors.size()) {
    return invalidArgument(
        fmt::format("the program declares {} HBM tensors but {} device "
                    "addresses were given",
                    tensors.size(), addresses.size()));
  }
  if (hasData(options_.mode) && !options_.device->hasData()) {
    return invalidArgument(
        fmt::format("{} mode needs a device memory with data; this one was "
                    "made for timing only",
                    runModeName(options_.mode)));
  }
  if (options_.poison && !options_.device->bytes().tracking()) {
    return invalidArgument("poison detection needs a device memory that tracks writes");
  }
  std::vector<std::size_t> order(tensors.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::int64_t address = addresses[i];
    const std::int64_t size = tensors[i].byteSize();
    if (address < 0 || address > options_.device->capacity() ||
        size > options_.device->capacity() - address) {
      return outOfRange(fmt::format(
          "HBM tensor '{}' ({} bytes) at device address {} lies outside the {} bytes of HBM",
          tensors[i].name, size, address, options_.device->capacity()));
    }
    order[i] = i;
  }
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return addresses[a] < addresses[b]; });
  for (std::size_t k = 1; k < order.size(); ++k) {
    const std::size_t a = order[k - 1];
    const std::size_t b = order[k];
    if (addresses[a] + tensors[a].byteSize() > addresses[b] && tensors[a].byteSize() > 0 &&
        tensors[b].byteSize() > 0) {
      return invalidArgument(fmt::format(
          "HBM tensors '{}' (device bytes {}..{}) and '{}' (from {}) of one program overlap",
          tensors[a].name, addresses[a], addresses[a] + tensors[a].byteSize() - 1, tensors[b].name,
          addresses[b]));
    }
  }
  return {};
}

Status NeuronCore::allocateMemories() {
  TRN_RETURN_IF_ERROR(bindTensors());
  if (!hasData(options_.mode)) {
    return {};  // timing-only: no memory is allocated
  }
  TRN_RETURN_IF_ERROR(checkHostMemory(*program_, options_.limits, options_.poison));
  const isa::CoreLimits& limits = options_.limits;
  const bool poison = options_.poison;
  TRN_ASSIGN_OR_RETURN(sbuf_, TrackedBytes::create(static_cast<std::size_t>(limits.sbufBytes()),
                                                   poison, "SBUF"));
  TRN_ASSIGN_OR_RETURN(psum_, TrackedBytes::create(static_cast<std::size_t>(limits.psumBytes()),
                                                   poison, "PSUM"));
  hbm_ = &options_.device->bytes();
  return {};
}

Result<std::unique_ptr<NeuronCore>> NeuronCore::create(isa::Program program, CoreOptions options) {
  return create(std::make_shared<const isa::Program>(std::move(program)), std::move(options));
}

Result<std::unique_ptr<NeuronCore>> NeuronCore::create(std::shared_ptr<const isa::Program> program,
                                                       CoreOptions options) {
  TRN_CHECK(program != nullptr) << "NeuronCore::create needs a program";
  if (hasTiming(options.mode) && options.chip == nullptr) {
    return invalidArgument(fmt::format("{} mode needs a chip description (CoreOptions::chip)",
                                       runModeName(options.mode)));
  }
  if (options.chip != nullptr &&
      (options.physicalCore < 0 || options.physicalCore >= options.chip->chip.neuronCores)) {
    return invalidArgument(fmt::format("physical core {} does not exist: chip '{}' has cores 0..{}",
                                       options.physicalCore, options.chip->name,
                                       options.chip->chip.neuronCores - 1));
  }
  if (options.poison && !hasData(options.mode)) {
    return invalidArgument(fmt::format("poison detection needs data values; {} mode has none "
                                       "(use functional+timing or functional-only)",
                                       runModeName(options.mode)));
  }
  if (options.detectRaces && isa::kNumEngines + options.limits.dmaQueues > kBarrierSlot) {
    return unsupported(fmt::format(
        "race detection follows at most {} DMA queues but the core has {}; run without it "
        "(--allow-races)",
        kBarrierSlot - isa::kNumEngines, options.limits.dmaQueues));
  }
  isa::ProgramUse use;
  TRN_RETURN_IF_ERROR(isa::verifyProgram(*program, options.limits, &use));
  std::unique_ptr<NeuronCore> core(new NeuronCore(std::move(program), std::move(options)));
  core->use_ = std::move(use);
  TRN_RETURN_IF_ERROR(core->allocateMemories());
  return core;
}

Status NeuronCore::setTensor(std::string_view name, std::span<const std::byte> data) {
  const auto index = program_->findTensor(name);
  if (!index) {
    return notFound(fmt::format("the program has no tensor '{}'", name));
  }
  const auto expected =
      static_cast<std::size_t>(program_->tensors[static_cast<std::size_t>(*index)].byteSize());
  if (data.size() != expected) {
    return invalidArgument(
        fmt::format("tensor '{}' holds {} bytes but {} were given", name, expected, data.size()));
  }
  if (!hasData(options_.mode)) {
    return {};  // timing-only: values are not kept
  }
  return options_.device->write(tensorAddress(*index), data);
}

Result<std::span<const std::byte>> NeuronCore::tensorBytes(std::string_view name) const {
  const auto index = program_->findTensor(name);
  if (!index) {
    return notFound(fmt::format("the program has no tensor '{}'", name));
  }
  if (!hasData(options_.mode)) {
    return failedPrecondition(
        fmt::format("tensor '{}' has no values: the core ran in timing-only mode", name));
  }
  return options_.device->read(tensorAddress(*index),
                               program_->tensors[static_cast<std::size_t>(*index)].byteSize());
}

SequencerState NeuronCore::newSequencer() const {
  SequencerState seq;
  seq.registers.assign(static_cast<std::size_t>(options_.limits.registers), 0);
  seq.accumulators.assign(static_cast<std::size_t>(options_.limits.partitions), 0.0f);
  seq.rngSeed = options_.seed;
  return seq;
}

Status NeuronCore::execute(Engine engine, const isa::InstructionBody& instr, SequencerState& seq,
                           std::int64_t& jump) {
  const bool control = std::visit([](const auto& body) { return body.kInfo.isControl(); }, instr);
  jump = -1;
  if (!control && !hasData(options_.mode)) {
    ++seq.executed;
    return {};  // timing-only: data is not modelled, only control flow
  }
  Context ctx(*this, seq, engine);
  Status status = std::visit([&](const auto& body) { return body.execute(ctx); }, instr);
  if (status.ok()) {
    status = ctx.fault();
  }
  ++seq.executed;
  jump = ctx.jump();
  return status;
}

Status NeuronCore::readTile(Engine engine, SequencerState& seq, const isa::AccessPattern& ap,
                            std::span<std::byte> out) {
  Context ctx(*this, seq, engine);
  ctx.readBytes(ap, out);
  return ctx.fault();
}

Status NeuronCore::writeTile(Engine engine, SequencerState& seq, const isa::AccessPattern& ap,
                             std::span<const std::byte> in) {
  Context ctx(*this, seq, engine);
  ctx.writeBytes(ap, in);
  return ctx.fault();
}

Result<RunStats> NeuronCore::run() {
  TRN_ASSIGN_OR_RETURN(std::vector<RunStats> stats, runTogether({this}));
  return std::move(stats.front());
}

}  // namespace trn::core
