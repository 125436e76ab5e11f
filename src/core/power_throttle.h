// Internal to the scheduler (simulation.cpp): TensorE's power throttle (docs/timing.md, "TensorE
// power throttling"). After an idle gap the engine starts at a fraction of its speed and ramps to
// full speed linearly; a gap of at least rearm_window x (1 - rearm_threshold) re-arms the ramp.
#pragma once

#include <algorithm>
#include <cstdint>

#include "trn/spec/chip_spec.h"

namespace trn::core {

/// One core's throttle state.
struct PowerThrottleState {
  std::int64_t peLastEnd = -1;  ///< end of the last TensorE instruction (ps), -1 before any
  std::int64_t rampStart = 0;   ///< when the current ramp began (ps)
};

/// The speed limit, in (0, 1], of a TensorE instruction that starts at `now` (1 when throttling
/// is off); re-arms the ramp of `state` after an idle gap.
inline double throttleLimit(const spec::PowerThrottle& pt, PowerThrottleState& state,
                            std::int64_t now) {
  if (!pt.enabled) {
    return 1.0;
  }
  const double rearmGap =
      static_cast<double>(pt.rearmWindow.count()) * (1.0 - pt.rearmThreshold.toDouble());
  if (state.peLastEnd < 0 || static_cast<double>(now - state.peLastEnd) >= rearmGap) {
    state.rampStart = now;
  }
  const double ramp = static_cast<double>(pt.rampTime.count());
  const double progress =
      ramp <= 0 ? 1.0 : std::min(1.0, static_cast<double>(now - state.rampStart) / ramp);
  const double start = pt.startFraction.toDouble();
  return start + (1.0 - start) * progress;
}

}  // namespace trn::core
