// Running a compiled tile kernel on the core model: host arrays in, host arrays and run
// statistics out, in any of the three modes. Inputs may be given in their storage type or as
// float32 (rounded to nearest even); outputs come back as float32 for floating-point tensors
// (exact widening) and in their storage type otherwise.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "trn/base/status.h"
#include "trn/core/neuron_core.h"
#include "trn/core/timeline.h"
#include "trn/kernel/compiler.h"
#include "trn/runtime/npy.h"
#include "trn/spec/chip_spec.h"

namespace trn::runtime {

struct KernelRunOptions {
  core::RunMode mode = core::RunMode::kFunctionalTiming;
  std::shared_ptr<const spec::ChipSpec> chip;  ///< required
  std::uint64_t seed = 0;
  bool poison = true;  ///< report reads of never-written bytes (in the modes with data)
  bool detectRaces = true;
  bool record = false;  ///< keep per-instruction records (for traces)
  std::uint64_t maxInstructions = core::CoreOptions{}.maxInstructions;
};

struct KernelRun {
  std::vector<NpyArray> outputs;  ///< in the kernel's return order; empty in timing-only mode
  core::RunStats stats;
};

Result<KernelRun> runKernel(const kernel::CompiledKernel& compiled,
                            std::span<const NpyArray> inputs, const KernelRunOptions& options);

/// Compiles `kernel` for the inputs' shapes and dtypes (through `cache` when given, so repeated
/// calls at the same shapes compile once) and runs it: the one call a kernel author needs.
/// `specs` name the inputs and give their dtypes; `inputs` hold their values (ignored in
/// timing-only mode, where they may be empty).
Result<KernelRun> runKernel(const kernel::KernelDef& kernel,
                            std::span<const kernel::TensorSpec> specs,
                            std::span<const NpyArray> inputs, const KernelRunOptions& options,
                            kernel::KernelCache* cache = nullptr,
                            const kernel::CompileOptions& compileOptions = {});

/// A float32 array of `shape` holding `values` (for tests and tools).
NpyArray floatArray(std::vector<std::int64_t> shape, std::span<const float> values);

/// The elements of a float32 array.
std::vector<float> floatValues(const NpyArray& array);

}  // namespace trn::runtime
