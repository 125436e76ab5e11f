// The allocator's in-place rule (see in_place.h).
#include "passes/in_place.h"

#include <algorithm>
#include <array>
#include <span>

#include "passes/operands.h"
#include "passes/spilling.h"

namespace trn::kernel {
namespace {

/// The instructions that compute each result element from the input elements at the same index
/// only, reading them before writing it, on any engine: a result may overwrite such an input.
bool elementWise(const isa::InstructionBody& body) {
  return std::holds_alternative<isa::TensorTensor>(body) ||
         std::holds_alternative<isa::TensorScalar>(body) ||
         std::holds_alternative<isa::ScalarTensorTensor>(body) ||
         std::holds_alternative<isa::TensorCopy>(body) ||
         std::holds_alternative<isa::Reciprocal>(body) ||
         std::holds_alternative<isa::Activation>(body) ||
         std::holds_alternative<isa::ActivationReduce>(body);
}

/// The tensor operands of one instruction, inputs and outputs apart.
class OpOperands {
 public:
  explicit OpOperands(const isa::InstructionBody& body) {
    forEachOperand(body, [&](isa::FieldRole role, const isa::AccessPattern& ap) {
      const bool output = role == isa::FieldRole::kOutput;
      std::size_t& count = output ? numOutputs_ : numInputs_;
      if (count == kMax) {
        complete_ = false;
      } else {
        (output ? outputs_ : inputs_)[count++] = &ap;
      }
    });
  }
  /// False when the instruction has more operands of a role than this records.
  [[nodiscard]] bool complete() const { return complete_; }
  [[nodiscard]] std::span<const isa::AccessPattern* const> inputs() const {
    return std::span(inputs_).first(numInputs_);
  }
  [[nodiscard]] std::span<const isa::AccessPattern* const> outputs() const {
    return std::span(outputs_).first(numOutputs_);
  }
  [[nodiscard]] bool reads(std::int32_t tile) const {
    return std::any_of(inputs().begin(), inputs().end(),
                       [&](const isa::AccessPattern* in) { return in->tensor == tile; });
  }
  [[nodiscard]] std::size_t writes(std::int32_t tile) const {
    return static_cast<std::size_t>(
        std::count_if(outputs().begin(), outputs().end(),
                      [&](const isa::AccessPattern* out) { return out->tensor == tile; }));
  }
  /// Whether every read of `tile` uses `pattern` (but for the tensor), and there is one.
  [[nodiscard]] bool readsOnlyAs(std::int32_t tile, const isa::AccessPattern& pattern) const {
    return reads(tile) &&
           std::all_of(inputs().begin(), inputs().end(), [&](const isa::AccessPattern* in) {
             isa::AccessPattern same = *in;
             same.tensor = pattern.tensor;
             return in->tensor != tile || same == pattern;
           });
  }

