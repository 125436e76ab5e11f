#include "program_generator.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "trn/base/check.h"

namespace trn::bench {
namespace {

using isa::AccessPattern;
using isa::Engine;
using isa::Memory;

constexpr std::int64_t kBf16Bytes = 2;
constexpr std::int64_t kFp32Bytes = 4;

/// Semaphores of one SBUF slot per producer besides the split loads and stores: pe, pool, act, dve.
constexpr std::int32_t kStageSemaphores = 4;

/// The value a signal brings its semaphore to: waiting for `s >= value` orders the waiter after
/// that signal and every earlier one on the same semaphore.
struct Token {
  std::int32_t semaphore = -1;
  std::int32_t value = 0;
};

/// Per SBUF slot: one semaphore per x block load and per w load of each contraction step, the
/// four stages, and one per store block.
std::int64_t semaphoresPerSlot(const GeneratorOptions& options) {
  return std::int64_t{options.contractionSteps} * (std::int64_t{options.loadSplit} + 1) +
         kStageSemaphores + options.storeSplit;
}

/// Tile shapes from the chip's limits and the per-partition SBUF layout of one slot.
struct Geometry {
  std::int64_t k = 0;        ///< contraction rows per step (partitions of x and w)
  std::int64_t m = 0;        ///< output partitions (stationary free size)
  std::int64_t n = 0;        ///< output columns (moving free size; one fp32 PSUM bank)
  std::int64_t xOffset = 0;  ///< xs[k]: contractionSteps x n bf16
  std::int64_t wOffset = 0;  ///< ws[k]: contractionSteps x m bf16
  std::int64_t hOffset = 0;  ///< hs: n bf16
  std::int64_t gOffset = 0;  ///< gs: n fp32
  std::int64_t oOffset = 0;  ///< os: n bf16
  std::int64_t slotBytes = 0;
};

Geometry geometryFor(const GeneratorOptions& options, const isa::CoreLimits& limits) {
  Geometry g;
  g.k = std::min(limits.matmulMaxContraction, limits.partitions);
  g.m = std::min(limits.matmulMaxStationaryFree, limits.partitions);
  g.n = std::min(
      {limits.matmulMaxMovingFree, limits.psumBankBytes / kFp32Bytes, limits.maxFreeElementsPsum});
  const std::int64_t steps = options.contractionSteps;
  g.xOffset = 0;
  g.wOffset = g.xOffset + steps * g.n * kBf16Bytes;
  g.hOffset = g.wOffset + steps * g.m * kBf16Bytes;
  g.gOffset = g.hOffset + g.n * kBf16Bytes;
  g.oOffset = g.gOffset + g.n * kFp32Bytes;
  g.slotBytes = g.oOffset + g.n * kBf16Bytes;
  return g;
}

AccessPattern onChip(Memory memory, DType dtype, std::int64_t partitionStart,
                     std::int64_t partitionCount, std::int64_t offset, std::int64_t elements) {
  AccessPattern ap;
  ap.memory = memory;
  ap.dtype = dtype;
  ap.partitionStart = partitionStart;
  ap.partitionCount = partitionCount;
  ap.offset = offset;
  ap.dims[0] = isa::Dim{1, elements};
  ap.numDims = 1;
  return ap;
}

/// Rows [row, row + rows) and columns [column, column + elements) of a row-major HBM tensor.
AccessPattern hbm(std::int32_t tensor, DType dtype, std::int64_t rowLength, std::int64_t row,
                  std::int64_t rows, std::int64_t column, std::int64_t elements) {
  AccessPattern ap;
  ap.memory = Memory::kHbm;
  ap.dtype = dtype;
  ap.tensor = tensor;
  ap.partitionCount = rows;
  ap.partitionStride = rowLength;
  ap.offset = (row * rowLength + column) * byteSize(dtype);
  ap.dims[0] = isa::Dim{1, elements};
  ap.numDims = 1;
  return ap;
}

Status validate(const GeneratorOptions& options, const isa::CoreLimits& limits, const Geometry& g) {
  if (options.instructions < 1) {
    return invalidArgument(
        fmt::format("instructions must be positive, not {}", options.instructions));
  }
  if (options.sbufSlots < 2) {
    return invalidArgument(
        fmt::format("sbufSlots must be at least 2 (double buffering), not {}", options.sbufSlots));
  }
  if (options.psumSlots < 2 || options.psumSlots > limits.psumBanks) {
    return invalidArgument(fmt::format("psumSlots must be 2..{} (the PSUM banks), not {}",
                                       limits.psumBanks, options.psumSlots));
  }
  if (options.contractionSteps < 1 || options.inputBlocks < 1) {
    return invalidArgument(
        fmt::format("contractionSteps ({}) and inputBlocks ({}) must be positive",
                    options.contractionSteps, options.inputBlocks));
  }
  if (options.loadSplit < 1 || g.k % options.loadSplit != 0) {
    return invalidArgument(fmt::format("loadSplit ({}) must divide the {} contraction partitions",
                                       options.loadSplit, g.k));
  }
  if (options.storeSplit < 1 || g.m % options.storeSplit != 0) {
    return invalidArgument(fmt::format("storeSplit ({}) must divide the {} output partitions",
                                       options.storeSplit, g.m));
  }
  if (options.dmaQueues < 0 || options.dmaQueues > limits.dmaQueues || limits.dmaQueues < 1) {
    return invalidArgument(fmt::format("dmaQueues must be 0 (all) or 1..{}, not {}",
                                       limits.dmaQueues, options.dmaQueues));
  }
  if (g.n < 1) {
    return failedPrecondition("the chip's PSUM bank holds no fp32 element");
  }
  const std::int64_t semaphores = pipelineSemaphoreCount(options);
  if (semaphores > limits.semaphores) {
    return failedPrecondition(fmt::format("the program needs {} semaphores; the core has {}",
                                          semaphores, limits.semaphores));
  }
  if (g.slotBytes * options.sbufSlots > limits.sbufPartitionBytes) {
    return failedPrecondition(
        fmt::format("{} SBUF slots of {} bytes exceed the {} bytes of a partition",
                    options.sbufSlots, g.slotBytes, limits.sbufPartitionBytes));
  }
  return {};
}

/// Emits the program in a global order that is itself a valid schedule: every wait refers to a
/// signal emitted earlier, and semaphores only grow, so no run can deadlock.
class PipelineBuilder {
 public:
  PipelineBuilder(const GeneratorOptions& options, const isa::CoreLimits& limits, Geometry g)
      : options_(options),
        g_(g),
        queues_(options.dmaQueues == 0 ? limits.dmaQueues : options.dmaQueues),
        bankBytes_(limits.psumBankBytes),
        semaphoresPerSlot_(semaphoresPerSlot(options)),
        counts_(static_cast<std::size_t>(pipelineSemaphoreCount(options)), 0),
        ring_(static_cast<std::size_t>(std::max(options.sbufSlots, options.psumSlots) + 4)) {
    for (TileTokens& entry : ring_) {
      entry.xload.resize(static_cast<std::size_t>(options.contractionSteps * options.loadSplit));
      entry.wload.resize(static_cast<std::size_t>(options.contractionSteps));
      entry.store.resize(static_cast<std::size_t>(options.storeSplit));
    }
  }

