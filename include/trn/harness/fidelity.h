// The fidelity report (docs/fidelity.md): every published device measurement of a kernel that
// trnsim mirrors, like for like (the same kernel at the same shapes on the same chip), simulated
// again and set beside the published figure. A measurement belongs to the calibration set (facts
// the chip parameters may be chosen from) or to the validation set (computed and reported, never
// fitted to). `trnsim fidelity` prints the table; a test keeps the copy in docs/fidelity.md from
// drifting.
#pragma once

#include <string>
#include <vector>

#include "trn/base/status.h"
#include "trn/kernel/compiler.h"

namespace trn::harness {

struct PublishedMeasurement {
  std::string kernel;  ///< registry name (trn::kernels::findKernel)
  std::string step;    ///< what the publication calls it
  std::string chip;    ///< chip description it was measured on
  std::vector<kernel::TensorSpec> inputs;
  double seconds = 0;  ///< the published device time
  std::string source;
  bool calibration = false;
};

/// Every measurement the project has found, in report order.
const std::vector<PublishedMeasurement>& publishedMeasurements();

struct FidelityRow {
  PublishedMeasurement measurement;
  double simulatedSeconds = 0;  ///< on the measurement's chip, timing-only
  double error = 0;             ///< (simulated - published) / published
  double trn2Seconds = 0;       ///< the same kernel and shapes simulated on trn2
  /// Why the kernel could not be simulated at these shapes on the measurement's chip (the
  /// start of the error, "sbuf is full"), or empty when it was; then the times above are 0.
  std::string notSimulated;
  std::string trn2NotSimulated;  ///< the same for trn2
};

/// Simulates every published measurement (timing-only, deterministic). A kernel that does not
/// compile or run at a measurement's shapes gives a row that says why; a measurement naming no
/// registered kernel is an error.
Result<std::vector<FidelityRow>> fidelityRows();

/// The rows as the Markdown table of docs/fidelity.md, with a summary line per set.
std::string fidelityTable(const std::vector<FidelityRow>& rows);

}  // namespace trn::harness
