// Running a reference kernel against its CPU reference: compile (through a cache), generate
// seeded inputs, run on one simulated core or, at LNC=2 (`run.lnc`), on the two cores of a
// logical core, in any mode, compare every output with the float64
// reference, and derive the figures `trnsim kernels bench` and the demo print (simulated time,
// per-engine utilisation, TFLOP/s, MFU, HBM bandwidth, the bounding engine).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/kernel/compiler.h"
#include "trn/kernels/registry.h"
#include "trn/profile/report.h"
#include "trn/profile/verdict.h"
#include "trn/runtime/session.h"

namespace trn::harness {

// The harness works on the kernel library's entries and host tensors.
using kernels::Comparison;
using kernels::HostTensor;
using kernels::KernelEntry;
using kernels::Tolerance;

struct CheckOptions {
  /// How the kernel runs; `run.seed` also draws the random inputs.
  runtime::RunOptions run;
  bool checkNumerics = true;  ///< compute the float64 reference and compare (modes with data)
  std::optional<Tolerance> tolerance;  ///< overrides the entry's
  kernel::CompileOptions compile;
};

struct CheckResult {
  std::shared_ptr<const kernel::CompiledKernel> compiled;  ///< core 0's program of the launch
  runtime::CompiledLaunch launch;                          ///< every core's
  std::vector<HostTensor> inputs;       ///< what the kernel was given (empty in timing-only mode)
  std::vector<HostTensor> outputs;      ///< what it returned (empty in timing-only mode)
  Tolerance tolerance;                  ///< what the comparisons used
  bool checked = false;                 ///< the outputs were compared with the reference
  std::vector<Comparison> comparisons;  ///< one per output when checked
  bool pass = true;                     ///< every comparison passed (true when not checked)
  core::RunStats stats;                 ///< the launch's (core::mergeStats for several cores)
  std::vector<core::RunStats> cores;    ///< per core
  std::vector<int> physicalCores;
  profile::Report report;
  double usefulFlops = 0;  ///< KernelEntry::flops
  /// usefulFlops / (simulated time x dense BF16 PE peak of the cores used); 0 untimed.
  double mfu = 0;
  /// What bounds the launch (timed modes): the verdict of its slowest core, with the critical
  /// path when the run kept records (CheckOptions::run.record), else from its figures alone.
  profile::Verdict verdict;
};

/// OK unless `autoCast` asks for bf16 products and `entry` has matrix products that do not
/// auto-cast (an error naming the kernels that do); kernels without products ignore it.
Status checkAutoCast(const KernelEntry& entry, std::span<const kernel::TensorSpec> specs,
                     kernel::AutoCast autoCast);

/// Runs `entry` at `specs` in `session` on random inputs (or `inputs` when given: one per spec,
/// already rounded to its dtype) and checks it.
Result<CheckResult> checkKernel(const runtime::Session& session, const KernelEntry& entry,
                                std::span<const kernel::TensorSpec> specs,
                                const CheckOptions& options = {},
                                kernel::KernelCache* cache = nullptr,
                                std::span<const HostTensor> inputs = {});

/// What bounds a checked run in a few words (profile::verdictLabel of its verdict), e.g.
/// "latency-bound (DMA latency)"; "" for an untimed run.
std::string boundBy(const CheckResult& result);

/// A host tensor as the float32 array the runner takes, and back.
runtime::NpyArray toNpy(const HostTensor& tensor);
HostTensor fromNpy(const runtime::NpyArray& array);

}  // namespace trn::harness