  isa::Program build(std::int64_t tiles, std::int64_t padding) {
    declareTensors();
    reserve(tiles, padding);
    // Software pipeline: step s loads tile s, multiplies tile s-1, activates and post-processes
    // tile s-2 and stores tile s-3, in that order.
    for (std::int64_t s = 0; s < tiles + 3; ++s) {
      if (s < tiles) {
        emitLoads(s);
      }
      if (s >= 1 && s - 1 < tiles) {
        emitMatmuls(s - 1);
        emitPool(s - 1);
      }
      if (s >= 2 && s - 2 < tiles) {
        emitActivation(s - 2);
        emitVector(s - 2);
      }
      if (s >= 3 && s - 3 < tiles) {
        emitStores(s - 3);
      }
    }
    for (std::int64_t i = 0; i < padding; ++i) {
      program_.stream(Engine::kSp).push_back(isa::Instruction{Engine::kSp, isa::Nop{}, {}, {}});
    }
    return std::move(program_);
  }

 private:
  /// The signals of one tile, kept for the tiles that later waits refer to.
  struct TileTokens {
    std::int64_t tile = -1;
    std::vector<Token> xload;  ///< [step * loadSplit + block]
    std::vector<Token> wload;  ///< [step]
    Token pe;
    Token pool;
    Token act;
    Token dve;
    std::vector<Token> store;  ///< [block]
  };

  enum Tensor : std::int32_t { kX, kW, kOut };

  void declareTensors() {
    const std::int64_t rows = std::int64_t{options_.contractionSteps} * g_.k;
    program_.tensors = {
        {"x", isa::TensorKind::kInput, DType::kBf16, {rows, options_.inputBlocks * g_.n}},
        {"w", isa::TensorKind::kInput, DType::kBf16, {rows, options_.inputBlocks * g_.m}},
        {"out", isa::TensorKind::kOutput, DType::kBf16, {g_.m, options_.sbufSlots * g_.n}},
    };
  }

