#include "passes/ir_verifier.h"

#include <fmt/format.h>

#include <map>

#include "passes/operands.h"
#include "trn/isa/verifier.h"

namespace trn::kernel {
namespace {

Status checkOperand(const KernelIR& ir, const isa::AccessPattern& ap) {
  if (ap.tensor < 0 || static_cast<std::size_t>(ap.tensor) >= ir.buffers.size()) {
    return Status(ErrorCode::kFailedPrecondition,
                  fmt::format("operand names buffer %{}, which does not exist", ap.tensor));
  }
  const Buffer& b = bufferOf(ir, ap);
  if (b.memory != ap.memory) {
    return Status(ErrorCode::kFailedPrecondition,
                  fmt::format("operand in {} names buffer '{}' of {}", isa::memoryName(ap.memory),
                              b.name, isa::memoryName(b.memory)));
  }
  if (!ir.allocated || b.memory == isa::Memory::kHbm) {
    return {};
  }
  if (!b.placement) {
    return Status(ErrorCode::kFailedPrecondition,
                  fmt::format("tile '{}' is used but was not placed", b.name));
  }
  const isa::AccessPattern::ByteRange range = ap.byteRange();
  const Address& at = *b.placement;
  if (ap.partitionStart < at.partition ||
      ap.partitionStart + ap.partitionCount > at.partition + b.shape[0] || range.begin < at.byte ||
      range.end > at.byte + b.partitionBytes()) {
    return Status(ErrorCode::kFailedPrecondition,
                  fmt::format("operand partitions {}..{} bytes {}..{} leave tile '{}' at partition "
                              "{} byte {}",
                              ap.partitionStart, ap.partitionStart + ap.partitionCount, range.begin,
                              range.end, b.name, at.partition, at.byte));
  }
  return {};
}

}  // namespace

Status verifyIR(const KernelIR& ir, const isa::CoreLimits& limits, std::string_view afterPass) {
  isa::Program probe;
  for (const Buffer& b : ir.buffers) {
    probe.tensors.push_back(isa::TensorDecl{b.name, b.hbmKind, b.dtype, b.shape});
  }
  std::map<std::int32_t, std::int64_t> updates;
  for (std::size_t i = 0; i < ir.ops.size(); ++i) {
    std::int64_t runs = 1;
    for (const DynamicLoop& loop : ir.loops) {
      if (loop.begin <= static_cast<std::int64_t>(i) && static_cast<std::int64_t>(i) < loop.end) {
        runs = loop.trips;
      }
    }
    isa::SemaphoreUpdate signal;
    for (const isa::SemaphoreUpdate& u : ir.semaphores.of(i, signal).updates) {
      updates[u.semaphore] += u.value * runs;
    }
  }
  for (std::size_t i = 0; i < ir.ops.size(); ++i) {
    const Op& op = ir.ops[i];
    Status status;
    forEachOperand(op.instr.body, [&](isa::FieldRole, const isa::AccessPattern& ap) {
      if (status.ok()) {
        status = checkOperand(ir, ap);
      }
    });
    if (status.ok()) {
      status = isa::verifyInstructionBody(op.instr.body, op.instr.engine, probe, limits);
    }
    isa::SemaphoreUpdate signal;
    for (const isa::SemaphoreWait& w : ir.semaphores.of(i, signal).waits) {
      if (status.ok() &&
          (w.semaphore < 0 || w.semaphore >= limits.semaphores || w.value > updates[w.semaphore])) {
        status = Status(ErrorCode::kFailedPrecondition,
                        fmt::format("waits for semaphore {} >= {}, which the program never reaches",
                                    w.semaphore, w.value));
      }
    }
    if (!status.ok()) {
      return status.withContext(fmt::format("kernel IR after pass '{}', instruction [{}] ({})",
                                            afterPass, i, formatLocation(ir, op.site)));
    }
  }
  return {};
}

}  // namespace trn::kernel
