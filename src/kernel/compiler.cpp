// The compiler driver: tracing, then the backend passes in order, with the IR dump and the
// verifier between them, and the compiled-kernel cache.
#include "trn/kernel/compiler.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <ostream>
#include <set>

#include "passes/allocation.h"
#include "passes/dependencies.h"
#include "passes/dma_placement.h"
#include "passes/ir_printer.h"
#include "passes/ir_verifier.h"
#include "passes/lowering.h"
#include "passes/synchronisation.h"
#include "trn/isa/program_binary.h"
#include "trn/isa/program_text.h"

namespace trn::kernel {
namespace detail {

void checkInputCount(Kernel& k, std::size_t expected, std::size_t given) {
  if (expected != given) {
    throw TraceError{Status(
        ErrorCode::kInvalidArgument,
        fmt::format("kernel '{}' takes {} inputs; {} were given", k.ir().name, expected, given))};
  }
}

}  // namespace detail

namespace {

Status checkInputs(const KernelDef& kernel, std::span<const TensorSpec> inputs) {
  std::set<std::string> names;
  for (const TensorSpec& spec : inputs) {
    const bool positive =
        std::all_of(spec.shape.begin(), spec.shape.end(), [](std::int64_t d) { return d > 0; });
    if (spec.name.empty() || !names.insert(spec.name).second) {
      return Status(ErrorCode::kInvalidArgument,
                    fmt::format("kernel '{}': input names must be unique and non-empty ('{}')",
                                kernel.name, spec.name));
    }
    if (spec.shape.empty() || spec.shape.size() > static_cast<std::size_t>(kMaxRank) || !positive) {
      return Status(ErrorCode::kInvalidArgument,
                    fmt::format("kernel '{}': input '{}' has shape [{}]; inputs need 1 to {} "
                                "positive dimensions",
                                kernel.name, spec.name, fmt::join(spec.shape, ", "), kMaxRank));
    }
  }
  return {};
}

/// Advances a row-major grid index; false after the last one.
bool nextIndex(std::vector<std::int64_t>& index, const std::vector<std::int64_t>& shape) {
  for (std::size_t d = index.size(); d-- > 0;) {
    if (++index[d] < shape[d]) {
      return true;
    }
    index[d] = 0;
  }
  return false;
}

Status checkGrid(const KernelDef& kernel, const Grid& grid) {
  std::int64_t programs = 1;
  for (const std::int64_t d : grid.shape) {
    if (d < 1 || d > 65536 || (programs *= d) > 65536) {
      return Status(ErrorCode::kInvalidArgument,
                    fmt::format("kernel '{}': launch grid [{}] needs 1 to 65536 programs with "
                                "positive dimensions",
                                kernel.name, fmt::join(grid.shape, ", ")));
    }
  }
  if (grid.shape.empty()) {
    return Status(ErrorCode::kInvalidArgument, "a launch grid needs a dimension");
  }
  if (grid.cores < 1 || grid.core < 0 || grid.core >= grid.cores ||
      grid.shape.front() % grid.cores != 0) {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("kernel '{}': a launch over {} cores needs grid axis 0 ({}) to be a "
                              "multiple of the core count, and core {} to be one of them",
                              kernel.name, grid.cores, grid.shape.front(), grid.core));
  }
  return {};
}

Result<KernelIR> traceWithOutputs(const KernelDef& kernel, std::span<const TensorSpec> inputs,
                                  const isa::CoreLimits& limits, const Grid& grid,
                                  AutoCast autoCast, std::vector<TensorSpec>& outputs) {
  TRN_RETURN_IF_ERROR(checkInputs(kernel, inputs));
  TRN_RETURN_IF_ERROR(checkGrid(kernel, grid));
  Kernel k(kernel.name, limits, grid, autoCast);
  try {
    std::vector<Tensor> args;
    for (const TensorSpec& spec : inputs) {
      args.push_back(k.input(spec.name, spec.shape, spec.dtype));
    }
    // Every program instance of the grid in this core's block of axis 0, row-major.
    const std::int64_t block = grid.shape.front() / grid.cores;
    std::vector<std::int64_t> index(grid.shape.size(), 0);
    do {
      if (index.front() / block != grid.core) {
        continue;
      }
      k.beginProgram(index);
      for (const Tensor& t : kernel.body(k, args)) {
        k.markOutput(t);
      }
    } while (nextIndex(index, grid.shape));
  } catch (const TraceError& error) {
    // Whatever the tile function found wrong, the kernel broke a rule of the tile language or
    // of the hardware: one category, so that the command line reports it with one exit status.
    return Status(ErrorCode::kFailedPrecondition, error.status.message(), error.status.origin());
  }
  KernelIR ir = k.release();
  if (ir.outputs.empty()) {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("kernel '{}' returns no output tensor", kernel.name));
  }
  for (const std::int32_t b : ir.outputs) {
    const Buffer& buf = ir.buffers[static_cast<std::size_t>(b)];
    if (std::count(ir.outputs.begin(), ir.outputs.end(), b) > 1) {
      return Status(ErrorCode::kInvalidArgument,
                    fmt::format("kernel '{}' returns output '{}' twice", kernel.name, buf.name));
    }
    outputs.push_back(TensorSpec{buf.name, buf.shape, buf.dtype});
  }
  return ir;
}

