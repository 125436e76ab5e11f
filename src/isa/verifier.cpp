#include "trn/isa/verifier.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_map>

#include "trn/base/checked.h"
#include "trn/isa/program_text.h"

namespace trn::isa {
namespace {

constexpr std::int64_t kMaxHbmCount = std::numeric_limits<std::int64_t>::max();

Status violation(std::string_view operand, std::string_view what) {
  return failedPrecondition(fmt::format("operand '{}': {}", operand, what));
}

/// Partition range and start-partition rule (hardware-trn2.md §5.1) for compute engines.
Status checkPartitions(std::string_view operand, const AccessPattern& ap, const CoreLimits& limits,
                       bool computeEngine) {
  const std::int64_t start = ap.partitionStart;
  const std::int64_t count = ap.partitionCount;
  if (start < 0 || count < 1 || start >= limits.partitions || count > limits.partitions - start) {
    const std::optional<std::int64_t> end = (Checked<std::int64_t>(start) + count).get();
    return violation(operand,
                     fmt::format("partitions [{}:{}] are outside 0..{}", start,
                                 end ? fmt::to_string(*end) : "beyond 2^63", limits.partitions));
  }
  if (!computeEngine) {
    return {};
  }
  const std::vector<StartPartitionRule>& rules = limits.startPartitionRules;
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const StartPartitionRule& rule = rules[i];
    if (count > rule.maxPartitions) {
      continue;
    }
    if (std::find(rule.starts.begin(), rule.starts.end(), start) != rule.starts.end()) {
      return {};
    }
    // The rule's range as the hardware guide words it: "<= 32", "33..64", "> 64".
    const std::int64_t lowest = i == 0 ? 1 : rules[i - 1].maxPartitions + 1;
    const std::string range = i == 0 ? fmt::format("<= {}", rule.maxPartitions)
                              : i + 1 == rules.size()
                                  ? fmt::format("> {}", lowest - 1)
                                  : fmt::format("{}..{}", lowest, rule.maxPartitions);
    std::string starts;
    for (std::size_t k = 0; k < rule.starts.size(); ++k) {
      starts += (k == 0                        ? ""
                 : k + 1 == rule.starts.size() ? " or "
                                               : ", ") +
                std::to_string(rule.starts[k]);
    }
    return violation(operand, fmt::format("an access of {} partitions ({}) must start at "
                                          "partition {}, not {}",
                                          count, range, starts, start));
  }
  return {};
}

/// Dimension counts, encodable sizes and strides, alignment and bounds. Every size is computed
/// with checked arithmetic (AccessPattern::checkedExtent) and bounded by the real size of the
/// memory it names, so that nothing downstream can overflow: an on-chip operand visits at most as
/// many elements per partition as the partition has bytes, and an operand that writes HBM at most
/// as many elements as its tensor holds.
Status checkPattern(std::string_view operand, FieldRole role, const AccessPattern& ap,
                    const Program& program, const CoreLimits& limits) {
  if (ap.numDims < 1 || ap.numDims > std::min<std::int64_t>(limits.maxFreeDims, kMaxFreeDims)) {
    return violation(operand,
                     fmt::format("{} free dimensions; the hardware allows 1 to {}", ap.numDims,
                                 std::min<std::int64_t>(limits.maxFreeDims, kMaxFreeDims)));
  }
  const bool onChip = ap.memory != Memory::kHbm;
  for (int d = 0; d < ap.numDims; ++d) {
    const Dim& dim = ap.dims[static_cast<std::size_t>(d)];
    if (dim.count < 1 || (onChip && dim.count > limits.freeDimMaxCount)) {
      return violation(operand,
                       fmt::format("free dimension {} has count {}; counts are 1..{}", d, dim.count,
                                   onChip ? limits.freeDimMaxCount : kMaxHbmCount));
    }
    if (onChip && (dim.stride < limits.freeDimMinStride || dim.stride > limits.freeDimMaxStride)) {
      return violation(
          operand, fmt::format("free dimension {} has stride {}; on-chip strides are "
                               "{}..{} elements",
                               d, dim.stride, limits.freeDimMinStride, limits.freeDimMaxStride));
    }
  }
  if (!onChip && ap.partitionCount < 1) {
    return violation(operand, fmt::format("row count {} is not positive", ap.partitionCount));
  }
  const std::int64_t elementBytes = byteSize(ap.dtype);
  if (ap.offset % elementBytes != 0) {
    return violation(operand, fmt::format("byte offset {} is not a multiple of the {}-byte {} "
                                          "element",
                                          ap.offset, elementBytes, dtypeName(ap.dtype)));
  }
  const std::optional<AccessPattern::Extent> extent = ap.checkedExtent();
  if (!extent) {
    return violation(operand,
                     "its size overflows 64-bit arithmetic: the product of its counts, "
                     "or counts x strides x element bytes plus the offset, does not fit "
                     "in a signed 64-bit integer");
  }
  const AccessPattern::ByteRange range = extent->bytes;
  if (ap.memory == Memory::kHbm) {
    if (ap.tensor < 0 || static_cast<std::size_t>(ap.tensor) >= program.tensors.size()) {
      return violation(operand, fmt::format("HBM tensor index {} is not declared", ap.tensor));
    }
    const TensorDecl& tensor = program.tensors[static_cast<std::size_t>(ap.tensor)];
    if (range.begin < 0 || range.end > tensor.byteSize()) {
      return violation(
          operand, fmt::format("bytes [{}, {}) fall outside tensor '{}' of {} bytes", range.begin,
                               range.end, tensor.name, tensor.byteSize()));
    }
    const std::int64_t capacity = tensor.byteSize() / elementBytes;
    if (role == FieldRole::kOutput && extent->elementCount > capacity) {
      return violation(
          operand, fmt::format("writes {} {} elements into tensor '{}', which holds "
                               "{}; a write visits each element at most once",
                               extent->elementCount, dtypeName(ap.dtype), tensor.name, capacity));
    }
    return {};
  }
  const std::int64_t capacity =
      ap.memory == Memory::kSbuf ? limits.sbufPartitionBytes : limits.psumPartitionBytes();
  if (range.begin < 0 || range.end > capacity) {
    return violation(operand, fmt::format("bytes [{}, {}) of each partition fall outside {}'s {} "
                                          "bytes per partition",
                                          range.begin, range.end, memoryName(ap.memory), capacity));
  }
  if (extent->freeSize > capacity) {
    return violation(operand, fmt::format("visits {} elements per partition, more than the {} "
                                          "bytes of a {} partition",
                                          extent->freeSize, capacity, memoryName(ap.memory)));
  }
  return {};
}

/// Which engine may touch which memory (hardware-trn2.md §5.1, §6, §7).
Status checkEngineMemory(std::string_view operand, FieldRole role, const AccessPattern& ap,
                         Engine engine, bool viaDma) {
  if (viaDma) {
    if (ap.memory == Memory::kPsum) {
      return violation(operand, "DMA transfers reach HBM and SBUF, not PSUM");
    }
    return {};
  }
  if (ap.memory == Memory::kHbm) {
    return violation(operand, fmt::format("the {} engine cannot access HBM; move data with "
                                          "dma_copy",
                                          engineName(engine)));
  }
  if (engine == Engine::kPe) {
    if (role == FieldRole::kOutput && ap.memory != Memory::kPsum) {
      return violation(operand, "the tensor engine writes only PSUM");
    }
    if (role != FieldRole::kOutput && ap.memory != Memory::kSbuf) {
      return violation(operand, "the tensor engine reads only SBUF");
    }
  }
  if (engine == Engine::kPool && ap.memory == Memory::kPsum) {
    return violation(operand, "the GpSimd engine cannot access PSUM");
  }
  return {};
}

Status checkSync(const Sync& sync, const CoreLimits& limits) {
  for (const SemaphoreWait& w : sync.waits) {
    if (w.semaphore < 0 || w.semaphore >= limits.semaphores) {
      return failedPrecondition(
          fmt::format("semaphore s{} does not exist (0..{})", w.semaphore, limits.semaphores - 1));
    }
  }
  for (const SemaphoreUpdate& u : sync.updates) {
    if (u.semaphore < 0 || u.semaphore >= limits.semaphores) {
      return failedPrecondition(
          fmt::format("semaphore s{} does not exist (0..{})", u.semaphore, limits.semaphores - 1));
    }
  }
  return {};
}

template <typename I>
Status verifyBody(const I& body, Engine engine, const Program& program, const CoreLimits& limits) {
  const std::size_t streamLength = program.stream(engine).size();
  if (!I::kInfo.engines.contains(engine)) {
    return failedPrecondition(fmt::format("{} cannot be issued by the {} engine (allowed: {})",
                                          I::kInfo.mnemonic, engineName(engine),
                                          I::kInfo.engines.toString()));
  }
  Status status;
  forEachAccessPattern(body, [&](std::string_view name, FieldRole role, const AccessPattern& ap) {
    if (!status.ok()) {
      return;
    }
    // A collective's operands are moved by the collective cores' DMA, not its engine.
    status =
        checkEngineMemory(name, role, ap, engine, I::kInfo.viaDma || std::is_same_v<I, Collective>);
    if (status.ok() && ap.memory != Memory::kHbm) {
      status = checkPartitions(name, ap, limits, !I::kInfo.viaDma);
    }
    if (status.ok()) {
      status = checkPattern(name, role, ap, program, limits);
    }
  });
  TRN_RETURN_IF_ERROR(status);
  if constexpr (requires { body.verify(std::declval<const VerifyContext&>()); }) {
    TRN_RETURN_IF_ERROR(body.verify(VerifyContext{limits, engine, streamLength}));
  }
  return {};
}

}  // namespace

