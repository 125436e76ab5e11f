// The one way to run programs and kernels on simulated hardware. A Session owns a chip
// description and the core limits derived from it; it compiles kernels for that chip, runs
// Programs with host arrays bound to their HBM tensors, and reads results back, all under one
// options struct whose defaults are the same for every caller. The command line, the
// kernel-checking harness, the demo and the benchmarks run through it, and it is the surface the
// Python package binds. Arrays are exchanged in a tensor's storage type (bf16 as raw uint16, ...)
// or as float32, rounded to nearest even on the way in (runner.h has the conversions).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "trn/base/status.h"
#include "trn/core/neuron_core.h"
#include "trn/kernel/compiler.h"
#include "trn/runtime/npy.h"
#include "trn/spec/chip_spec.h"

namespace trn::runtime {

/// How a run is simulated. Every entry point (CLI, harness, Python) starts from these defaults.
struct RunOptions {
  core::RunMode mode = core::RunMode::kFunctionalTiming;
  /// Rounding when engines write narrower types: RNE, or stochastic drawn from `seed`.
  RoundingMode rounding = RoundingMode::kNearestEven;
  std::uint64_t seed = 0;
  /// Report reads of never-written bytes. Applies in the modes with data; timing-only has none.
  bool poison = true;
  /// Report unordered conflicting accesses as errors; off, a racy program follows the schedule.
  bool detectRaces = true;
  /// Keep per-instruction records (for traces), up to core::CoreOptions::maxRecords.
  bool record = false;
  /// Stop with an error after this many executed instructions (endless dynamic loops).
  std::uint64_t maxInstructions = core::kDefaultMaxInstructions;
};

/// An array for HBM tensor `tensor` (borrowed: it must outlive the run); `source` names it in
/// messages (a path, "input 'x'").
struct TensorInput {
  std::string tensor;
  const NpyArray* array = nullptr;
  std::string source;
};

/// An HBM tensor to read back after the run, in its storage type or widened to `hostType`
/// (only fp32 is supported).
struct TensorOutput {
  std::string tensor;
  std::optional<DType> hostType;
};

struct RunResult {
  core::RunStats stats;
  std::vector<NpyArray> outputs;  ///< one per requested output; empty in timing-only mode
};

/// The input tensors of `program` whose names are not in `bound`, in declaration order.
std::vector<std::string> unboundInputs(const isa::Program& program,
                                       std::span<const std::string> bound);

/// The verification limits of one core of `chip` (what kernels compile and programs verify
/// against).
isa::CoreLimits coreLimits(const spec::ChipSpec& chip);

class Session {
 public:
  explicit Session(std::shared_ptr<const spec::ChipSpec> chip);
  /// A session on chip `chip`: a name from configs/chips (trn1, trn2, trn3) or a YAML path.
  static Result<Session> open(const std::string& chip);

  [[nodiscard]] const spec::ChipSpec& chip() const { return *chip_; }
  [[nodiscard]] const std::shared_ptr<const spec::ChipSpec>& sharedChip() const { return chip_; }
  [[nodiscard]] const isa::CoreLimits& coreLimits() const { return limits_; }

  /// Compiles `kernel` for `specs` on this chip's cores, through `cache` when given (so repeated
  /// calls at the same shapes compile once).
  Result<std::shared_ptr<const kernel::CompiledKernel>> compile(
      const kernel::KernelDef& kernel, std::span<const kernel::TensorSpec> specs,
      const kernel::CompileOptions& options = {}, kernel::KernelCache* cache = nullptr) const;

  /// Runs `program` on a core: each input fills its tensor (every input tensor of the program
  /// must have one in the modes with data; timing-only ignores them), then the outputs are read
  /// back in the order asked.
  Result<RunResult> run(std::shared_ptr<const isa::Program> program,
                        std::span<const TensorInput> inputs,
                        std::span<const TensorOutput> outputs, const RunOptions& options) const;

  /// Runs a compiled kernel: `inputs` are its input arrays in order (ignored in timing-only
  /// mode, where they may be empty); its outputs come back in order, floating-point ones as
  /// float32 (exact widening), the others in their storage type.
  Result<RunResult> runKernel(std::shared_ptr<const kernel::CompiledKernel> compiled,
                              std::span<const NpyArray> inputs, const RunOptions& options) const;
  /// The same for a kernel the caller owns; the program is copied for the run.
  Result<RunResult> runKernel(const kernel::CompiledKernel& compiled,
                              std::span<const NpyArray> inputs, const RunOptions& options) const;
  /// Compiles (through `cache` when given) and runs: the one call a kernel author needs.
  Result<RunResult> runKernel(const kernel::KernelDef& kernel,
                              std::span<const kernel::TensorSpec> specs,
                              std::span<const NpyArray> inputs, const RunOptions& options,
                              kernel::KernelCache* cache = nullptr,
                              const kernel::CompileOptions& compileOptions = {}) const;

 private:
  std::shared_ptr<const spec::ChipSpec> chip_;
  isa::CoreLimits limits_;
};

/// A float32 array of `shape` holding `values` (for tests and tools).
NpyArray floatArray(std::vector<std::int64_t> shape, std::span<const float> values);

/// The elements of a float32 array.
std::vector<float> floatValues(const NpyArray& array);

}  // namespace trn::runtime
