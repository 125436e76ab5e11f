// Visiting the tensor operands of a traced instruction, for the passes that read or rewrite them
// (allocation rebases on-chip operands, lowering renumbers HBM ones, dependency analysis reads).
#pragma once

#include <optional>
#include <type_traits>
#include <variant>

#include "trn/isa/instruction_set.h"

namespace trn::kernel {

/// Calls fn(role, pattern&) for every tensor operand of `body` (plain, optional and
/// scalar-or-tensor operands that hold a pattern), allowing the pattern to be changed.
template <typename Fn>
void forEachOperand(isa::InstructionBody& body, Fn&& fn) {
  std::visit(
      [&](auto& instr) {
        isa::forEachFieldValue(instr, [&](const auto& desc, auto& value) {
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<T, isa::AccessPattern>) {
            fn(desc.role, value);
          } else if constexpr (std::is_same_v<T, std::optional<isa::AccessPattern>>) {
            if (value) {
              fn(desc.role, *value);
            }
          } else if constexpr (std::is_same_v<T, isa::ScalarOperand>) {
            if (auto* ap = std::get_if<isa::AccessPattern>(&value)) {
              fn(desc.role, *ap);
            }
          }
        });
      },
      body);
}

/// Read-only form.
template <typename Fn>
void forEachOperand(const isa::InstructionBody& body, Fn&& fn) {
  std::visit(
      [&](const auto& instr) {
        isa::forEachAccessPattern(instr, [&](std::string_view, isa::FieldRole role,
                                             const isa::AccessPattern& ap) { fn(role, ap); });
      },
      body);
}

}  // namespace trn::kernel
