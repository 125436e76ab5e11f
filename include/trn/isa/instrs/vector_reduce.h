// Vector engine (DVE) reductions, scans and selections (nki-reference §3): tensor_reduce,
// tensor_scalar_reduce, tensor_tensor_scan, tensor_scalar_cumulative, range_select,
// select_reduce. Several use the engine's per-partition accumulator registers under a reduce_cmd
// (ReduceCmd in enums.h): idle leaves them alone, reset sets them to the reduction's identity,
// reduce folds this instruction's values onto them, reset_reduce does both, load_reduce loads an
// initial value and then folds. Every reduction folds sequentially in access-pattern order in fp32.
// Semantics decisions and their sources: docs/isa/vector.md.
#pragma once

#include <cfloat>
#include <optional>
#include <tuple>

#include "trn/base/status.h"
#include "trn/isa/exec_context.h"
#include "trn/isa/field.h"
#include "trn/isa/instruction.h"
#include "trn/isa/type_list.h"

namespace trn::isa {

/// dst = op-reduction of data over its free dimensions `axis`..last (NKI axis numbering: 1 is
/// the first free dimension), folded sequentially from the first element in fp32; optionally
/// negated. dst holds the remaining (leading) free elements per partition.
struct TensorReduce {
  static constexpr InstrInfo kInfo{"tensor_reduce", 0x0700, {Engine::kDve}, "tensor_reduce",
                                   "reduce the trailing free dimensions"};
  AccessPattern dst;
  AluOp op = AluOp::kAdd;
  AccessPattern data;
  std::int64_t axis = 1;
  bool negate = false;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &TensorReduce::dst, FieldRole::kOutput,
                  "[P, kept] result (product of the free counts before axis)"},
        FieldDesc{"op", &TensorReduce::op, FieldRole::kImmediate, "reduction operator"},
        FieldDesc{"data", &TensorReduce::data, FieldRole::kInput, "[P, F] input"},
        FieldDesc{"axis", &TensorReduce::axis, FieldRole::kImmediate,
                  "first reduced free dimension (1..dims); all later ones are reduced too"},
        FieldDesc{"negate", &TensorReduce::negate, FieldRole::kImmediate,
                  "multiply the result by -1 (arithmetic operators only)"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// dst = data <op0> operand0 (as tensor_scalar with one operator), and the free-dimension
/// reduction of those fp32 results with reduce_op folded into the accumulators under reduce_cmd;
/// reduce_res receives the accumulators.
struct TensorScalarReduce {
  static constexpr InstrInfo kInfo{"tensor_scalar_reduce", 0x0701, {Engine::kDve},
                                   "tensor_scalar_reduce",
                                   "dst = data <op0> operand0, reduced into reduce_res"};
  AccessPattern dst;
  AccessPattern data;
  AluOp op0 = AluOp::kMultiply;
  ScalarOperand operand0 = 1.0f;
  AluOp reduceOp = AluOp::kAdd;
  AccessPattern reduceRes;
  bool reverse0 = false;
  ReduceCmd reduceCmd = ReduceCmd::kResetReduce;
  ScalarOperand reduceInit = 0.0f;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &TensorScalarReduce::dst, FieldRole::kOutput, "[P, F] result"},
        FieldDesc{"data", &TensorScalarReduce::data, FieldRole::kInput, "[P, F] input"},
        FieldDesc{"op0", &TensorScalarReduce::op0, FieldRole::kImmediate,
                  "arithmetic operator with operand0"},
        FieldDesc{"operand0", &TensorScalarReduce::operand0, FieldRole::kInput,
                  "immediate or [P, 1] tensor"},
        FieldDesc{"reduce_op", &TensorScalarReduce::reduceOp, FieldRole::kImmediate,
                  "add, multiply, max or min"},
        FieldDesc{"reduce_res", &TensorScalarReduce::reduceRes, FieldRole::kOutput,
                  "[P, 1] accumulators after the instruction"},
        FieldDesc{"reverse0", &TensorScalarReduce::reverse0, FieldRole::kImmediate,
                  "compute operand0 <op0> data instead"},
        FieldDesc{"reduce_cmd", &TensorScalarReduce::reduceCmd, FieldRole::kImmediate,
                  "reset_reduce, reduce or load_reduce"},
        FieldDesc{"reduce_init", &TensorScalarReduce::reduceInit, FieldRole::kInput,
                  "load_reduce start value: immediate or [P, 1] tensor"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// Scan along the free elements of each partition (access-pattern order):
/// r_i = op1(op0(data0_i, r_{i-1}), data1_i) with r_{-1} = initial, dst_i = r_i. reverse0 swaps
/// op0's operands, reverse1 op1's; the running value r is kept in fp32.
struct TensorTensorScan {
  static constexpr InstrInfo kInfo{"tensor_tensor_scan", 0x0702, {Engine::kDve},
                                   "tensor_tensor_scan",
                                   "r_i = op1(op0(data0_i, r_i-1), data1_i) along F"};
  AccessPattern dst;
  AccessPattern data0;
  AccessPattern data1;
  ScalarOperand initial = 0.0f;
  AluOp op0 = AluOp::kMultiply;
  AluOp op1 = AluOp::kAdd;
  bool reverse0 = false;
  bool reverse1 = false;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &TensorTensorScan::dst, FieldRole::kOutput, "[P, F] scan results"},
        FieldDesc{"data0", &TensorTensorScan::data0, FieldRole::kInput, "[P, F] op0 operand"},
        FieldDesc{"data1", &TensorTensorScan::data1, FieldRole::kInput, "[P, F] op1 operand"},
        FieldDesc{"initial", &TensorTensorScan::initial, FieldRole::kInput,
                  "start state: immediate or [P, 1] tensor"},
        FieldDesc{"op0", &TensorTensorScan::op0, FieldRole::kImmediate,
                  "arithmetic operator on (data0, state)"},
        FieldDesc{"op1", &TensorTensorScan::op1, FieldRole::kImmediate,
                  "arithmetic operator on (op0 result, data1)"},
        FieldDesc{"reverse0", &TensorTensorScan::reverse0, FieldRole::kImmediate,
                  "compute op0(state, data0) instead"},
        FieldDesc{"reverse1", &TensorTensorScan::reverse1, FieldRole::kImmediate,
                  "compute op1(data1, op0 result) instead"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// Prefix scan in the accumulator registers: reg starts per reduce_cmd (reset_reduce: op1's
/// identity; load_reduce: imm1; reduce: the accumulator), then for each free element
/// reg = op1(op0(src_i, imm0), reg) (op0(imm0, src_i) with reverse0) and dst_i = reg. The final
/// reg stays in the accumulators.
struct TensorScalarCumulative {
  static constexpr InstrInfo kInfo{"tensor_scalar_cumulative", 0x0703, {Engine::kDve},
                                   "simple_stream",
                                   "prefix scan reg = op1(op0(src_i, imm0), reg)"};
  AccessPattern dst;
  AccessPattern src;
  AluOp op0 = AluOp::kMultiply;
  AluOp op1 = AluOp::kAdd;
  ScalarOperand imm0 = 1.0f;
  ScalarOperand imm1 = 0.0f;
  ReduceCmd reduceCmd = ReduceCmd::kResetReduce;
  bool reverse0 = false;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &TensorScalarCumulative::dst, FieldRole::kOutput, "[P, F] prefix values"},
        FieldDesc{"src", &TensorScalarCumulative::src, FieldRole::kInput, "[P, F] input"},
        FieldDesc{"op0", &TensorScalarCumulative::op0, FieldRole::kImmediate,
                  "arithmetic operator with imm0"},
        FieldDesc{"op1", &TensorScalarCumulative::op1, FieldRole::kImmediate,
                  "scan operator: add, subtract, multiply, max or min"},
        FieldDesc{"imm0", &TensorScalarCumulative::imm0, FieldRole::kInput,
                  "immediate or [P, 1] tensor"},
        FieldDesc{"imm1", &TensorScalarCumulative::imm1, FieldRole::kInput,
                  "load_reduce start value: immediate or [P, 1] tensor"},
        FieldDesc{"reduce_cmd", &TensorScalarCumulative::reduceCmd, FieldRole::kImmediate,
                  "reset_reduce, reduce or load_reduce"},
        FieldDesc{"reverse0", &TensorScalarCumulative::reverse0, FieldRole::kImmediate,
                  "compute imm0 <op0> src instead"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// dst_i = on_true_tile_i where comp_op0(i + range_start, bound0) and comp_op1(i + range_start,
/// bound1) hold (i the flat free index, compared in fp32), else on_false_value; the max of the
/// fp32 results is folded into the accumulators under reduce_cmd and, if given, written to
/// reduce_res.
struct RangeSelect {
  static constexpr InstrInfo kInfo{"range_select", 0x0704, {Engine::kDve}, "simple_stream",
                                   "keep elements whose free index is within per-partition bounds"};
  AccessPattern dst;
  AccessPattern onTrueTile;
  AluOp compOp0 = AluOp::kGreaterEqual;
  AluOp compOp1 = AluOp::kLess;
  AccessPattern bound0;
  AccessPattern bound1;
  ReduceCmd reduceCmd = ReduceCmd::kResetReduce;
  std::optional<AccessPattern> reduceRes;
  AluOp reduceOp = AluOp::kMax;
  std::int64_t rangeStart = 0;
  float onFalseValue = -FLT_MAX;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &RangeSelect::dst, FieldRole::kOutput, "[P, F] result"},
        FieldDesc{"on_true_tile", &RangeSelect::onTrueTile, FieldRole::kInput,
                  "[P, F] floating-point input"},
        FieldDesc{"comp_op0", &RangeSelect::compOp0, FieldRole::kImmediate,
                  "comparison of index with bound0"},
        FieldDesc{"comp_op1", &RangeSelect::compOp1, FieldRole::kImmediate,
                  "comparison of index with bound1"},
        FieldDesc{"bound0", &RangeSelect::bound0, FieldRole::kInput, "[P, 1] fp32 bound"},
        FieldDesc{"bound1", &RangeSelect::bound1, FieldRole::kInput, "[P, 1] fp32 bound"},
        FieldDesc{"reduce_cmd", &RangeSelect::reduceCmd, FieldRole::kImmediate,
                  "accumulator command (no load_reduce)"},
        FieldDesc{"reduce_res", &RangeSelect::reduceRes, FieldRole::kOutput,
                  "[P, 1] accumulators after the instruction, or none"},
        FieldDesc{"reduce_op", &RangeSelect::reduceOp, FieldRole::kImmediate, "max only"},
        FieldDesc{"range_start", &RangeSelect::rangeStart, FieldRole::kImmediate,
                  "index of the first free element"},
        FieldDesc{"on_false_value", &RangeSelect::onFalseValue, FieldRole::kImmediate,
                  "value outside the range; must be -3.4028235e+38 (FP32_MIN)"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// dst = predicate ? on_true : on_false element-wise (inverted with reverse_pred), on_false an
/// immediate or [P, 1] tensor; the max of the fp32 results is folded into the accumulators under
/// reduce_cmd and, if given, written to reduce_res.
struct SelectReduce {
  static constexpr InstrInfo kInfo{"select_reduce", 0x0705, {Engine::kDve}, "simple_stream",
                                   "dst = where(predicate, on_true, on_false), optional max"};
  AccessPattern dst;
  AccessPattern predicate;
  AccessPattern onTrue;
  ScalarOperand onFalse = 0.0f;
  std::optional<AccessPattern> reduceRes;
  ReduceCmd reduceCmd = ReduceCmd::kIdle;
  AluOp reduceOp = AluOp::kMax;
  bool reversePred = false;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &SelectReduce::dst, FieldRole::kOutput, "[P, F] result"},
        FieldDesc{"predicate", &SelectReduce::predicate, FieldRole::kInput,
                  "[P, F] int8/uint8/int16/uint16 mask; non-zero selects on_true"},
        FieldDesc{"on_true", &SelectReduce::onTrue, FieldRole::kInput, "[P, F] input"},
        FieldDesc{"on_false", &SelectReduce::onFalse, FieldRole::kInput,
                  "immediate or [P, 1] tensor"},
        FieldDesc{"reduce_res", &SelectReduce::reduceRes, FieldRole::kOutput,
                  "[P, 1] accumulators after the instruction, or none"},
        FieldDesc{"reduce_cmd", &SelectReduce::reduceCmd, FieldRole::kImmediate,
                  "accumulator command (no load_reduce)"},
        FieldDesc{"reduce_op", &SelectReduce::reduceOp, FieldRole::kImmediate, "max only"},
        FieldDesc{"reverse_pred", &SelectReduce::reversePred, FieldRole::kImmediate,
                  "select on_true where the predicate is zero instead"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// The instructions declared in this header, in opcode order.
using VectorReduceInstructions = TypeList<TensorReduce, TensorScalarReduce, TensorTensorScan,
                                          TensorScalarCumulative, RangeSelect, SelectReduce>;

}  // namespace trn::isa
