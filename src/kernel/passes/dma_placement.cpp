// DMA placement: issuer by the rule in dma_placement.h, queues round-robin (one per declaration
// site for loads).
#include "passes/dma_placement.h"

#include <algorithm>
#include <array>
#include <map>
#include <string_view>
#include <utility>
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

/// The on-chip tile a load from HBM writes, or -1.
std::int32_t loadDestination(const isa::InstructionBody& body) {
  std::int32_t dst = -1;
  bool fromHbm = false;
  std::visit(
      [&](const auto& instr) {
        isa::forEachAccessPattern(
            instr, [&](std::string_view, isa::FieldRole role, const isa::AccessPattern& ap) {
              if (role == isa::FieldRole::kInput && ap.memory == isa::Memory::kHbm) {
                fromHbm = true;
              }
              if (role == isa::FieldRole::kOutput && ap.memory != isa::Memory::kHbm) {
                dst = ap.tensor;
              }
            });
      },
      body);
  return fromHbm ? dst : -1;
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
  // Per declaration site of the tiles loads fill: the queue its loads run on.
  std::map<std::pair<std::int32_t, std::int32_t>, int> siteQueue;
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
    const std::int32_t dst =
        op.instr.engine == isa::Engine::kSp ? loadDestination(op.instr.body) : -1;
    if (dst >= 0) {
      const Site site = ir.buffers[static_cast<std::size_t>(dst)].site;
      const auto [it, added] = siteQueue.try_emplace({site.line, site.file}, turn);
      if (added) {
        turn = (turn + 1) % range.count;
      }
      withQueue(op.instr.body, [&](std::int64_t& queue) { queue = range.first + it->second; });
      continue;
    }
    withQueue(op.instr.body, [&](std::int64_t& queue) { queue = range.first + turn; });
    turn = (turn + 1) % range.count;
  }
}

}  // namespace trn::kernel
