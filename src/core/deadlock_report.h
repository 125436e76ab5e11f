// Internal to the scheduler (simulation.cpp): the error for a run in which no engine can go on.
// It names every blocked engine and what it waits for (semaphores with their values, a core
// barrier with the cores that never reach it, a sendrecv whose partner never comes), unless a
// wait missed a window of its condition, which is a race and reported as one.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "core_run.h"
#include "trn/base/status.h"

namespace trn::core {

/// The deadlock (or wait race) of `cores` and their barrier `groups`; `describe` renders an
/// instruction of core c.
Status deadlockReport(std::span<const CoreRun> cores, std::span<const BarrierGroup> groups,
                      const std::function<std::string(std::uint32_t, AccessOwner)>& describe);

}  // namespace trn::core
