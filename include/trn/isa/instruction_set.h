// The instruction set: the list of every instruction type, and the Instruction record that pairs
// one of them with its issuing engine, synchronisation and source location. Everything that works
// on "any instruction" (printer, parser, encoder, verifier, dispatch, reference pages) visits this
// list; adding an instruction means declaring its struct and adding it here.
#pragma once

#include <array>
#include <variant>

#include "trn/isa/instrs/control.h"
#include "trn/isa/instrs/dma.h"
#include "trn/isa/instrs/gpsimd_engine.h"
#include "trn/isa/instrs/scalar_engine.h"
#include "trn/isa/instrs/tensor_engine.h"
#include "trn/isa/instrs/vector_reduce.h"
#include "trn/isa/instrs/vector_special.h"
#include "trn/isa/instrs/vector_engine.h"

namespace trn::isa {

/// Every instruction type, family by family.
using AllInstructions =
    ConcatLists<TensorEngineInstructions, VectorEngineInstructions, VectorReduceInstructions,
                VectorSpecialInstructions, ScalarEngineInstructions, GpSimdEngineInstructions,
                DmaInstructions, ControlInstructions>::type;

/// One instruction of any type.
using InstructionBody = VariantOf<AllInstructions>::type;

/// An instruction as it sits in an engine's stream.
struct Instruction {
  Engine engine = Engine::kSp;
  InstructionBody body;
  Sync sync;
  SourceLocation location;
};

/// The static description of the instruction's type.
inline const InstrInfo& info(const InstructionBody& body) {
  return std::visit([](const auto& i) -> const InstrInfo& { return std::decay_t<decltype(i)>::kInfo; },
                    body);
}

/// Calls fn.template operator()<I>() for every instruction type I, in list order.
template <typename Fn>
void forEachInstructionType(Fn&& fn) {
  [&]<std::size_t... kIndex>(std::index_sequence<kIndex...>) {
    (fn.template operator()<std::variant_alternative_t<kIndex, InstructionBody>>(), ...);
  }(std::make_index_sequence<std::variant_size_v<InstructionBody>>());
}

namespace detail {
template <std::size_t... kIndex>
consteval bool opcodesAndMnemonicsUnique(std::index_sequence<kIndex...>) {
  constexpr std::array<InstrInfo, sizeof...(kIndex)> infos = {
      std::variant_alternative_t<kIndex, InstructionBody>::kInfo...};
  for (std::size_t a = 0; a < infos.size(); ++a) {
    for (std::size_t b = a + 1; b < infos.size(); ++b) {
      if (infos[a].opcode == infos[b].opcode || infos[a].mnemonic == infos[b].mnemonic) {
        return false;
      }
    }
  }
  return true;
}
}  // namespace detail

static_assert(detail::opcodesAndMnemonicsUnique(
                  std::make_index_sequence<std::variant_size_v<InstructionBody>>()),
              "two instructions share an opcode or a mnemonic");

}  // namespace trn::isa
