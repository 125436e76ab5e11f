#include "trn/isa/reference.h"

#include <fmt/format.h>

#include "field_codec.h"
#include "trn/isa/instruction_set.h"

namespace trn::isa {
namespace {

std::string_view roleName(FieldRole role) {
  switch (role) {
    case FieldRole::kInput: return "in";
    case FieldRole::kOutput: return "out";
    case FieldRole::kImmediate: return "imm";
  }
  return "?";
}

template <typename T>
std::string_view fieldTypeName() {
  return codec::typeName(static_cast<const T*>(nullptr));
}

}  // namespace

std::string instructionCatalogue() {
  std::string out = fmt::format("{:<26} {:<22} {:<22} {}\n", "instruction", "engines", "cost class",
                                "summary");
  forEachInstructionType([&]<typename I>() {
    out += fmt::format("{:<26} {:<22} {:<22} {}\n", I::kInfo.mnemonic,
                       I::kInfo.viaDma ? I::kInfo.engines.toString() + " (DMA)"
                                       : I::kInfo.engines.toString(),
                       I::kInfo.costClass, I::kInfo.summary);
  });
  return out;
}

Result<std::string> instructionPage(std::string_view mnemonic) {
  std::optional<std::string> page;
  std::vector<std::string_view> similar;
  forEachInstructionType([&]<typename I>() {
    if (I::kInfo.mnemonic == mnemonic) {
      std::string out = fmt::format("{} — {}\n\n", I::kInfo.mnemonic, I::kInfo.summary);
      out += fmt::format("  opcode      0x{:04x}\n", I::kInfo.opcode);
      out += fmt::format("  engines     {}{}\n", I::kInfo.engines.toString(),
                         I::kInfo.viaDma ? " (issues a DMA transfer)" : "");
      out += fmt::format("  cost class  {}\n\nfields:\n", I::kInfo.costClass);
      std::string example = fmt::format("ENGINE: {}", I::kInfo.mnemonic);
      forEachField<I>([&](const auto& desc) {
        using T = std::remove_cvref_t<decltype(std::declval<I>().*(desc.member))>;
        out += fmt::format("  {:<14} {:<20} {:<4} {}\n", desc.name, fieldTypeName<T>(),
                           roleName(desc.role), desc.doc);
        example += fmt::format(" {}=...", desc.name);
      });
      std::vector<std::string_view> names;
      forEachField<I>([&](const auto& desc) {
        using T = std::remove_cvref_t<decltype(std::declval<I>().*(desc.member))>;
        if constexpr (TabledEnum<T>) {
          std::vector<std::string_view> values;
          for (const auto& entry : EnumTable<T>::kEntries) {
            values.push_back(entry.second);
          }
          out += fmt::format("\n  {} values: {}", desc.name, fmt::join(values, ", "));
        }
      });
      out += fmt::format("\n\ntext form:\n  {} [wait(sN>=V)] [signal(sN+=V)]\n", example);
      page = std::move(out);
    } else if (I::kInfo.mnemonic.find(mnemonic) != std::string_view::npos ||
               mnemonic.find(I::kInfo.mnemonic) != std::string_view::npos) {
      similar.push_back(I::kInfo.mnemonic);
    }
  });
  if (page) {
    return *page;
  }
  return notFound(fmt::format("no instruction '{}'{}; `trnsim isa list` shows them all", mnemonic,
                              similar.empty() ? std::string()
                                              : fmt::format(" (did you mean {}?)",
                                                            fmt::join(similar, ", "))));
}

}  // namespace trn::isa
