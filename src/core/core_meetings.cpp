// The scheduler's meetings between the cores of a logical core (docs/chip.md): core barriers,
// which order everything before any core's arrival before everything after it, and sendrecv
// exchanges, which swap SBUF tiles between the two cores of a pair.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <variant>
#include <vector>

#include "simulation.h"

namespace trn::core::sim {

bool Simulation::arriveAtBarrier(std::uint32_t c, Engine engine, std::int64_t now) {
  CoreRun& cr = cores_[c];
  EngineState& es = cr.engines[static_cast<std::size_t>(engine)];
  BarrierGroup& group = groups_[cr.group];
  if (es.barrier == 0) {
    es.barrier = ++cr.barriersReached;
    if (group.barriers.size() < es.barrier) {
      group.barriers.resize(es.barrier);
    }
    BarrierState& b = group.barriers[es.barrier - 1];
    ++b.arrived;
    b.lastArrival = std::max(b.lastArrival, now);
    if (crossCore_) {
      crossCore_->arrive(c, cr.hazards->clock(HazardDetector::engineAgent(engine)));
    }
    if (b.arrived < group.cores.size()) {
      return false;
    }
    if (const auto& host = cr.core->options().hostBarrier) {
      host->arrive_and_wait();  // the other cores of the logical core run on other threads
    }
    // The last to arrive goes on; the others see its remote semaphore write.
    b.complete = true;
    for (const std::uint32_t other : group.cores) {
      for (const Engine e : isa::kAllEngines) {
        EngineState& waiting = cores_[other].engines[static_cast<std::size_t>(e)];
        if (waiting.blocked && waiting.blockedOn == kBarrierWait && waiting.barrier == es.barrier &&
            !waiting.wakePending && !(other == c && e == engine)) {
          waiting.wakePending = true;
          schedule(b.lastArrival + barrierLatency_ + semaphoreDelay_[static_cast<std::size_t>(e)],
                   EventKind::kReady, other, static_cast<std::uint32_t>(e));
        }
      }
    }
    return true;
  }
  return group.barriers[es.barrier - 1].complete;
}

Result<bool> Simulation::arriveAtExchange(std::uint32_t c, Engine engine, std::int64_t now) {
  CoreRun& cr = cores_[c];
  EngineState& es = cr.engines[static_cast<std::size_t>(engine)];
  BarrierGroup& group = groups_[cr.group];
  if (es.exchange == 0) {
    if (group.cores.size() != 2) {
      return failedPrecondition(fmt::format("sendrecv exchanges tiles with the other core of an "
                                            "LNC=2 pair, but this logical core "
                                            "runs {} core(s) here",
                                            group.cores.size()))
          .withContext(describe(c, AccessOwner{engine, static_cast<std::uint32_t>(es.pc)}));
    }
    es.exchange = ++cr.exchangesReached;
    if (group.exchanges.size() < es.exchange) {
      group.exchanges.resize(es.exchange);
    }
    ExchangeState& x = group.exchanges[es.exchange - 1];
    x.parties.push_back({c, engine, static_cast<std::uint32_t>(es.pc)});
    x.lastArrival = std::max(x.lastArrival, now);
    if (x.parties.size() == 2) {
      TRN_RETURN_IF_ERROR(exchange(x));
    }
    return false;
  }
  const ExchangeState& x = group.exchanges[es.exchange - 1];
  return x.doneAt >= 0 && now >= x.doneAt;
}

Status Simulation::exchange(ExchangeState& x) {
  std::array<isa::InstructionBody, 2> bodies;
  std::array<const isa::SendRecv*, 2> instr{};
  for (std::size_t i = 0; i < 2; ++i) {
    const ExchangeState::Party& p = x.parties[i];
    cores_[p.core].core->program().stream(p.engine).decodeBody(p.pc, bodies[i]);
    instr[i] = &std::get<isa::SendRecv>(bodies[i]);
  }
  const isa::AccessPattern& first = instr[0]->src;
  if (first.dtype != instr[1]->dst.dtype || first.elementCount() != instr[1]->dst.elementCount() ||
      instr[1]->src.dtype != instr[0]->dst.dtype ||
      instr[1]->src.elementCount() != instr[0]->dst.elementCount()) {
    const ExchangeState::Party& p = x.parties[1];
    return failedPrecondition(
               fmt::format(
                   "sendrecv tiles do not match between the cores: {} {} elements go to {} {} "
                   "elements and {} {} to {} {}",
                   first.elementCount(), dtypeName(first.dtype), instr[1]->dst.elementCount(),
                   dtypeName(instr[1]->dst.dtype), instr[1]->src.elementCount(),
                   dtypeName(instr[1]->src.dtype), instr[0]->dst.elementCount(),
                   dtypeName(instr[0]->dst.dtype)))
        .withContext(describe(p.core, AccessOwner{p.engine, p.pc}));
  }
  // Timing: the semaphore handshake over the shared DMA engines (as a core barrier's), then both
  // tiles cross at once, each as a DMA transfer alone on the engines would.
  x.doneAt = x.lastArrival;
  if (timing_) {
    const std::int64_t maxBuffer = chip_->core.dma.descriptors.maxBufferBytes.count();
    std::int64_t crossing = 0;
    for (std::size_t i = 0; i < 2; ++i) {
      isa::DmaCopy copy;
      copy.dst = instr[1 - i]->dst;
      copy.src = instr[i]->src;
      crossing = std::max(crossing, dma_->aloneTime(transferShape(isa::InstructionBody(copy),
                                                                  maxBuffer, chip_->core.dma)));
    }
    x.doneAt = x.lastArrival + barrierLatency_ + crossing;
    if (x.doneAt > kMaxSimulatedTime.count()) {
      return timeOverflow().withContext(
          describe(x.parties[1].core, AccessOwner{x.parties[1].engine, x.parties[1].pc}));
    }
  }
  // Data: both sources are read before either destination is written.
  if (hasData(mode_)) {
    std::array<std::vector<std::byte>, 2> tiles;
    for (std::size_t i = 0; i < 2; ++i) {
      const ExchangeState::Party& p = x.parties[i];
      const isa::AccessPattern& src = instr[i]->src;
      tiles[i].resize(static_cast<std::size_t>(src.elementCount() * byteSize(src.dtype)));
      EngineState& es = cores_[p.core].engines[static_cast<std::size_t>(p.engine)];
      if (Status s = cores_[p.core].core->readTile(p.engine, es.seq, src, tiles[i]); !s.ok()) {
        return s.withContext(describe(p.core, AccessOwner{p.engine, p.pc}));
      }
    }
    for (std::size_t i = 0; i < 2; ++i) {
      const ExchangeState::Party& p = x.parties[i];
      EngineState& es = cores_[p.core].engines[static_cast<std::size_t>(p.engine)];
      if (Status s = cores_[p.core].core->writeTile(p.engine, es.seq, instr[i]->dst, tiles[1 - i]);
          !s.ok()) {
        return s.withContext(describe(p.core, AccessOwner{p.engine, p.pc}));
      }
    }
  }
  // Both engines see the exchange end as a remote semaphore write.
  for (const ExchangeState::Party& p : x.parties) {
    EngineState& es = cores_[p.core].engines[static_cast<std::size_t>(p.engine)];
    es.wakePending = true;
    schedule(x.doneAt + semaphoreDelay_[static_cast<std::size_t>(p.engine)], EventKind::kReady,
             p.core, static_cast<std::uint32_t>(p.engine));
  }
  return {};
}

}  // namespace trn::core::sim