  void reserve(std::int64_t tiles, std::int64_t padding) {
    const std::int64_t steps = options_.contractionSteps;
    const auto reserveFor = [&](Engine engine, std::int64_t perTile, std::int64_t extra) {
      program_.stream(engine).reserve(static_cast<std::size_t>(tiles * perTile + extra));
    };
    reserveFor(Engine::kSp, steps * options_.loadSplit + options_.storeSplit, padding);
    reserveFor(Engine::kAct, steps + 1, 0);
    reserveFor(Engine::kPe, steps, 0);
    reserveFor(Engine::kPool, 1, 0);
    reserveFor(Engine::kDve, 2, 0);
  }

  [[nodiscard]] std::int64_t slotOf(std::int64_t tile) const { return tile % options_.sbufSlots; }

  /// The ring entry of `tile`; `fresh` starts it, otherwise it must hold that tile's signals.
  TileTokens& tokens(std::int64_t tile, bool fresh = false) {
    TileTokens& entry = ring_[static_cast<std::size_t>(tile) % ring_.size()];
    if (fresh) {
      entry.tile = tile;
    }
    TRN_CHECK(entry.tile == tile) << "generator: tile " << tile << " is no longer tracked";
    return entry;
  }

  /// Semaphore of slot `slot`: index `index` in the slot's block.
  [[nodiscard]] std::int32_t semaphore(std::int64_t slot, std::int64_t index) const {
    return static_cast<std::int32_t>(slot * semaphoresPerSlot_ + index);
  }
  [[nodiscard]] std::int64_t xloadIndex(std::int64_t step, std::int64_t block) const {
    return step * options_.loadSplit + block;
  }
  [[nodiscard]] std::int64_t wloadIndex(std::int64_t step) const {
    return std::int64_t{options_.contractionSteps} * options_.loadSplit + step;
  }
  [[nodiscard]] std::int64_t stageIndex(std::int64_t stage) const {
    return std::int64_t{options_.contractionSteps} * (options_.loadSplit + 1) + stage;
  }
  [[nodiscard]] std::int64_t storeIndex(std::int64_t block) const {
    return stageIndex(kStageSemaphores) + block;
  }

  /// Adds a wait for `token` to `sync`; an empty token (no earlier tile) adds nothing.
  void addWait(isa::Sync& sync, Token token) const {
    if (token.semaphore < 0) {
      return;
    }
    TRN_CHECK(counts_[static_cast<std::size_t>(token.semaphore)] >= token.value)
        << "generator: a wait on a signal that is not emitted yet";
    sync.waits.push_back({token.semaphore, isa::WaitCompare::kGreaterEqual, token.value});
  }

  /// Appends an instruction with `sync` that also signals `signal` (if >= 0) by 1 on completion;
  /// returns that signal's token.
  Token append(Engine engine, isa::InstructionBody body, isa::Sync sync, std::int32_t signal) {
    Token token;
    if (signal >= 0) {
      sync.updates.push_back({signal, isa::SemaphoreUpdateOp::kAdd, 1});
      token = {signal, ++counts_[static_cast<std::size_t>(signal)]};
    }
    program_.stream(engine).push_back(
        isa::Instruction{engine, std::move(body), std::move(sync), {}});
    return token;
  }

  Token emit(Engine engine, isa::InstructionBody body, std::initializer_list<Token> waits,
             std::int32_t signal) {
    isa::Sync sync;
    for (const Token& w : waits) {
      addWait(sync, w);
    }
    return append(engine, std::move(body), std::move(sync), signal);
  }

  std::int64_t nextQueue() { return queue_++ % queues_; }

  /// Signals of tile `tile` when it exists, else an empty token (no wait).
  Token earlier(std::int64_t tile, Token TileTokens::*member) {
    return tile < 0 ? Token{} : tokens(tile).*member;
  }