Status verifyInstructionBody(const InstructionBody& body, Engine engine, const Program& program,
                             const CoreLimits& limits) {
  return std::visit([&](const auto& b) { return verifyBody(b, engine, program, limits); }, body);
}

Status verifyInstruction(const Instruction& instr, std::size_t index, const Program& program,
                         const CoreLimits& limits) {
  Status status = checkSync(instr.sync, limits);
  if (status.ok()) {
    status = verifyInstructionBody(instr.body, instr.engine, program, limits);
  }
  if (status.ok()) {
    return status;
  }
  std::string where = fmt::format("{}#{} '{}'", engineName(instr.engine), index,
                                  formatInstruction(instr, program, false));
  if (!instr.location.file.empty()) {
    where = fmt::format("{}:{}: {}", instr.location.file, instr.location.line, where);
  }
  return status.withContext(where);
}

namespace {

/// Adds what `sync` does to each semaphore to `use` (semaphores already checked to exist).
void recordUse(const Sync& sync, std::vector<SemaphoreUse>& use) {
  for (const SemaphoreWait& w : sync.waits) {
    SemaphoreUse& u = use[static_cast<std::size_t>(w.semaphore)];
    (w.compare == WaitCompare::kEqual ? u.waitedEqual : u.waitedAtLeast) = true;
  }
  for (const SemaphoreUpdate& update : sync.updates) {
    SemaphoreUse& u = use[static_cast<std::size_t>(update.semaphore)];
    switch (update.op) {
      case SemaphoreUpdateOp::kAdd:
        u.lowered = u.lowered || update.value < 0;
        u.changed = u.changed || update.value != 0;
        break;
      case SemaphoreUpdateOp::kSubtract:
        u.lowered = u.lowered || update.value > 0;
        u.changed = u.changed || update.value != 0;
        break;
      case SemaphoreUpdateOp::kSet:
        u.lowered = true;
        u.changed = true;
        break;
    }
  }
}

/// Marks the HBM tensors `body` writes in `written`.
void markWrittenTensors(const InstructionBody& body, std::vector<bool>& written) {
  std::visit(
      [&](const auto& b) {
        forEachAccessPattern(b, [&](std::string_view, FieldRole role, const AccessPattern& ap) {
          if (role == FieldRole::kOutput && ap.memory == Memory::kHbm && ap.tensor >= 0 &&
              static_cast<std::size_t>(ap.tensor) < written.size()) {
            written[static_cast<std::size_t>(ap.tensor)] = true;
          }
        });
      },
      body);
}

}  // namespace