/// Dumps and verifies the IR after `pass`, as the options ask.
Status afterPass(const KernelIR& ir, std::string_view pass, const isa::CoreLimits& limits,
                 const CompileOptions& options) {
  if (options.dumpAfter && *options.dumpAfter == pass && options.dumpStream != nullptr) {
    *options.dumpStream << "// after pass '" << pass << "'\n" << printIR(ir);
  }
  return options.verifyEachPass ? verifyIR(ir, limits, pass) : Status{};
}

}  // namespace

Result<KernelIR> trace(const KernelDef& kernel, std::span<const TensorSpec> inputs,
                       const isa::CoreLimits& limits, const Grid& grid, AutoCast autoCast) {
  std::vector<TensorSpec> outputs;
  return traceWithOutputs(kernel, inputs, limits, grid, autoCast, outputs);
}

Result<CompiledKernel> compile(const KernelDef& kernel, std::span<const TensorSpec> inputs,
                               const isa::CoreLimits& limits, const CompileOptions& options,
                               const Grid& grid) {
  if (options.dumpAfter &&
      std::find(kPassNames.begin(), kPassNames.end(), *options.dumpAfter) == kPassNames.end()) {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("no pass '{}' to dump after; the passes are {}", *options.dumpAfter,
                              fmt::join(kPassNames, ", ")));
  }
  if (limits.dmaQueues < 8) {
    return Status(
        ErrorCode::kUnsupported,
        fmt::format("the kernel backend gives every issuing engine its own DMA queues and "
                    "needs at least 8; this core has {}",
                    limits.dmaQueues));
  }
  CompiledKernel out;
  out.name = kernel.name;
  out.inputs.assign(inputs.begin(), inputs.end());
  TRN_ASSIGN_OR_RETURN(KernelIR ir,
                       traceWithOutputs(kernel, inputs, limits, grid, options.autoCast,
                                        out.outputs));
  TRN_RETURN_IF_ERROR(afterPass(ir, "trace", limits, options));

  TRN_ASSIGN_OR_RETURN(const AllocationSummary allocation,
                       allocateOnChip(ir, limits, options.bufs));
  TRN_RETURN_IF_ERROR(afterPass(ir, "allocate", limits, options));

  const Dependencies deps = analyseDependencies(ir);
  placeDmas(ir, deps, limits.dmaQueues);
  TRN_RETURN_IF_ERROR(afterPass(ir, "place-dma", limits, options));

  TRN_ASSIGN_OR_RETURN(const SyncSummary sync, synchronise(ir, deps, limits));
  TRN_RETURN_IF_ERROR(afterPass(ir, "synchronise", limits, options));

  TRN_ASSIGN_OR_RETURN(out.program, lowerToProgram(ir, limits, options.verifyEachPass));
  if (options.dumpAfter && *options.dumpAfter == "lower" && options.dumpStream != nullptr) {
    *options.dumpStream << "// after pass 'lower'\n" << isa::formatProgramText(out.program);
  }
  out.files = ir.files;
  out.tiles.reserve(allocation.tiles.size());
  for (const TilePlacement& t : allocation.tiles) {
    const Buffer& b = ir.buffers[static_cast<std::size_t>(t.buffer)];
    out.tiles.push_back(CompiledTile{b.name, b.memory, b.shape, b.dtype, t.at.partition, t.at.byte,
                                     t.bytes, t.firstOp, t.lastOp, b.site});
  }
  out.summary = CompileSummary{static_cast<std::int64_t>(ir.ops.size()),
                               sync.waits,
                               sync.dependencies,
                               allocation.sbufPeakBytes,
                               allocation.psumPeakBytes,
                               allocation.bufs,
                               allocation.spills,
                               allocation.spillBytes,
                               allocation.singleSites};
  return out;
}

Result<std::shared_ptr<const CompiledKernel>> KernelCache::get(const KernelDef& kernel,
                                                               std::span<const TensorSpec> inputs,
                                                               const isa::CoreLimits& limits,
                                                               const CompileOptions& options,
                                                               const Grid& grid) {
  Key key{kernel.name,  {inputs.begin(), inputs.end()}, grid,
          options.bufs, options.verifyEachPass,         options.autoCast,
          limits};
  {
    const std::lock_guard lock(mutex_);
    if (auto it = entries_.find(key); it != entries_.end()) {
      ++hits_;
      return it->second;
    }
  }
  TRN_ASSIGN_OR_RETURN(CompiledKernel compiled, compile(kernel, inputs, limits, options, grid));
  auto entry = std::make_shared<const CompiledKernel>(std::move(compiled));
  const std::lock_guard lock(mutex_);
  entries_.emplace(std::move(key), entry);
  return entry;
}

std::size_t KernelCache::size() const {
  const std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace trn::kernel