  void emitLoads(std::int64_t t) {
    TileTokens& mine = tokens(t, true);
    const std::int64_t b = slotOf(t);
    const std::int64_t block = t % options_.inputBlocks;
    // WAR: the previous tile in this slot has been multiplied.
    const Token free = earlier(t - options_.sbufSlots, &TileTokens::pe);
    const std::int64_t rows = g_.k / options_.loadSplit;
    const std::int64_t base = b * g_.slotBytes;
    for (std::int64_t step = 0; step < options_.contractionSteps; ++step) {
      for (std::int64_t j = 0; j < options_.loadSplit; ++j) {
        isa::DmaCopy load;
        load.dst = onChip(Memory::kSbuf, DType::kBf16, j * rows, rows,
                          base + g_.xOffset + step * g_.n * kBf16Bytes, g_.n);
        load.src = hbm(kX, DType::kBf16, options_.inputBlocks * g_.n, step * g_.k + j * rows, rows,
                       block * g_.n, g_.n);
        load.queue = nextQueue();
        mine.xload[static_cast<std::size_t>(xloadIndex(step, j))] =
            emit(Engine::kSp, std::move(load), {free}, semaphore(b, xloadIndex(step, j)));
      }
    }
    for (std::int64_t step = 0; step < options_.contractionSteps; ++step) {
      isa::DmaCopy load;
      load.dst = onChip(Memory::kSbuf, DType::kBf16, 0, g_.k,
                        base + g_.wOffset + step * g_.m * kBf16Bytes, g_.m);
      load.src =
          hbm(kW, DType::kBf16, options_.inputBlocks * g_.m, step * g_.k, g_.k, block * g_.m, g_.m);
      load.queue = nextQueue();
      mine.wload[static_cast<std::size_t>(step)] =
          emit(Engine::kAct, std::move(load), {free}, semaphore(b, wloadIndex(step)));
    }
  }

  /// The PSUM bank of tile `t`.
  [[nodiscard]] AccessPattern psumTile(std::int64_t t) const {
    return onChip(Memory::kPsum, DType::kFp32, 0, g_.m, (t % options_.psumSlots) * bankBytes_,
                  g_.n);
  }

  void emitMatmuls(std::int64_t t) {
    TileTokens& mine = tokens(t);
    const std::int64_t b = slotOf(t);
    const std::int64_t base = b * g_.slotBytes;
    // WAR on the PSUM bank: the activation of its previous tile has read it.
    const Token bankFree = earlier(t - options_.psumSlots, &TileTokens::act);
    for (std::int64_t step = 0; step < options_.contractionSteps; ++step) {
      isa::NcMatmul mm;
      mm.dst = psumTile(t);
      mm.stationary = onChip(Memory::kSbuf, DType::kBf16, 0, g_.k,
                             base + g_.wOffset + step * g_.m * kBf16Bytes, g_.m);
      mm.moving = onChip(Memory::kSbuf, DType::kBf16, 0, g_.k,
                         base + g_.xOffset + step * g_.n * kBf16Bytes, g_.n);
      mm.accumulate = step > 0;
      // One wait per block load of this step (an instruction carries several waits).
      isa::Sync sync;
      addWait(sync, mine.wload[static_cast<std::size_t>(step)]);
      for (std::int64_t j = 0; j < options_.loadSplit; ++j) {
        addWait(sync, mine.xload[static_cast<std::size_t>(xloadIndex(step, j))]);
      }
      if (step == 0) {
        addWait(sync, bankFree);
      }
      const bool last = step + 1 == options_.contractionSteps;
      const Token done = append(Engine::kPe, std::move(mm), std::move(sync),
                                last ? semaphore(b, stageIndex(0)) : -1);
      if (last) {
        mine.pe = done;
      }
    }
  }

  void emitPool(std::int64_t t) {
    TileTokens& mine = tokens(t);
    const std::int64_t b = slotOf(t);
    const AccessPattern gs =
        onChip(Memory::kSbuf, DType::kFp32, 0, g_.m, b * g_.slotBytes + g_.gOffset, g_.n);
    // WAR: the Vector engine has consumed the previous tile's gs.
    const Token free = earlier(t - options_.sbufSlots, &TileTokens::dve);
    isa::InstructionBody body;
    if (t % 2 == 0) {
      isa::Iota iota;
      iota.dst = gs;
      iota.pattern.dims[0] = isa::Dim{1, g_.n};
      iota.offset = t % 1024;
      iota.channelMultiplier = 1;
      body = std::move(iota);
    } else {
      isa::Memset memset;
      memset.dst = gs;
      memset.value = 1.0f;
      body = std::move(memset);
    }
    mine.pool = emit(Engine::kPool, std::move(body), {free}, semaphore(b, stageIndex(1)));
  }

