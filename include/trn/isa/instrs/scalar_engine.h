// Scalar engine (ACT) instructions (nki-reference §3, hardware-trn2.md §7).
#pragma once

#include <tuple>

#include "trn/base/status.h"
#include "trn/isa/exec_context.h"
#include "trn/isa/field.h"
#include "trn/isa/instruction.h"
#include "trn/isa/type_list.h"

namespace trn::isa {

/// dst = f(data * scale + bias), computed in fp32; scale and bias are immediates or per-partition
/// [P, 1] tensors.
struct Activation {
  static constexpr InstrInfo kInfo{"activation", 0x0300, {Engine::kAct}, "activation",
                                   "dst = f(data * scale + bias)"};
  AccessPattern dst;
  AccessPattern data;
  ActivationFunction function = ActivationFunction::kCopy;
  ScalarOperand scale = 1.0f;
  ScalarOperand bias = 0.0f;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &Activation::dst, FieldRole::kOutput, "[P, F] result"},
        FieldDesc{"data", &Activation::data, FieldRole::kInput, "[P, F] input"},
        FieldDesc{"op", &Activation::function, FieldRole::kImmediate, "activation function"},
        FieldDesc{"scale", &Activation::scale, FieldRole::kInput,
                  "multiplier: immediate or [P, 1] tensor"},
        FieldDesc{"bias", &Activation::bias, FieldRole::kInput, "addend: immediate or [P, 1] tensor"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// The instructions declared in this header, in opcode order.
using ScalarEngineInstructions = TypeList<Activation>;

}  // namespace trn::isa
