// The one way to run programs and kernels on simulated hardware. A Session owns a chip
// description and the core limits derived from it; it compiles kernels for that chip, runs
// Programs on one or several of its physical cores with host arrays bound to their HBM tensors
// in one device memory, and reads results back, all under one options struct whose defaults are
// the same for every caller. A kernel launched at LNC=2 runs one program instance on each core
// of a logical core (NKI's SPMD model), sharing its inputs and outputs in HBM (docs/chip.md). The
// command line, the kernel-checking harness, the demo and the benchmarks run through it, and it is
// the surface the Python package binds. Arrays are exchanged in a tensor's storage type (bf16 as
// raw uint16, ...) or as float32, rounded to nearest even on the way in (runner.h has the
// conversions).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "trn/base/status.h"
#include "trn/core/neuron_core.h"
#include "trn/fabric/kernel_collectives.h"
#include "trn/fabric/topology.h"
#include "trn/isa/chip_program.h"
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
  /// Physical cores per logical core (1 or 2 where the chip supports it): a kernel launch spreads
  /// its grid's first axis over them, and physical cores 2i and 2i+1 form logical core i at 2.
  int lnc = 1;
  /// Compute the data of a multi-core run on one host thread per core (the timing, races and
  /// deadlocks come from a timing-only pass of the cores together). Off, one thread runs all, as
  /// it also does for programs that exchange tiles with sendrecv.
  bool parallel = true;
};

/// One core of a chip run: its program and the physical core it runs on.
struct CoreProgram {
  std::shared_ptr<const isa::Program> program;
  int physicalCore = 0;
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
  /// The run as a whole: one core's statistics, or for several cores their totals merged
  /// (core::mergeStats: the longest time, summed counts).
  core::RunStats stats;
  std::vector<core::RunStats> cores;  ///< per core, in launch order
  std::vector<int> physicalCores;     ///< in launch order
  std::vector<NpyArray> outputs;      ///< one per requested output; empty in timing-only mode
};

/// One rank of a system run (Session::runRanks): its program and its host arrays.
struct RankProgram {
  std::shared_ptr<const isa::Program> program;
  std::vector<TensorInput> inputs;
  std::vector<TensorOutput> outputs;
  /// The programs of the rank's other physical cores, for a rank that is a launch over a logical
  /// core of several (LNC=2): they run on the next physical cores, share the rank's tensors by
  /// name and meet its first core at core barriers; they issue no collectives.
  std::vector<std::shared_ptr<const isa::Program>> otherCores{};
};

struct RanksResult {
  core::RunStats stats;                               ///< the ranks' statistics merged
  std::vector<RunResult> ranks;                       ///< per rank: its statistics and outputs
  std::vector<fabric::CollectiveRecord> collectives;  ///< each collective run, in order
};

/// A kernel compiled for a launch over the cores of a logical core: one program per core.
struct CompiledLaunch {
  std::vector<std::shared_ptr<const kernel::CompiledKernel>> cores;
  [[nodiscard]] const kernel::CompiledKernel& first() const { return *cores.front(); }
  /// The launch as the contents of a program file: core c's program on physical core c, at an
  /// LNC of the core count.
  [[nodiscard]] isa::ChipProgram chipProgram() const;
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

  /// Compiles `kernel` for a launch over `options.lnc` cores: the SPMD grid `gridShape` (empty:
  /// one instance per core, {lnc}) has its axis 0 spread over them in equal blocks, core c
  /// tracing the instances of its block, one after another.
  Result<CompiledLaunch> compileLaunch(const kernel::KernelDef& kernel,
                                       std::span<const kernel::TensorSpec> specs,
                                       const RunOptions& options,
                                       const kernel::CompileOptions& compileOptions = {},
                                       kernel::KernelCache* cache = nullptr,
                                       std::span<const std::int64_t> gridShape = {}) const;

