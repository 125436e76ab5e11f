#include "deadlock_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>
#include <vector>

#include "trn/isa/enums.h"

namespace trn::core {

using isa::Engine;

Status deadlockReport(std::span<const CoreRun> cores, std::span<const BarrierGroup> groups,
                      const std::function<std::string(std::uint32_t, AccessOwner)>& describe) {
  std::string pending;
  for (std::uint32_t c = 0; c < cores.size(); ++c) {
    const CoreRun& cr = cores[c];
    for (const Engine engine : isa::kAllEngines) {
      const EngineState& es = cr.engines[static_cast<std::size_t>(engine)];
      if (es.done || !es.blocked) {
        continue;
      }
      const std::span<const isa::SemaphoreWait> waitList =
          cr.core->program().stream(engine).waits(es.pc);
      const AccessOwner owner{engine, static_cast<std::uint32_t>(es.pc)};
      if (es.blockedOn == kExchangeWait) {
        pending += fmt::format(
            "\n  {} waits at sendrecv {} for the other core of its pair, which never reaches it",
            describe(c, owner), es.exchange);
        continue;
      }
      if (es.blockedOn == kCollectiveWait) {
        std::vector<std::uint32_t> missing;
        for (const std::int32_t other : cr.collectiveGroups[es.collective - 1]) {
          const std::uint32_t first = groups[static_cast<std::size_t>(other)].cores.front();
          if (cores[first].collectivesReached < es.collective) {
            missing.push_back(static_cast<std::uint32_t>(other));
          }
        }
        pending += fmt::format("\n  {} waits at collective {} for rank(s) {}, which never reach it",
                               describe(c, owner), es.collective, fmt::join(missing, ", "));
        continue;
      }
      if (es.blockedOn == kBarrierWait) {
        std::vector<std::uint32_t> missing;
        for (const std::uint32_t other : groups[cr.group].cores) {
          if (cores[other].barriersReached < es.barrier) {
            missing.push_back(other);
          }
        }
        pending +=
            fmt::format("\n  {} waits at core barrier {} for core(s) {}, which never reach it",
                        describe(c, owner), es.barrier, fmt::join(missing, ", "));
        continue;
      }
      std::vector<std::string> waits;
      for (const isa::SemaphoreWait& w : waitList) {
        if (cr.waitRaces) {
          // A wait that missed a window of its condition is a race, not only a deadlock.
          std::string race = cr.waitRaces->couldHavePassed(
              w, cr.hazards->clock(HazardDetector::engineAgent(engine)), owner);
          if (!race.empty()) {
            return raceDetected(std::move(race));
          }
        }
        waits.push_back(fmt::format("s{} {} {} (s{} = {})", w.semaphore, isa::enumName(w.compare),
                                    w.value, w.semaphore,
                                    cr.semaphores[static_cast<std::size_t>(w.semaphore)]));
      }
      pending += fmt::format("\n  {} waits for {}", describe(c, owner), fmt::join(waits, " and "));
    }
  }
  return deadlockDetected(fmt::format("deadlock: no engine can proceed{}", pending));
}

}  // namespace trn::core