Status verifyProgram(const Program& program, const CoreLimits& limits, ProgramUse* use) {
  if (use != nullptr) {
    use->semaphores.assign(static_cast<std::size_t>(std::max(limits.semaphores, 0)),
                           SemaphoreUse{});
    use->writtenTensors.assign(program.tensors.size(), false);
  }
  Checked<std::int64_t> hbmTotal = 0;
  std::unordered_map<std::string_view, std::size_t> names;
  for (std::size_t i = 0; i < program.tensors.size(); ++i) {
    const TensorDecl& t = program.tensors[i];
    TRN_RETURN_IF_ERROR(checkTensorDecl(t));
    if (const auto [at, inserted] = names.emplace(t.name, i); !inserted) {
      return failedPrecondition(
          fmt::format("tensors {} and {} are both named '{}'", at->second, i, t.name));
    }
    hbmTotal += t.byteSize();
    if (!hbmTotal.valid() || hbmTotal.value() > limits.hbmBytes) {
      const std::string need =
          hbmTotal.valid() ? std::to_string(hbmTotal.value())
                           : fmt::format("more than {}", std::numeric_limits<std::int64_t>::max());
      return failedPrecondition(
          fmt::format("the program's HBM tensors need {} bytes by tensor "
                      "'{}', more than the device's {} bytes of HBM",
                      need, t.name, limits.hbmBytes));
    }
  }
  // Where the first core_barrier, sendrecv and collective are: each kind must come from one
  // engine, so that the k-th of each core is the same whatever the timing.
  std::optional<std::pair<Engine, std::size_t>> firstBarrier;
  std::optional<std::pair<Engine, std::size_t>> firstExchange;
  std::optional<std::pair<Engine, std::size_t>> firstCollective;
  auto oneEngine = [](std::optional<std::pair<Engine, std::size_t>>& first, const char* what,
                      Engine engine, std::size_t i) -> Status {
    if (first && first->first != engine) {
      return failedPrecondition(fmt::format(
          "{0} at {1}#{2} and at {3}#{4}: a program issues its {0} instructions from one engine, "
          "so that the k-th {0} of each core is the same whatever the timing",
          what, engineName(first->first), first->second, engineName(engine), i));
    }
    first = std::pair(engine, i);
    return {};
  };
  for (const Engine engine : kAllEngines) {
    const InstructionStream& stream = program.stream(engine);
    Instruction instr;
    for (std::size_t i = 0; i < stream.size(); ++i) {
      stream.decode(i, instr);
      TRN_RETURN_IF_ERROR(verifyInstruction(instr, i, program, limits));
      if (std::holds_alternative<CoreBarrier>(instr.body)) {
        TRN_RETURN_IF_ERROR(oneEngine(firstBarrier, "core_barrier", engine, i));
      } else if (std::holds_alternative<SendRecv>(instr.body)) {
        TRN_RETURN_IF_ERROR(oneEngine(firstExchange, "sendrecv", engine, i));
      } else if (std::holds_alternative<Collective>(instr.body)) {
        TRN_RETURN_IF_ERROR(oneEngine(firstCollective, "collective", engine, i));
      }
      if (use != nullptr) {
        recordUse(instr.sync, use->semaphores);
        markWrittenTensors(instr.body, use->writtenTensors);
      }
    }
  }
  return {};
}

