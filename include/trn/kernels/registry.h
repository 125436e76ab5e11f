// The reference kernel library: every kernel written in the tile language that trnsim ships,
// by name, with a one-line summary, default inputs, its float64 CPU reference and tolerance, and
// its useful FLOP count, for `trnsim kernels`, the tests and the benchmarks. User kernels join it
// through registerKernel (from a plugin: kernels/plugin.h) and are then found by name like the
// built-in ones.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trn/kernel/compiler.h"
#include "trn/kernels/reference.h"

namespace trn::kernels {

/// The kernel's outputs computed in float64 from its (dtype-rounded) inputs, in return order.
using ReferenceFn = std::function<std::vector<HostTensor>(std::span<const HostTensor> inputs)>;

/// Useful floating-point operations of one run at these input shapes: 2 per multiply-accumulate
/// of every matrix product the kernel computes (what MFU counts), 0 for kernels without one.
using FlopsFn = std::function<double(std::span<const kernel::TensorSpec> inputs)>;

/// Inputs for a check or benchmark run, rounded to the specs' dtypes.
using InputsFn = std::function<std::vector<HostTensor>(std::span<const kernel::TensorSpec> specs,
                                                       std::uint64_t seed)>;

/// The tolerance at these inputs, for kernels whose accuracy depends on the dtypes.
using ToleranceFn = std::function<Tolerance(std::span<const kernel::TensorSpec> inputs)>;

struct KernelEntry {
  std::string name;
  std::string summary;
  std::vector<kernel::TensorSpec> defaultInputs;
  kernel::KernelDef def;
  ReferenceFn reference;
  Tolerance tolerance;
  FlopsFn flops;
  /// Empty: randomInputs (uniform [-1, 1)). Kernels with constraints on their inputs (positive
  /// variances, probabilities, scales) provide their own.
  InputsFn inputs;
  /// Empty: `tolerance` at every dtype.
  ToleranceFn toleranceFor;
  /// The kernel splits its work over the SPMD program instances of grid axis 0 (NKI
  /// nl.program_id(0) / nl.num_programs(0)): compiled with Grid{{P}}, instance i computes the
  /// i-th contiguous block of its outputs (rows, columns or heads; docs/kernels.md) and every
  /// output element is written by exactly one instance, with the arithmetic of a one-instance
  /// run, so the outputs are bit-identical for every P. These are the kernels that accept an
  /// LNC=2 launch (one instance per physical core). A kernel without the mark computes
  /// everything in every instance.
  bool spmd = false;
  /// The inputs whose matrix products the kernel computes in bf16 under
  /// kernel::AutoCast::kMatmult when they are fp32 (the reference then reads them rounded to
  /// bf16). Empty: the kernel does not auto-cast.
  std::vector<std::size_t> autoCastInputs = {};

  /// toleranceFor(inputs) when set, else tolerance.
  [[nodiscard]] Tolerance toleranceAt(std::span<const kernel::TensorSpec> specs) const {
    return toleranceFor ? toleranceFor(specs) : tolerance;
  }
};

/// Every reference kernel, in name order (the built-in library, without user kernels).
const std::vector<KernelEntry>& referenceKernels();

/// Adds a user kernel (from a plugin, kernels/plugin.h, or a program of its own) to the library
/// for the rest of the process, after the reference kernels. The entry needs a name no kernel
/// has yet, a kernel body, default inputs and a reference (invalid argument otherwise). Safe to
/// call from several threads; pointers from findKernel stay valid.
Status registerKernel(KernelEntry entry);

/// The kernels added by registerKernel, in the order they were added.
std::vector<const KernelEntry*> userKernels();

/// The kernel called `name` (a reference kernel, else a user kernel), or nullptr.
const KernelEntry* findKernel(std::string_view name);

}  // namespace trn::kernels
