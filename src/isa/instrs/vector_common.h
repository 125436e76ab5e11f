// Helpers shared by the Vector-engine instruction families (vector_engine.cpp, vector_reduce.cpp):
// per-partition scalar operands, the "tensor op scalar" ALU stage with its reverse flag, single
// element sub-patterns for masked writes, and the verifier rules these instructions share.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/isa/alu.h"
#include "trn/isa/enums.h"
#include "trn/isa/exec_context.h"
#include "trn/isa/field.h"

namespace trn::isa::vector_detail {

/// One fp32 value per partition of an operand covering `partitions` partitions: the immediate
/// repeated, or the values of the [P, 1] tensor.
inline std::vector<float> perPartitionValues(ExecContext& ctx, const ScalarOperand& scalar,
                                             std::int64_t partitions) {
  std::vector<float> values(static_cast<std::size_t>(partitions));
  if (const float* immediate = std::get_if<float>(&scalar)) {
    std::fill(values.begin(), values.end(), *immediate);
  } else {
    ctx.readFloats(std::get<AccessPattern>(scalar), values);
  }
  return values;
}

/// One "tensor <op> scalar" stage: `data <op> operand`, or `operand <op> data` when `reverse`.
/// bypass skips the stage and passes `data` through (nki.isa activate2 semantics).
inline float applyStage(AluOp op, float data, float operand, bool reverse) {
  if (op == AluOp::kBypass) {
    return data;
  }
  return reverse ? applyAlu(op, operand, data) : applyAlu(op, data, operand);
}

/// The single element number `index` (partition-major, access-pattern order) of `ap`, as a
/// pattern of its own (on-chip memories only).
inline AccessPattern elementPattern(const AccessPattern& ap, std::int64_t index) {
  const std::int64_t free = ap.freeSize();
  AccessPattern one = ap;
  one.partitionStart = ap.partitionStart + index / free;
  one.partitionCount = 1;
  one.offset = ap.freeByteOffset(index % free);
  one.dims = {};
  one.numDims = 1;
  return one;
}

/// `op` is not a bitwise operator.
inline Status requireArithmetic(std::string_view field, AluOp op) {
  if (!isBitwise(op)) {
    return {};
  }
  return failedPrecondition(fmt::format("operand '{}': bitwise operator {} is not allowed; this "
                                        "instruction takes arithmetic operators only",
                                        field, enumName(op)));
}

/// `op` is one of `allowed`.
inline Status requireOp(std::string_view field, AluOp op, std::initializer_list<AluOp> allowed) {
  for (const AluOp a : allowed) {
    if (a == op) {
      return {};
    }
  }
  std::vector<std::string_view> names;
  for (const AluOp a : allowed) {
    names.push_back(enumName(a));
  }
  return failedPrecondition(fmt::format("operand '{}': operator {} is not allowed here (allowed: "
                                        "{})",
                                        field, enumName(op), fmt::join(names, ", ")));
}

/// `ap` holds an integer type (bitwise operators act on integers).
inline Status requireInteger(std::string_view operand, const AccessPattern& ap) {
  if (isInteger(ap.dtype)) {
    return {};
  }
  return failedPrecondition(fmt::format("operand '{}': dtype {} is not an integer type; bitwise "
                                        "operators act on integer data",
                                        operand, dtypeName(ap.dtype)));
}

/// At most one of two inputs is in PSUM (the Vector engine has one PSUM read port).
inline Status requireNotBothPsum(std::string_view nameA, const AccessPattern& a,
                                 std::string_view nameB, const AccessPattern& b) {
  if (a.memory != Memory::kPsum || b.memory != Memory::kPsum) {
    return {};
  }
  return failedPrecondition(fmt::format("operands '{}' and '{}' are both in PSUM; at most one of "
                                        "them may be",
                                        nameA, nameB));
}

}  // namespace trn::isa::vector_detail
