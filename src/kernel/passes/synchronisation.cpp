// Synchronisation by per-agent counting semaphores and vector clocks (see synchronisation.h).
#include "passes/synchronisation.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <span>

#include "passes/dma_placement.h"

namespace trn::kernel {
namespace {

/// Each instruction's rank on its agent: how many counted instructions of the agent have
/// completed when its last execution completes. An instruction in a dynamic loop runs `trips`
/// times, so the ranks of the body count every iteration.
std::vector<std::int32_t> ranks(const KernelIR& ir, const std::vector<int>& agentOf, int agents,
                                const std::vector<char>& counted) {
  std::vector<std::int32_t> rank(ir.ops.size(), 0);
  std::vector<std::int64_t> done(static_cast<std::size_t>(agents), 0);
  std::vector<std::int64_t> perIteration(static_cast<std::size_t>(agents), 0);
  std::vector<std::int64_t> seen(static_cast<std::size_t>(agents), 0);
  std::size_t nextLoop = 0;
  for (std::size_t i = 0; i < ir.ops.size();) {
    const DynamicLoop* loop =
        nextLoop < ir.loops.size() && ir.loops[nextLoop].begin == static_cast<std::int64_t>(i)
            ? &ir.loops[nextLoop++]
            : nullptr;
    if (loop == nullptr) {
      // One instruction, once.
      const auto a = static_cast<std::size_t>(agentOf[i]);
      done[a] += counted[i] ? 1 : 0;
      TRN_CHECK(done[a] <= std::numeric_limits<std::int32_t>::max()) << "semaphore count overflow";
      rank[i] = static_cast<std::int32_t>(done[a]);
      ++i;
      continue;
    }
    const auto end = static_cast<std::size_t>(loop->end);
    const std::int64_t trips = loop->trips;
    std::fill(perIteration.begin(), perIteration.end(), 0);
    for (std::size_t j = i; j < end; ++j) {
      perIteration[static_cast<std::size_t>(agentOf[j])] += counted[j] ? 1 : 0;
    }
    std::fill(seen.begin(), seen.end(), 0);
    for (std::size_t j = i; j < end; ++j) {
      const auto a = static_cast<std::size_t>(agentOf[j]);
      seen[a] += counted[j] ? 1 : 0;
      const std::int64_t r = done[a] + (trips - 1) * perIteration[a] + seen[a];
      TRN_CHECK(r <= std::numeric_limits<std::int32_t>::max()) << "semaphore count overflow";
      rank[j] = static_cast<std::int32_t>(r);
    }
    for (std::size_t a = 0; a < done.size(); ++a) {
      done[a] += trips * perIteration[a];
    }
    i = end;
  }
  return rank;
}

struct Candidate {
  int agent;
  std::int32_t rank;  ///< among all instructions of the agent, 1-based
  std::int32_t op;
};

}  // namespace

Result<SyncSummary> synchronise(KernelIR& ir, const Dependencies& deps,
                                const isa::CoreLimits& limits) {
  const int queues = limits.dmaQueues;
  const int agents = isa::kNumEngines + queues;
  if (agents > limits.semaphores) {
    return Status(ErrorCode::kUnsupported,
                  fmt::format("the synchronisation scheme needs {} semaphores; the core has {}",
                              agents, limits.semaphores));
  }
  const std::size_t n = ir.ops.size();
  const auto width = static_cast<std::size_t>(agents);
  // Huge-page backed: n x width clocks are tens of megabytes for a large kernel.
  LargeVector<std::int32_t> clocks(n * width, 0);
  std::vector<std::int32_t> engineKnows(isa::kNumEngines * width, 0);
  std::vector<std::int32_t> queueKnows(static_cast<std::size_t>(queues) * width, 0);
  std::vector<int> agentOf(n);
  std::vector<isa::Engine> engineOf(n);  // so that the main loop need not reread the ops
  std::vector<char> signals(n, 0);
  // The producers op i waits for: waitsOn[waitsFrom[i] .. waitsFrom[i + 1]).
  std::vector<std::int32_t> waitsOn;
  std::vector<std::size_t> waitsFrom(n + 1, 0);
  std::vector<std::int32_t> know(width);
  std::vector<Candidate> candidates;
  SyncSummary summary;

  auto clockOf = [&](std::size_t op) { return std::span(clocks).subspan(op * width, width); };
  auto merge = [](std::span<std::int32_t> into, std::span<const std::int32_t> from) {
    for (std::size_t a = 0; a < into.size(); ++a) {
      into[a] = std::max(into[a], from[a]);
    }
  };

  for (std::size_t i = 0; i < n; ++i) {
    const isa::Instruction& instr = ir.ops[i].instr;
    const int queue = dmaQueue(instr.body);
    const bool viaDma = isa::info(instr.body).viaDma;
    TRN_CHECK(!viaDma || (queue >= 0 && queue < queues)) << "DMA without a placed queue";
    agentOf[i] = viaDma ? isa::kNumEngines + queue : static_cast<int>(instr.engine);
    engineOf[i] = instr.engine;
  }
  const std::vector<std::int32_t> rankOf = ranks(ir, agentOf, agents, std::vector<char>(n, 1));
  for (std::size_t i = 0; i < n; ++i) {
    const auto engine = static_cast<std::size_t>(engineOf[i]);
    const int agent = agentOf[i];
    const bool viaDma = agent >= isa::kNumEngines;
    const int queue = agent - isa::kNumEngines;

    auto issuer = std::span(engineKnows).subspan(engine * width, width);
    std::copy(issuer.begin(), issuer.end(), know.begin());
    if (viaDma) {
      merge(know, std::span(queueKnows).subspan(static_cast<std::size_t>(queue) * width, width));
    }
    // The latest producer on each other agent, unless already known.
    candidates.clear();
    for (const std::int32_t p : deps[i]) {
      const int a = agentOf[static_cast<std::size_t>(p)];
      const std::int32_t r = rankOf[static_cast<std::size_t>(p)];
      if (a == agent || know[static_cast<std::size_t>(a)] >= r) {
        continue;
      }
      ++summary.dependencies;
      auto same = std::find_if(candidates.begin(), candidates.end(),
                               [&](const Candidate& c) { return c.agent == a; });
      if (same == candidates.end()) {
        candidates.push_back({a, r, p});
      } else if (same->rank < r) {
        *same = {a, r, p};
      }
    }
    // Drop a producer that another producer has already waited for.
    for (const Candidate& c : candidates) {
      const bool implied =
          std::any_of(candidates.begin(), candidates.end(), [&](const Candidate& o) {
            return o.agent != c.agent &&
                   clockOf(static_cast<std::size_t>(o.op))[static_cast<std::size_t>(c.agent)] >=
                       c.rank;
          });
      if (!implied) {
        waitsOn.push_back(c.op);
        signals[static_cast<std::size_t>(c.op)] = 1;
      }
    }
    waitsFrom[i + 1] = waitsOn.size();
    for (const std::int32_t p : std::span(waitsOn).subspan(waitsFrom[i])) {
      merge(know, clockOf(static_cast<std::size_t>(p)));
      merge(issuer, clockOf(static_cast<std::size_t>(p)));
    }
    know[static_cast<std::size_t>(agent)] = rankOf[i];
    std::copy(know.begin(), know.end(), clockOf(i).begin());
    if (viaDma) {
      std::copy(know.begin(), know.end(),
                queueKnows.begin() +
                    static_cast<std::ptrdiff_t>(static_cast<std::size_t>(queue) * width));
    } else {
      std::copy(know.begin(), know.end(), issuer.begin());
    }
  }

  // Semaphore values count only the instructions that signal.
  const std::vector<std::int32_t> signalRank = ranks(ir, agentOf, agents, signals);
  OpSemaphores& table = ir.semaphores;
  table.waits.clear();
  table.waits.reserve(waitsOn.size());
  table.waitsFrom.assign(n + 1, 0);
  table.signals.assign(n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    if (signals[i]) {
      table.signals[i] = agentOf[i];
    }
    const std::span<const std::int32_t> producers =
        std::span(waitsOn).subspan(waitsFrom[i], waitsFrom[i + 1] - waitsFrom[i]);
    for (const std::int32_t p : producers) {
      const auto producer = static_cast<std::size_t>(p);
      table.waits.push_back(isa::SemaphoreWait{agentOf[producer], isa::WaitCompare::kGreaterEqual,
                                               signalRank[producer]});
    }
    table.waitsFrom[i + 1] = table.waits.size();
  }
  summary.waits = static_cast<std::int64_t>(table.waits.size());
  return summary;
}

}  // namespace trn::kernel
