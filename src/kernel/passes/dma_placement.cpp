// DMA placement: issuer by the rule in dma_placement.h, queues round-robin.
#include "passes/dma_placement.h"

#include <algorithm>
#include <array>
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

QueueRange issuerQueues(isa::Engine issuer, int queues) {
  // Half the queues for the loads of the sync engine; the rest shared out among the others.
  const int loads = std::max(1, queues / 2);
  const int rest = queues - loads;
  switch (issuer) {
    case isa::Engine::kSp:
      return {0, loads};
    case isa::Engine::kAct:
      return {loads, std::max(1, rest * 3 / 8)};
    case isa::Engine::kDve: {
      const int first = loads + std::max(1, rest * 3 / 8);
      return {first, std::max(1, rest * 3 / 8)};
    }
    case isa::Engine::kPool:
      return {queues - 2, 1};
    case isa::Engine::kPe:
      return {queues - 1, 1};
  }
  return {0, 1};
}

void placeDmas(KernelIR& ir, const Dependencies& deps, int queues) {
  std::array<int, isa::kNumEngines> next{};
  for (std::size_t i = 0; i < ir.ops.size(); ++i) {
    Op& op = ir.ops[i];
    if (!isa::info(op.instr.body).viaDma) {
      continue;
    }
    if (op.origin != EngineOrigin::kPinned) {
      op.instr.engine = isa::Engine::kSp;
      if (readsOnChip(op.instr.body)) {
        const std::span<const std::int32_t> producers = deps[i];
        for (auto it = producers.rbegin(); it != producers.rend(); ++it) {
          const Op& producer = ir.ops[static_cast<std::size_t>(*it)];
          if (!isa::info(producer.instr.body).viaDma) {
            op.instr.engine = producer.instr.engine;
            break;
          }
        }
      }
    }
    const QueueRange range = issuerQueues(op.instr.engine, queues);
    int& turn = next[static_cast<std::size_t>(op.instr.engine)];
    withQueue(op.instr.body, [&](std::int64_t& queue) { queue = range.first + turn; });
    turn = (turn + 1) % range.count;
  }
}

}  // namespace trn::kernel