 private:
  static constexpr std::size_t kMax = 8;
  std::array<const isa::AccessPattern*, kMax> inputs_{};
  std::array<const isa::AccessPattern*, kMax> outputs_{};
  std::size_t numInputs_ = 0;
  std::size_t numOutputs_ = 0;
  bool complete_ = true;
};

/// How many instructions after the first piece of a result written in pieces the in-place rule
/// looks for the rest: a bound on the compiler's search, not a hardware limit.
constexpr std::int64_t kMaxPieceSpan = 64;

/// Whether instruction `at` computes a piece of `result` element-wise from the same piece of
/// `input` (read only there and only with the piece's pattern): returns the piece, or nullptr.
const isa::AccessPattern* inPlacePiece(const KernelIR& ir, const std::vector<std::uint8_t>& inLoop,
                                       std::int64_t at, std::int32_t result, std::int32_t input) {
  const isa::InstructionBody& body = ir.ops[static_cast<std::size_t>(at)].instr.body;
  if (inLoop[static_cast<std::size_t>(at)] != 0 || !elementWise(body)) {
    return nullptr;
  }
  const OpOperands operands(body);
  if (!operands.complete() || operands.writes(result) != 1 || operands.writes(input) != 0 ||
      operands.reads(result)) {
    return nullptr;
  }
  const auto outputs = operands.outputs();
  const isa::AccessPattern* piece =
      *std::find_if(outputs.begin(), outputs.end(),
                    [&](const isa::AccessPattern* out) { return out->tensor == result; });
  return operands.readsOnlyAs(input, *piece) ? piece : nullptr;
}

/// Whether `result`, first written at `first` with `firstPiece` from the same piece of `input`,
/// is computed in place over `input`: in one instruction that writes it whole, or in pieces, one
/// per instruction up to the last use of `input` (within kMaxPieceSpan), each over all partitions
/// with no broadcast stride, their bytes disjoint, together as many elements as the tile holds,
/// and every instruction between that touches either tile one of those pieces.
bool computedInPlace(const KernelIR& ir, const std::vector<std::int64_t>& lastUse,
                     const std::vector<std::uint8_t>& inLoop, std::int32_t result,
                     std::int32_t input, const isa::AccessPattern& firstPiece, std::int64_t first) {
  const Buffer& resultBuf = ir.buffers[static_cast<std::size_t>(result)];
  const std::int64_t last = lastUse[static_cast<std::size_t>(input)];
  if (last == first) {
    return coversWholeTile(firstPiece, resultBuf);
  }
  if (last - first > kMaxPieceSpan) {
    return false;
  }
  std::vector<isa::AccessPattern::ByteRange> bytes;
  std::int64_t elements = 0;
  for (std::int64_t at = first; at <= last; ++at) {
    const isa::AccessPattern* piece = &firstPiece;
    if (at > first) {
      bool touches = false;
      forEachOperand(ir.ops[static_cast<std::size_t>(at)].instr.body,
                     [&](isa::FieldRole, const isa::AccessPattern& ap) {
                       touches = touches || ap.tensor == result || ap.tensor == input;
                     });
      if (!touches) {
        continue;
      }
      piece = inPlacePiece(ir, inLoop, at, result, input);
    }
    if (piece == nullptr || piece->partitionStart != 0 ||
        piece->partitionCount != resultBuf.shape.front() ||
        std::any_of(piece->dims.begin(), piece->dims.begin() + piece->numDims,
                    [](const isa::Dim& d) { return d.stride == 0; })) {
      return false;
    }
    bytes.push_back(piece->byteRange());
    elements += piece->elementCount();
  }
  std::sort(bytes.begin(), bytes.end(),
            [](const auto& a, const auto& b) { return a.begin < b.begin; });
  for (std::size_t k = 1; k < bytes.size(); ++k) {
    if (bytes[k].begin < bytes[k - 1].end) {
      return false;
    }
  }
  return elements == resultBuf.elementCount();
}

}  // namespace

std::vector<std::int32_t> inPlaceSpaces(const KernelIR& ir,
                                        const std::vector<std::int64_t>& firstUse,
                                        const std::vector<std::int64_t>& lastUse) {
  std::vector<std::int32_t> spaceOf(ir.buffers.size());
  for (std::size_t b = 0; b < spaceOf.size(); ++b) {
    spaceOf[b] = static_cast<std::int32_t>(b);
  }
  std::vector<std::uint8_t> inLoop(ir.ops.size(), 0);
  for (const DynamicLoop& loop : ir.loops) {
    std::fill(inLoop.begin() + loop.begin, inLoop.begin() + loop.end, 1);
  }
  std::vector<std::uint8_t> given(ir.buffers.size(), 0);
  auto automatic = [&](std::int32_t b) {
    const Buffer& buf = ir.buffers[static_cast<std::size_t>(b)];
    return buf.memory != isa::Memory::kHbm && !buf.address;
  };
  for (std::size_t i = 0; i < ir.ops.size(); ++i) {
    const isa::InstructionBody& body = ir.ops[i].instr.body;
    if (inLoop[i] != 0 || !elementWise(body)) {
      continue;
    }
    const OpOperands operands(body);
    if (!operands.complete()) {
      continue;
    }
    const auto op = static_cast<std::int64_t>(i);
    for (const isa::AccessPattern* out : operands.outputs()) {
      const std::int32_t result = out->tensor;
      const Buffer& resultBuf = ir.buffers[static_cast<std::size_t>(result)];
      if (firstUse[static_cast<std::size_t>(result)] != op || !automatic(result) ||
          operands.writes(result) != 1 || operands.reads(result)) {
        continue;
      }
      for (const isa::AccessPattern* in : operands.inputs()) {
        const std::int32_t input = in->tensor;
        const Buffer& inputBuf = ir.buffers[static_cast<std::size_t>(input)];
        if (given[static_cast<std::size_t>(input)] != 0 || !automatic(input) ||
            inputBuf.memory != resultBuf.memory || inputBuf.dtype != resultBuf.dtype ||
            inputBuf.shape.front() != resultBuf.shape.front() ||
            inputBuf.partitionBytes() != resultBuf.partitionBytes() ||
            operands.writes(input) != 0 || !operands.readsOnlyAs(input, *out) ||
            !computedInPlace(ir, lastUse, inLoop, result, input, *out, op)) {
          continue;
        }
        spaceOf[static_cast<std::size_t>(result)] = spaceOf[static_cast<std::size_t>(input)];
        given[static_cast<std::size_t>(input)] = 1;
        break;
      }
    }
  }
  return spaceOf;
}

}  // namespace trn::kernel
