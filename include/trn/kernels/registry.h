// The reference kernel library: every kernel written in the tile language that trnsim ships,
// by name, with a one-line summary and default inputs, for `trnsim kernels` and the benchmarks.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "trn/kernel/compiler.h"

namespace trn::kernels {

struct KernelEntry {
  std::string name;
  std::string summary;
  std::vector<kernel::TensorSpec> defaultInputs;
  kernel::KernelDef def;
};

/// Every reference kernel, in name order.
const std::vector<KernelEntry>& referenceKernels();

/// The kernel called `name`, or nullptr.
const KernelEntry* findKernel(std::string_view name);

}  // namespace trn::kernels
