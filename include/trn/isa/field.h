// Field descriptors: how an instruction declares its operands once. Each instruction struct lists
// its data members as FieldDesc records (name, member pointer, role, one-line doc) in a static
// `fields()` tuple; the printer, parser, binary encoder/decoder, verifier and reference pages walk
// that tuple instead of being written per instruction.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>
#include <variant>

#include "trn/isa/access_pattern.h"

namespace trn::isa {

/// What an instruction does with a field.
enum class FieldRole : std::uint8_t {
  kInput,      ///< a tensor the instruction reads
  kOutput,     ///< a tensor the instruction writes
  kImmediate,  ///< a constant encoded in the instruction
};

/// A per-partition scalar operand: an fp32 immediate, or a [P, 1] tensor holding one value per
/// partition (nki.isa's "scalar or vector" operands of tensor_scalar, activation bias, ...).
using ScalarOperand = std::variant<float, AccessPattern>;

/// One declared field of instruction type Owner.
template <typename Owner, typename T>
struct FieldDesc {
  std::string_view name;
  T Owner::*member;
  FieldRole role;
  std::string_view doc;
};

template <typename Owner, typename T>
FieldDesc(std::string_view, T Owner::*, FieldRole, std::string_view) -> FieldDesc<Owner, T>;

/// Calls fn(desc) for every field of instruction type I.
template <typename I, typename Fn>
constexpr void forEachField(Fn&& fn) {
  std::apply([&](const auto&... desc) { (fn(desc), ...); }, I::fields());
}

/// Calls fn(desc, value) for every field of `instr`, passing the member by reference.
template <typename I, typename Fn>
void forEachFieldValue(I& instr, Fn&& fn) {
  std::apply([&](const auto&... desc) { (fn(desc, instr.*(desc.member)), ...); }, I::fields());
}

/// Calls fn(role, pattern) for every tensor operand of `instr` (plain, optional or scalar
/// operands that hold a pattern).
template <typename I, typename Fn>
void forEachAccessPattern(const I& instr, Fn&& fn) {
  forEachFieldValue(instr, [&](const auto& desc, const auto& value) {
    using T = std::decay_t<decltype(value)>;
    if constexpr (std::is_same_v<T, AccessPattern>) {
      fn(desc.name, desc.role, value);
    } else if constexpr (std::is_same_v<T, std::optional<AccessPattern>>) {
      if (value) {
        fn(desc.name, desc.role, *value);
      }
    } else if constexpr (std::is_same_v<T, ScalarOperand>) {
      if (const auto* ap = std::get_if<AccessPattern>(&value)) {
        fn(desc.name, desc.role, *ap);
      }
    }
  });
}

}  // namespace trn::isa
