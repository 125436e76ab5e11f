// Compiling a tile kernel: trace it for given input shapes and dtypes, run the backend passes
// (allocation, dependency analysis, DMA placement, synchronisation, lowering) and return the
// Program. Errors (from the kernel's own checks, the hardware rules, or SBUF/PSUM exhaustion)
// come back as a Status whose message starts with the kernel source line. Compiled kernels are
// cached by (kernel name, input shapes and dtypes, grid, options, core limits).
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "trn/base/status.h"
#include "trn/isa/core_limits.h"
#include "trn/isa/program.h"
#include "trn/kernel/kernel.h"

namespace trn::kernel {

/// The body of a kernel: receives its HBM inputs and returns its HBM outputs.
using KernelBody = std::function<std::vector<Tensor>(Kernel&, std::span<const Tensor>)>;

struct KernelDef {
  std::string name;
  KernelBody body;
};

/// Wraps `fn(Kernel&, Tensor, Tensor, ...)` returning a Tensor, a std::vector<Tensor>, or void
/// (then every Kernel::output it declared is returned, in order) as a KernelDef.
template <typename Fn>
KernelDef makeKernel(std::string name, Fn fn);

/// One input of a kernel: name, shape and dtype of the HBM tensor.
struct TensorSpec {
  std::string name;
  std::vector<std::int64_t> shape;
  DType dtype = DType::kFp32;
  friend bool operator==(const TensorSpec&, const TensorSpec&) = default;
  friend auto operator<=>(const TensorSpec&, const TensorSpec&) = default;
};

/// The backend passes, in order; names for CompileOptions::dumpAfter.
inline constexpr std::array<std::string_view, 5> kPassNames = {"trace", "allocate", "place-dma",
                                                               "synchronise", "lower"};

struct CompileOptions {
  /// Multi-buffering depth for tiles declared inside loops (1 = reuse at once).
  int bufs = 2;
  /// Verify the IR after every pass and the lowered Program (on by default in debug builds;
  /// without it the Program is verified when a core loads it to run).
#ifdef NDEBUG
  bool verifyEachPass = false;
#else
  bool verifyEachPass = true;
#endif
  /// Print the kernel IR after the named pass to `dumpStream`.
  std::optional<std::string> dumpAfter;
  std::ostream* dumpStream = nullptr;
  /// Matrix products of fp32 tensors in bf16 (kernel.h); kernels that support it say so.
  AutoCast autoCast = AutoCast::kNone;

  friend bool operator==(const CompileOptions& a, const CompileOptions& b) {
    return a.bufs == b.bufs && a.verifyEachPass == b.verifyEachPass && a.dumpAfter == b.dumpAfter &&
           a.autoCast == b.autoCast;
  }
};

/// What the backend did, for reports.
struct CompileSummary {
  std::int64_t instructions = 0;
  std::int64_t semaphoreWaits = 0;
  std::int64_t crossEngineDependencies = 0;
  std::int64_t sbufPeakBytes = 0;  ///< per partition
  std::int64_t psumPeakBytes = 0;
  int bufs = 1;
  int spills = 0;  ///< SBUF tiles moved out through HBM to fit (the allocation pass)
  std::int64_t spillBytes = 0;  ///< bytes the spills' stores and reloads move (DMA traffic)
  /// With bufs > 1: declaration sites (lines declaring tiles in a loop) made single so that the
  /// rest fit bufs deep (the allocation pass).
  int singleSites = 0;
};

/// An on-chip tile of the compiled kernel: where the allocator put it and when it is live
/// (indices of instructions in trace order).
struct CompiledTile {
  std::string name;
  isa::Memory memory = isa::Memory::kSbuf;
  std::vector<std::int64_t> shape;
  DType dtype = DType::kFp32;
  std::int64_t partition = 0;  ///< first partition
  std::int64_t byte = 0;       ///< offset within each partition
  std::int64_t bytes = 0;      ///< per partition
  std::int64_t firstOp = 0;
  std::int64_t lastOp = 0;
  Site site;  ///< where the kernel declared it; its file is one of CompiledKernel::files
};

struct CompiledKernel {
  std::string name;
  isa::Program program;
  std::vector<TensorSpec> inputs;   ///< program tensors 0..inputs-1
  std::vector<TensorSpec> outputs;  ///< the next program tensors, in return order
  CompileSummary summary;
  /// Every on-chip tile the kernel uses; huge-page backed, as a kernel may have 100,000.
  LargeVector<CompiledTile> tiles;
  std::vector<std::string> files;   ///< the source file names the tiles' sites index
};

/// Traces `kernel` for `inputs` into kernel IR, the first step of compile, without the backend
/// passes (for front ends and their benchmarks).
Result<KernelIR> trace(const KernelDef& kernel, std::span<const TensorSpec> inputs,
                       const isa::CoreLimits& limits, const Grid& grid = {},
                       AutoCast autoCast = AutoCast::kNone);

Result<CompiledKernel> compile(const KernelDef& kernel, std::span<const TensorSpec> inputs,
                               const isa::CoreLimits& limits, const CompileOptions& options = {},
                               const Grid& grid = {});

/// Compiled kernels by (name, inputs, grid, options, limits); thread-safe.
class KernelCache {
 public:
  Result<std::shared_ptr<const CompiledKernel>> get(const KernelDef& kernel,
                                                    std::span<const TensorSpec> inputs,
                                                    const isa::CoreLimits& limits,
                                                    const CompileOptions& options = {},
                                                    const Grid& grid = {});
  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] std::int64_t hits() const { return hits_; }

 private:
  struct Key {
    std::string name;
    std::vector<TensorSpec> inputs;
    Grid grid;
    int bufs;
    bool verify;
    AutoCast autoCast;
    isa::CoreLimits limits;
    auto operator<=>(const Key&) const = default;
  };
  mutable std::mutex mutex_;
  std::map<Key, std::shared_ptr<const CompiledKernel>> entries_;
  std::int64_t hits_ = 0;
};

// ---- implementation of makeKernel ----

namespace detail {
template <typename Signature>
struct KernelSignature;

template <typename R, typename... Args>
struct KernelSignature<std::function<R(Kernel&, Args...)>> {
  static constexpr std::size_t kInputs = sizeof...(Args);
  using Return = R;
};

/// Fails the trace when a kernel of `expected` inputs is called with `given`.
void checkInputCount(Kernel& k, std::size_t expected, std::size_t given);
}  // namespace detail

template <typename Fn>
KernelDef makeKernel(std::string name, Fn fn) {
  using Signature = detail::KernelSignature<decltype(std::function{fn})>;
  return KernelDef{std::move(name),
                   [fn](Kernel& k, std::span<const Tensor> in) -> std::vector<Tensor> {
                     detail::checkInputCount(k, Signature::kInputs, in.size());
                     return [&]<std::size_t... kI>(std::index_sequence<kI...>) {
                       using R = typename Signature::Return;
                       if constexpr (std::is_void_v<R>) {
                         fn(k, in[kI]...);
                         return k.declaredOutputs();
                       } else if constexpr (std::is_same_v<std::decay_t<R>, Tensor>) {
                         return std::vector<Tensor>{fn(k, in[kI]...)};
                       } else {
                         return std::vector<Tensor>(fn(k, in[kI]...));
                       }
                     }
                     (std::make_index_sequence<Signature::kInputs>());
                   }};
}

}  // namespace trn::kernel