std::vector<bool> writtenTensors(const Program& program) {
  std::vector<bool> written(program.tensors.size(), false);
  for (const auto& stream : program.streams) {
    for (const Instruction& instr : stream) {
      markWrittenTensors(instr.body, written);
    }
  }
  return written;
}

std::vector<std::string> programWarnings(const Program& program) {
  const std::vector<bool> written = writtenTensors(program);
  std::vector<std::string> warnings;
  for (std::size_t t = 0; t < program.tensors.size(); ++t) {
    if (program.tensors[t].kind == TensorKind::kOutput && !written[t]) {
      warnings.push_back(
          fmt::format("output tensor '{}' is never written by the program; it "
                      "reads back as zeros",
                      program.tensors[t].name));
    }
  }
  return warnings;
}

Status requireMemory(std::string_view operand, const AccessPattern& ap,
                     std::initializer_list<Memory> memories) {
  for (const Memory m : memories) {
    if (ap.memory == m) {
      return {};
    }
  }
  std::vector<std::string_view> names;
  for (const Memory m : memories) {
    names.push_back(memoryName(m));
  }
  return violation(operand, fmt::format("is in {}; this instruction needs {}",
                                        memoryName(ap.memory), fmt::join(names, " or ")));
}

Status requireDType(std::string_view operand, const AccessPattern& ap,
                    std::initializer_list<DType> dtypes) {
  for (const DType t : dtypes) {
    if (ap.dtype == t) {
      return {};
    }
  }
  std::vector<std::string_view> names;
  for (const DType t : dtypes) {
    names.push_back(dtypeName(t));
  }
  return violation(operand, fmt::format("dtype {} is not allowed here (allowed: {})",
                                        dtypeName(ap.dtype), fmt::join(names, ", ")));
}

