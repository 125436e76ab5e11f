// The verifier: checks a Program against the hardware rules before it runs. Generic rules are
// applied to every instruction from its declaration (allowed engines, which engine may touch which
// memory, partition ranges and start-partition rules, access-pattern dimension and encoding
// limits, alignment, bounds of every access, semaphore indices); instruction-specific rules (tile
// limits, dtypes, shapes) come from each instruction's verify(). A violation names the instruction
// (engine, index in its stream, and text), the operand, the rule and the offending values.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/isa/core_limits.h"
#include "trn/isa/program.h"

namespace trn::isa {

/// How a program uses one semaphore, gathered while it is verified (the race detector's
/// semaphore-condition check needs it, and this saves it a pass over every instruction).
struct SemaphoreUse {
  bool lowered = false;        ///< some update can decrease it (subtract, set, add a negative)
  bool changed = false;        ///< some update can change it
  bool waitedAtLeast = false;  ///< some wait tests s >= v
  bool waitedEqual = false;    ///< some wait tests s == v
};

/// What verification learns about a program that later stages need, so that they do not walk
/// every instruction again.
struct ProgramUse {
  std::vector<SemaphoreUse> semaphores;  ///< one per semaphore of the limits
  std::vector<bool> writtenTensors;      ///< per program tensor: some instruction writes it
};

/// Checks the whole program; returns the first violation. With `use`, also fills it in.
Status verifyProgram(const Program& program, const CoreLimits& limits, ProgramUse* use = nullptr);

/// Per HBM tensor of `program`, whether some instruction writes it.
std::vector<bool> writtenTensors(const Program& program);

/// What is legal but probably a mistake, one sentence each: output tensors that no instruction
/// writes (their read-back holds the initial zeros).
std::vector<std::string> programWarnings(const Program& program);

/// Checks instruction number `index` of its engine's stream.
Status verifyInstruction(const Instruction& instr, std::size_t index, const Program& program,
                         const CoreLimits& limits);

/// The rules of one instruction body issued by `engine`, without its synchronisation and without
/// naming the instruction in the message (the caller adds where it is).
Status verifyInstructionBody(const InstructionBody& body, Engine engine, const Program& program,
                             const CoreLimits& limits);

// Building blocks for instructions' own verify() functions. Each returns a
// failedPrecondition Status naming the operand and the values at fault.

/// `ap` lies in one of `memories`.
Status requireMemory(std::string_view operand, const AccessPattern& ap,
                     std::initializer_list<Memory> memories);

/// `ap` has one of `dtypes`.
Status requireDType(std::string_view operand, const AccessPattern& ap,
                    std::initializer_list<DType> dtypes);

/// `ap` is a floating-point type.
Status requireFloat(std::string_view operand, const AccessPattern& ap);

/// Both operands cover the same number of partitions and of elements per partition.
Status requireSameShape(std::string_view operandA, const AccessPattern& a,
                        std::string_view operandB, const AccessPattern& b);

/// A [P, 1] per-partition operand matching `data`'s partitions (immediates always pass).
Status requirePerPartitionScalar(std::string_view operand, const ScalarOperand& scalar,
                                 const AccessPattern& data);

/// The free size of a Vector/Scalar/GpSimd operand is within the limit of its memory.
Status requireComputeTileSize(std::string_view operand, const AccessPattern& ap,
                              const CoreLimits& limits);

/// Every element of `ap` per partition is at most `limit`; `rule` names the limit.
Status requireFreeSizeAtMost(std::string_view operand, const AccessPattern& ap,
                             std::int64_t limit, std::string_view rule);

}  // namespace trn::isa
