// DMA placement: issuer by the rule in dma_placement.h, queues round-robin.
#include "passes/dma_placement.h"

#include <variant>

namespace trn::kernel {
namespace {

template <typename Fn>
void withQueue(isa::InstructionBody& body, Fn&& fn) {
  std::visit(
      [&](auto& instr) {
        if constexpr (requires { instr.queue; }) {
          fn(instr.queue);
        }
      },
      body);
}

/// True when the transfer reads on-chip memory.
bool readsOnChip(const isa::InstructionBody& body) {
  bool onChip = false;
  std::visit(
      [&](const auto& instr) {
        isa::forEachAccessPattern(
            instr, [&](std::string_view, isa::FieldRole role, const isa::AccessPattern& ap) {
              onChip |= role == isa::FieldRole::kInput && ap.memory != isa::Memory::kHbm;
            });
      },
      body);
  return onChip;
}

}  // namespace

int dmaQueue(const isa::InstructionBody& body) {
  int queue = -1;
  std::visit(
      [&](const auto& instr) {
        if constexpr (requires { instr.queue; }) {
          queue = static_cast<int>(instr.queue);
        }
      },
      body);
  return queue;
}

void placeDmas(KernelIR& ir, const Dependencies& deps, int queues) {
  int next = 0;
  for (std::size_t i = 0; i < ir.ops.size(); ++i) {
    Op& op = ir.ops[i];
    if (!isa::info(op.instr.body).viaDma) {
      continue;
    }
    withQueue(op.instr.body, [&](std::int64_t& queue) {
      queue = next;
      next = (next + 1) % queues;
    });
    if (op.origin == EngineOrigin::kPinned) {
      continue;
    }
    op.instr.engine = isa::Engine::kSp;
    if (readsOnChip(op.instr.body)) {
      for (auto it = deps[i].rbegin(); it != deps[i].rend(); ++it) {
        const Op& producer = ir.ops[static_cast<std::size_t>(*it)];
        if (!isa::info(producer.instr.body).viaDma) {
          op.instr.engine = producer.instr.engine;
          break;
        }
      }
    }
  }
}

}  // namespace trn::kernel