Status requireFloat(std::string_view operand, const AccessPattern& ap) {
  if (isFloat(ap.dtype)) {
    return {};
  }
  return violation(operand,
                   fmt::format("dtype {} is not a floating-point type", dtypeName(ap.dtype)));
}

Status requireSameShape(std::string_view operandA, const AccessPattern& a,
                        std::string_view operandB, const AccessPattern& b) {
  if (a.partitionCount == b.partitionCount && a.freeSize() == b.freeSize()) {
    return {};
  }
  return failedPrecondition(fmt::format(
      "operands '{}' [{} partitions x {}] and '{}' [{} partitions x {}] differ in shape", operandA,
      a.partitionCount, a.freeSize(), operandB, b.partitionCount, b.freeSize()));
}

Status requirePerPartitionScalar(std::string_view operand, const ScalarOperand& scalar,
                                 const AccessPattern& data) {
  const auto* ap = std::get_if<AccessPattern>(&scalar);
  if (ap == nullptr) {
    return {};
  }
  if (ap->partitionCount != data.partitionCount || ap->freeSize() != 1) {
    return violation(operand, fmt::format("a per-partition operand must be [{}, 1], not [{}, {}]",
                                          data.partitionCount, ap->partitionCount, ap->freeSize()));
  }
  return {};
}

Status requireFreeSizeAtMost(std::string_view operand, const AccessPattern& ap, std::int64_t limit,
                             std::string_view rule) {
  if (ap.freeSize() <= limit) {
    return {};
  }
  return violation(operand,
                   fmt::format("free size {} exceeds {} ({})", ap.freeSize(), limit, rule));
}

Status requireComputeTileSize(std::string_view operand, const AccessPattern& ap,
                              const CoreLimits& limits) {
  return ap.memory == Memory::kPsum ? requireFreeSizeAtMost(operand, ap, limits.maxFreeElementsPsum,
                                                            "Vector/Scalar free size from PSUM")
                                    : requireFreeSizeAtMost(operand, ap, limits.maxFreeElementsSbuf,
                                                            "Vector/Scalar free size from SBUF");
}

}  // namespace trn::isa
