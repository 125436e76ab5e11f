// Vector engine (DVE) element-wise instructions that can also run on other engines
// (nki-reference §3): tensor_tensor, tensor_copy, memset.
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

/// The instructions declared in this header, in opcode order.
using VectorEngineInstructions = TypeList<TensorTensor, TensorCopy, Memset>;

}  // namespace trn::isa
