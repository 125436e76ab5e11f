// The inputs of a kernel run as the command line states them: a registered kernel's default
// inputs with `--shape [NAME=]AxBxC` and `--dtype [NAME=]DTYPE` applied. A shape without a name
// applies to the input in its position; a dtype without a name to every floating-point input.
// Extents are positive decimal integers; sizes are checked when the kernel is compiled.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/kernels/registry.h"

namespace trn::kernels {

/// "512x2048" (or "512,2048") as a shape; every extent a positive integer. Errors quote `text`.
Result<std::vector<std::int64_t>> parseShape(std::string_view text);

/// `entry`'s default inputs with the --shape and --dtype values applied, in order.
Result<std::vector<kernel::TensorSpec>> benchInputs(const KernelEntry& entry,
                                                    std::span<const std::string> shapes,
                                                    std::span<const std::string> dtypes);

}  // namespace trn::kernels
