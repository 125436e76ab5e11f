// Scalar engine (ACT) instructions (nki-reference §3, hardware-trn2.md §7): activation functions
// with a fused scale and bias, and the optional per-partition sum of the activated values kept in
// the engine's accumulator registers (reduce_cmd). Decisions and sources: docs/isa/dma-scalar.md.
#pragma once

#include <optional>
#include <tuple>

#include "trn/base/status.h"
#include "trn/isa/exec_context.h"
#include "trn/isa/field.h"
#include "trn/isa/instruction.h"
#include "trn/isa/type_list.h"

namespace trn::isa {

/// dst = op(data * scale + bias), computed in fp32 (the product and the sum each rounded to
/// fp32, then the function), cast to dst's dtype; scale and bias are immediates or per-partition
/// [P, 1] tensors.
///
/// Reduction (nki.isa reduce_cmd): per partition p, with reg the ACT accumulator register of
/// lane data.partitionStart + p and s the fp32 sum, in free order, of the activated fp32 values:
///   reset: reg = 0;  reduce: reg = reg + s;  reset_reduce: reg = 0 + s;  idle: unchanged.
/// When reduce_res is given, the register values after the update are written to it.
struct Activation {
  static constexpr InstrInfo kInfo{"activation", 0x0300, {Engine::kAct}, "activation",
                                   "dst = op(data * scale + bias), optional per-partition sum"};
  AccessPattern dst;
  ActivationFunction function = ActivationFunction::kCopy;
  AccessPattern data;
  ScalarOperand bias = 0.0f;
  ScalarOperand scale = 1.0f;
  AluOp reduceOp = AluOp::kAdd;
  std::optional<AccessPattern> reduceRes;
  ReduceCmd reduceCmd = ReduceCmd::kIdle;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &Activation::dst, FieldRole::kOutput, "[P, F] result"},
        FieldDesc{"op", &Activation::function, FieldRole::kImmediate, "activation function"},
        FieldDesc{"data", &Activation::data, FieldRole::kInput, "[P, F] input"},
        FieldDesc{"bias", &Activation::bias, FieldRole::kInput,
                  "addend: immediate or [P, 1] tensor"},
        FieldDesc{"scale", &Activation::scale, FieldRole::kInput,
                  "multiplier: immediate or [P, 1] tensor"},
        FieldDesc{"reduce_op", &Activation::reduceOp, FieldRole::kImmediate,
                  "reduction of the activated values along F (add)"},
        FieldDesc{"reduce_res", &Activation::reduceRes, FieldRole::kOutput,
                  "[P, 1] receives the accumulator registers after the update"},
        FieldDesc{"reduce_cmd", &Activation::reduceCmd, FieldRole::kImmediate,
                  "accumulator registers: idle, reset, reduce or reset_reduce"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// activation with reduce_cmd=reset_reduce: dst = op(data * scale + bias) and reduce_res = the
/// per-partition fp32 sum of the activated values (also left in the accumulator registers).
/// Kept by NKI for compatibility.
struct ActivationReduce {
  static constexpr InstrInfo kInfo{"activation_reduce", 0x0301, {Engine::kAct},
                                   "activation_reduce",
                                   "dst = op(data * scale + bias); reduce_res = sum along F"};
  AccessPattern dst;
  ActivationFunction function = ActivationFunction::kCopy;
  AccessPattern data;
  AluOp reduceOp = AluOp::kAdd;
  AccessPattern reduceRes;
  ScalarOperand bias = 0.0f;
  ScalarOperand scale = 1.0f;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &ActivationReduce::dst, FieldRole::kOutput, "[P, F] result"},
        FieldDesc{"op", &ActivationReduce::function, FieldRole::kImmediate,
                  "activation function"},
        FieldDesc{"data", &ActivationReduce::data, FieldRole::kInput, "[P, F] input"},
        FieldDesc{"reduce_op", &ActivationReduce::reduceOp, FieldRole::kImmediate,
                  "reduction of the activated values along F (add)"},
        FieldDesc{"reduce_res", &ActivationReduce::reduceRes, FieldRole::kOutput,
                  "[P, 1] per-partition sums"},
        FieldDesc{"bias", &ActivationReduce::bias, FieldRole::kInput,
                  "addend: immediate or [P, 1] tensor"},
        FieldDesc{"scale", &ActivationReduce::scale, FieldRole::kInput,
                  "multiplier: immediate or [P, 1] tensor"},
    };
  }

  /// The equivalent activation instruction.
  [[nodiscard]] Activation asActivation() const {
    return Activation{dst, function, data, bias, scale, reduceOp, reduceRes,
                      ReduceCmd::kResetReduce};
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const {
    return asActivation().verify(ctx);
  }
  [[nodiscard]] Status execute(ExecContext& ctx) const { return asActivation().execute(ctx); }
};

/// The instructions declared in this header, in opcode order.
using ScalarEngineInstructions = TypeList<Activation, ActivationReduce>;

}  // namespace trn::isa