  void emitActivation(std::int64_t t) {
    TileTokens& mine = tokens(t);
    const std::int64_t b = slotOf(t);
    isa::Activation act;
    act.dst = onChip(Memory::kSbuf, DType::kBf16, 0, g_.m, b * g_.slotBytes + g_.hOffset, g_.n);
    act.data = psumTile(t);
    act.function = isa::ActivationFunction::kGelu;
    // RAW on the PSUM tile; WAR: the Vector engine has consumed the previous hs of this slot.
    mine.act = emit(Engine::kAct, std::move(act),
                    {mine.pe, earlier(t - options_.sbufSlots, &TileTokens::dve)},
                    semaphore(b, stageIndex(2)));
  }

  void emitVector(std::int64_t t) {
    TileTokens& mine = tokens(t);
    const std::int64_t b = slotOf(t);
    const std::int64_t base = b * g_.slotBytes;
    const AccessPattern os = onChip(Memory::kSbuf, DType::kBf16, 0, g_.m, base + g_.oOffset, g_.n);
    isa::TensorTensor add;
    add.dst = os;
    add.data0 = onChip(Memory::kSbuf, DType::kBf16, 0, g_.m, base + g_.hOffset, g_.n);
    add.data1 = onChip(Memory::kSbuf, DType::kFp32, 0, g_.m, base + g_.gOffset, g_.n);
    add.op = isa::AluOp::kAdd;
    // WAR on os: every block of the previous store from this slot has been read.
    isa::Sync sync;
    addWait(sync, mine.act);
    addWait(sync, mine.pool);
    if (t >= options_.sbufSlots) {
      for (const Token& w : tokens(t - options_.sbufSlots).store) {
        addWait(sync, w);
      }
    }
    append(Engine::kDve, std::move(add), std::move(sync), -1);

    isa::TensorScalar scale;
    scale.dst = os;
    scale.data = os;
    scale.op0 = isa::AluOp::kMultiply;
    scale.operand0 = 0.5f;
    scale.op1 = isa::AluOp::kAdd;
    scale.operand1 = 0.25f;
    mine.dve = emit(Engine::kDve, std::move(scale), {}, semaphore(b, stageIndex(3)));
  }

  void emitStores(std::int64_t t) {
    TileTokens& mine = tokens(t);
    const std::int64_t b = slotOf(t);
    const std::int64_t rows = g_.m / options_.storeSplit;
    for (std::int64_t j = 0; j < options_.storeSplit; ++j) {
      isa::DmaCopy store;
      store.dst =
          hbm(kOut, DType::kBf16, options_.sbufSlots * g_.n, j * rows, rows, b * g_.n, g_.n);
      store.src =
          onChip(Memory::kSbuf, DType::kBf16, j * rows, rows, b * g_.slotBytes + g_.oOffset, g_.n);
      store.queue = nextQueue();
      mine.store[static_cast<std::size_t>(j)] =
          emit(Engine::kSp, std::move(store), {mine.dve}, semaphore(b, storeIndex(j)));
    }
  }

  const GeneratorOptions& options_;
  Geometry g_;
  std::int64_t queues_;
  std::int64_t bankBytes_;
  std::int64_t semaphoresPerSlot_;
  std::int64_t queue_ = 0;
  std::vector<std::int32_t> counts_;
  std::vector<TileTokens> ring_;
  isa::Program program_;
};

}  // namespace

std::int64_t pipelineInstructionsPerTile(const GeneratorOptions& options) {
  const std::int64_t steps = options.contractionSteps;
  // loads (x blocks, w), matmuls, pool, activation, two vector ops, stores
  return steps * options.loadSplit + steps + steps + 1 + 1 + 2 + options.storeSplit;
}

std::int64_t pipelineSemaphoreCount(const GeneratorOptions& options) {
  return std::int64_t{options.sbufSlots} * semaphoresPerSlot(options);
}

Result<isa::Program> generatePipelineProgram(const GeneratorOptions& options,
                                             const isa::CoreLimits& limits) {
  const Geometry g = geometryFor(options, limits);
  TRN_RETURN_IF_ERROR(validate(options, limits, g));
  const std::int64_t perTile = pipelineInstructionsPerTile(options);
  const std::int64_t tiles = std::max<std::int64_t>(1, options.instructions / perTile);
  const std::int64_t padding = std::max<std::int64_t>(0, options.instructions - tiles * perTile);
  // Each semaphore is signalled once per tile of its slot; its count must fit in int32.
  if (tiles / options.sbufSlots >= std::numeric_limits<std::int32_t>::max()) {
    return invalidArgument(fmt::format("{} tiles overflow the 32-bit semaphore counts", tiles));
  }
  PipelineBuilder builder(options, limits, g);
  return builder.build(tiles, padding);
}

}  // namespace trn::bench