  /// Runs `program` on physical core 0: each input fills its tensor (every input tensor of the
  /// program must have one in the modes with data; timing-only ignores them), then the outputs
  /// are read back in the order asked.
  Result<RunResult> run(std::shared_ptr<const isa::Program> program,
                        std::span<const TensorInput> inputs, std::span<const TensorOutput> outputs,
                        const RunOptions& options) const;

  /// Runs one program per physical core, launched together in one timeline on one device
  /// memory. Tensors of the same name are one device tensor (they must agree in shape and
  /// dtype), placed in the HBM stack of the first core that declares it; inputs fill them and
  /// outputs are read from them by name. Cores of one logical core meet at core barriers.
  Result<RunResult> runCores(std::span<const CoreProgram> cores,
                             std::span<const TensorInput> inputs,
                             std::span<const TensorOutput> outputs,
                             const RunOptions& options) const;

  /// Runs one program per rank over a system of this session's chip, in one timeline: rank r on
  /// place r of `topology`, each chip with its own device memory holding its ranks' tensors. With
  /// a rank per chip (Topology::create's default) that is physical core 0 of chip r; with L
  /// logical-core ranks per chip (LNC), the first physical core of logical core r mod L of chip
  /// r / L, its tensors in that core's HBM stack. A rank's other cores
  /// (RankProgram::otherCores) take the physical cores after its first, within its logical core
  /// (at a rank per chip, within the chip). The programs' `collective` instructions meet
  /// across the ranks and go over the fabric (fabric/kernel_collectives.h): timed by the fabric
  /// model, and in the modes with data executed on the ranks' HBM. Data runs on one host thread.
  Result<RanksResult> runRanks(const fabric::Topology& topology, std::span<const RankProgram> ranks,
                               const RunOptions& options) const;

  /// Runs a launch: its cores on physical cores 0..n-1 (logical core 0), inputs and outputs as
  /// runKernel's.
  Result<RunResult> runLaunch(const CompiledLaunch& launch, std::span<const NpyArray> inputs,
                              const RunOptions& options) const;
  /// The same with borrowed arrays (inputs[i] fills input i), for callers that hold some of them
  /// apart from the others (a compiled model's weights, converted once).
  Result<RunResult> runLaunch(const CompiledLaunch& launch, std::span<const NpyArray* const> inputs,
                              const RunOptions& options) const;

  /// Runs a compiled kernel: `inputs` are its input arrays in order (ignored in timing-only
  /// mode, where they may be empty); its outputs come back in order, floating-point ones as
  /// float32 (exact widening), the others in their storage type.
  Result<RunResult> runKernel(std::shared_ptr<const kernel::CompiledKernel> compiled,
                              std::span<const NpyArray> inputs, const RunOptions& options) const;
  /// The same for a kernel the caller owns; the program is copied for the run.
  Result<RunResult> runKernel(const kernel::CompiledKernel& compiled,
                              std::span<const NpyArray> inputs, const RunOptions& options) const;
  /// Compiles (through `cache` when given) for a launch over `options.lnc` cores and runs: the
  /// one call a kernel author needs.
  Result<RunResult> runKernel(const kernel::KernelDef& kernel,
                              std::span<const kernel::TensorSpec> specs,
                              std::span<const NpyArray> inputs, const RunOptions& options,
                              kernel::KernelCache* cache = nullptr,
                              const kernel::CompileOptions& compileOptions = {}) const;

 private:
  /// An error unless `lnc` is a logical-core size of the chip.
  [[nodiscard]] Status checkLnc(int lnc) const;

  std::shared_ptr<const spec::ChipSpec> chip_;
  isa::CoreLimits limits_;
};

/// A float32 array of `shape` holding `values` (for tests and tools).
NpyArray floatArray(std::vector<std::int64_t> shape, std::span<const float> values);

/// The elements of a float32 array.
std::vector<float> floatValues(const NpyArray& array);

}  // namespace trn::runtime
