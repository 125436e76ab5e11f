// Vector engine (DVE) element-wise instructions (nki-reference §3): tensor_tensor, tensor_copy,
// memset, tensor_scalar, scalar_tensor_tensor, tensor_copy_predicated, reciprocal, and the random
// number instructions dropout, rng and set_rng_seed. Some also run on the Scalar or GpSimd engine.
// Semantics decisions and their sources: docs/isa/vector.md.
#pragma once

#include <tuple>

#include "trn/base/status.h"
#include "trn/isa/exec_context.h"
#include "trn/isa/field.h"
#include "trn/isa/instruction.h"
#include "trn/isa/type_list.h"

namespace trn::isa {

/// dst = data0 <op> data1, element by element, in fp32.
struct TensorTensor {
  static constexpr InstrInfo kInfo{"tensor_tensor", 0x0200, {Engine::kDve, Engine::kPool},
                                   "tensor_tensor", "dst = data0 <op> data1, element-wise"};
  AccessPattern dst;
  AccessPattern data0;
  AccessPattern data1;
  AluOp op = AluOp::kAdd;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &TensorTensor::dst, FieldRole::kOutput, "[P, F] result"},
        FieldDesc{"data0", &TensorTensor::data0, FieldRole::kInput, "[P, F] left operand"},
        FieldDesc{"data1", &TensorTensor::data1, FieldRole::kInput, "[P, F] right operand"},
        FieldDesc{"op", &TensorTensor::op, FieldRole::kImmediate, "ALU operator"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// dst = src, converting between dtypes through fp32 (bit-exact when the dtypes are equal).
struct TensorCopy {
  static constexpr InstrInfo kInfo{"tensor_copy", 0x0201,
                                   {Engine::kDve, Engine::kAct, Engine::kPool}, "tensor_copy",
                                   "dst = src with a dtype cast"};
  AccessPattern dst;
  AccessPattern src;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &TensorCopy::dst, FieldRole::kOutput, "[P, F] destination"},
        FieldDesc{"src", &TensorCopy::src, FieldRole::kInput, "[P, F] source"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// dst = value everywhere.
struct Memset {
  static constexpr InstrInfo kInfo{"memset", 0x0202, {Engine::kDve, Engine::kPool, Engine::kAct},
                                   "memset", "fill a tile with a constant"};
  AccessPattern dst;
  float value = 0.0f;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &Memset::dst, FieldRole::kOutput, "[P, F] destination"},
        FieldDesc{"value", &Memset::value, FieldRole::kImmediate, "fill value (cast to dst dtype)"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// dst = (data <op0> operand0) <op1> operand1 in fp32, each operand an immediate or a [P, 1]
/// tensor broadcast along the free dimension. reverse0/reverse1 swap the operands of a stage;
/// op1 = bypass (the default) leaves out the second stage.
struct TensorScalar {
  static constexpr InstrInfo kInfo{"tensor_scalar", 0x0203,
                                   {Engine::kDve, Engine::kAct, Engine::kPool}, "tensor_scalar",
                                   "dst = (data <op0> operand0) <op1> operand1"};
  AccessPattern dst;
  AccessPattern data;
  AluOp op0 = AluOp::kAdd;
  ScalarOperand operand0 = 0.0f;
  bool reverse0 = false;
  AluOp op1 = AluOp::kBypass;
  ScalarOperand operand1 = 0.0f;
  bool reverse1 = false;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &TensorScalar::dst, FieldRole::kOutput, "[P, F] result"},
        FieldDesc{"data", &TensorScalar::data, FieldRole::kInput, "[P, F] input"},
        FieldDesc{"op0", &TensorScalar::op0, FieldRole::kImmediate, "first ALU operator"},
        FieldDesc{"operand0", &TensorScalar::operand0, FieldRole::kInput,
                  "first operand: immediate or [P, 1] fp32 tensor"},
        FieldDesc{"reverse0", &TensorScalar::reverse0, FieldRole::kImmediate,
                  "compute operand0 <op0> data instead"},
        FieldDesc{"op1", &TensorScalar::op1, FieldRole::kImmediate,
                  "second ALU operator (bypass: none)"},
        FieldDesc{"operand1", &TensorScalar::operand1, FieldRole::kInput,
                  "second operand: immediate or [P, 1] fp32 tensor"},
        FieldDesc{"reverse1", &TensorScalar::reverse1, FieldRole::kImmediate,
                  "compute operand1 <op1> (first result) instead"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// dst = (data <op0> operand0) <op1> operand1 where operand0 is an immediate or [P, 1] tensor and
/// operand1 a full [P, F] tensor; fp32 arithmetic.
struct ScalarTensorTensor {
  static constexpr InstrInfo kInfo{"scalar_tensor_tensor", 0x0204, {Engine::kDve},
                                   "scalar_tensor_tensor",
                                   "dst = (data <op0> operand0) <op1> operand1 (tensor)"};
  AccessPattern dst;
  AccessPattern data;
  AluOp op0 = AluOp::kMultiply;
  ScalarOperand operand0 = 1.0f;
  bool reverse0 = false;
  AluOp op1 = AluOp::kAdd;
  AccessPattern operand1;
  bool reverse1 = false;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &ScalarTensorTensor::dst, FieldRole::kOutput, "[P, F] result"},
        FieldDesc{"data", &ScalarTensorTensor::data, FieldRole::kInput, "[P, F] input"},
        FieldDesc{"op0", &ScalarTensorTensor::op0, FieldRole::kImmediate,
                  "arithmetic operator with operand0"},
        FieldDesc{"operand0", &ScalarTensorTensor::operand0, FieldRole::kInput,
                  "immediate or [P, 1] tensor"},
        FieldDesc{"reverse0", &ScalarTensorTensor::reverse0, FieldRole::kImmediate,
                  "compute operand0 <op0> data instead"},
        FieldDesc{"op1", &ScalarTensorTensor::op1, FieldRole::kImmediate,
                  "arithmetic operator with operand1"},
        FieldDesc{"operand1", &ScalarTensorTensor::operand1, FieldRole::kInput,
                  "[P, F] tensor operand"},
        FieldDesc{"reverse1", &ScalarTensorTensor::reverse1, FieldRole::kImmediate,
                  "compute operand1 <op1> (first result) instead"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// dst = predicate ? src : dst element by element (with reverse_pred: where predicate is zero).
/// Elements not selected are left untouched; selected ones are copied bit-exactly.
struct TensorCopyPredicated {
  static constexpr InstrInfo kInfo{"tensor_copy_predicated", 0x0205, {Engine::kDve},
                                   "tensor_copy_predicated", "dst = predicate ? src : dst"};
  AccessPattern dst;
  ScalarOperand src = 0.0f;
  AccessPattern predicate;
  bool reversePred = false;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &TensorCopyPredicated::dst, FieldRole::kOutput,
                  "[P, F] destination, updated where selected"},
        FieldDesc{"src", &TensorCopyPredicated::src, FieldRole::kInput,
                  "[P, F] tensor of dst's dtype, or an immediate"},
        FieldDesc{"predicate", &TensorCopyPredicated::predicate, FieldRole::kInput,
                  "[P, F] uint8/uint16/uint32 mask; non-zero selects"},
        FieldDesc{"reverse_pred", &TensorCopyPredicated::reversePred, FieldRole::kImmediate,
                  "select where the predicate is zero instead"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// dst = 1 / data, an IEEE fp32 division (correctly rounded).
struct Reciprocal {
  static constexpr InstrInfo kInfo{"reciprocal", 0x0206, {Engine::kDve}, "reciprocal",
                                   "dst = 1 / data in fp32"};
  AccessPattern dst;
  AccessPattern data;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &Reciprocal::dst, FieldRole::kOutput, "[P, F] result"},
        FieldDesc{"data", &Reciprocal::data, FieldRole::kInput, "[P, F] input"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// dst = data with each element replaced by zero with probability prob. Element i (access-pattern
/// order) draws the engine's next random word w_i and is dropped iff w_i < prob * 2^32; kept
/// elements are copied bit-exactly and nothing is rescaled.
struct Dropout {
  static constexpr InstrInfo kInfo{"dropout", 0x0207, {Engine::kDve}, "simple_stream",
                                   "zero elements with probability prob"};
  AccessPattern dst;
  AccessPattern data;
  ScalarOperand prob = 0.0f;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &Dropout::dst, FieldRole::kOutput, "[P, F] result, data's dtype"},
        FieldDesc{"data", &Dropout::data, FieldRole::kInput, "[P, F] input"},
        FieldDesc{"prob", &Dropout::prob, FieldRole::kInput,
                  "drop probability: immediate or [P, 1] tensor"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// Fills dst with raw random words of the executing engine's generator, one per element in
/// access-pattern order, truncated to the integer dtype's width (least significant bits).
struct Rng {
  static constexpr InstrInfo kInfo{"rng", 0x0208, {Engine::kDve, Engine::kPool}, "simple_stream",
                                   "fill with 32-bit random words"};
  AccessPattern dst;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &Rng::dst, FieldRole::kOutput, "[P, F] integer destination"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// Reseeds the Vector engine's random-number generator with the 32-bit value in src_seeds (its
/// raw bits); the word sequence restarts from the beginning.
struct SetRngSeed {
  static constexpr InstrInfo kInfo{"set_rng_seed", 0x0209, {Engine::kDve}, "simple_stream",
                                   "seed the Vector engine's random-number generator"};
  AccessPattern srcSeeds;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"src_seeds", &SetRngSeed::srcSeeds, FieldRole::kInput,
                  "[1, 1] 32-bit seed (int32, uint32 or fp32 bits)"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// The instructions declared in this header, in opcode order.
using VectorEngineInstructions =
    TypeList<TensorTensor, TensorCopy, Memset, TensorScalar, ScalarTensorTensor,
             TensorCopyPredicated, Reciprocal, Dropout, Rng, SetRngSeed>;

}  // namespace trn::isa
