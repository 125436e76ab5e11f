// Kernel: the tracing context a tile kernel runs in. Kernel code is an ordinary C++ function that
// receives a Kernel& and its input tensors; every tensor it declares and every instruction it
// issues is recorded here, in order, as kernel IR (kernel_ir.h). Loops and conditions in the
// kernel body are plain C++ and unroll at trace time. Each instruction is checked against the
// hardware rules when it is issued, and a violation stops tracing with an error that names the
// kernel source line (std::source_location), before anything runs.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "trn/base/status.h"
#include "trn/isa/core_limits.h"
#include "trn/kernel/kernel_ir.h"
#include "trn/kernel/tensor.h"

namespace trn::kernel {

/// The SPMD launch grid (NKI `kernel[g0, g1](...)`): the kernel body runs once per program
/// index, row-major, and the instances of one core run one after another on it (as NKI runs
/// them on one NeuronCore). They share the kernel's inputs and its HBM outputs: an instance that
/// declares an output with the name, shape and dtype of an earlier instance's gets that tensor.
/// A launch over the `cores` physical cores of a logical core (LNC=2: `kernel[2]` puts program 0
/// on one core of the pair and program 1 on the other) splits axis 0 into equal blocks, one per
/// core; compiling for `core` traces the instances of its block.
struct Grid {
  std::vector<std::int64_t> shape{1};
  std::int64_t cores = 1;
  std::int64_t core = 0;
  friend auto operator<=>(const Grid&, const Grid&) = default;
};

/// How matrix products of fp32 tensors are computed: as written (kNone, what an NKI kernel does),
/// or with their operands cast to `type` and fp32 accumulation (kMatmult, what neuronx-cc does:
/// `--auto-cast matmult --auto-cast-type bf16` by default, or fp16 or fp8_e4m3). Kernels ask
/// Kernel::matmulDType.
struct AutoCast {
  enum Mode : std::uint8_t { kNone, kMatmult };
  Mode mode = kNone;
  DType type = DType::kBf16;
  AutoCast() = default;
  AutoCast(Mode m, DType t = DType::kBf16)
      : mode(m), type(t) {}  // NOLINT(google-explicit-constructor)
  friend auto operator<=>(const AutoCast&, const AutoCast&) = default;
  friend bool operator==(const AutoCast&, const AutoCast&) = default;
  /// Compare `mode` instead: a policy equals kMatmult only with its type, which is easy to miss.
  friend bool operator==(const AutoCast&, Mode) = delete;
};

/// The types `--auto-cast-type` takes, neuronx-cc's spellings: bf16, fp16, tf32, fp8_e4m3 (also
/// "fp8"); an error names the choices.
Result<DType> parseAutoCastType(std::string_view name);

/// The most tile operations one kernel may trace (each is an instruction of about 0.7 KiB in the
/// IR, so the bound keeps a runaway trace near 3 GiB of host memory; docs/limits.md).
inline constexpr std::size_t kMaxTracedOps = std::size_t{1} << 22;

/// Thrown by Kernel::fail and caught by the compiler (compiler.h), which returns it as a Status;
/// it never leaves the kernel module.
struct TraceError {
  Status status;
};

/// Where an output() of a called kernel goes (Kernel::redirectOutputs).
struct OutputRedirect {
  std::string name;
  bool scratch = false;
  /// With `scratch`: an HBM scratch tensor of the caller to write instead of declaring a new
  /// one (a recycled buffer), used when the output's shape and dtype are its own.
  std::optional<Tensor> reuse;
};

class Kernel {
 public:
  using Loc = std::source_location;

  Kernel(std::string name, isa::CoreLimits limits, Grid grid = {},
         AutoCast autoCast = AutoCast::kNone);
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  [[nodiscard]] const isa::CoreLimits& limits() const { return limits_; }

  /// The dtype matrix-product operands of a tensor of `dtype` take under the kernel's AutoCast:
  /// its type for fp32 under kMatmult, else `dtype` itself.
  [[nodiscard]] DType matmulDType(DType dtype) const {
    return autoCast_.mode == AutoCast::kMatmult && dtype == DType::kFp32 ? autoCast_.type : dtype;
  }

  /// SPMD: this program's index along `axis`, the grid size along it, and the grid's rank.
  [[nodiscard]] std::int64_t programId(int axis = 0, Loc loc = Loc::current()) const;
  [[nodiscard]] std::int64_t numPrograms(int axis = 0, Loc loc = Loc::current()) const;
  [[nodiscard]] int programNdim() const { return static_cast<int>(grid_.shape.size()); }

  /// An HBM input of the kernel (declared by the compiler from the caller's arrays).
  Tensor input(std::string name, std::vector<std::int64_t> shape, DType dtype,
               Loc loc = Loc::current());
  /// An HBM tensor the kernel writes and returns (NKI `nl.ndarray(..., buffer=nl.shared_hbm)`).
  Tensor output(std::string name, std::vector<std::int64_t> shape, DType dtype,
                Loc loc = Loc::current());
  /// Redirects the outputs of a kernel called from this one, so that library kernels compose
  /// into a larger kernel (the graph compiler lowers a whole model into one). Until the next
  /// call, the i-th output() declares redirects[i] instead: the kernel output of that name, or
  /// HBM scratch of that name (an intermediate of the caller). An output() beyond the list is an
  /// error; an empty list restores plain output().
  void redirectOutputs(std::vector<OutputRedirect> redirects);
  /// HBM scratch that lives only during the kernel.
  Tensor hbmScratch(std::string name, std::vector<std::int64_t> shape, DType dtype,
                    Loc loc = Loc::current());
  /// An uninitialised on-chip tile, [partitions, free...], placed by the allocator or at an
  /// explicit address.
  Tensor sbuf(std::vector<std::int64_t> shape, DType dtype, std::string name = {},
              std::optional<Address> address = std::nullopt, Loc loc = Loc::current());
  Tensor psum(std::vector<std::int64_t> shape, DType dtype = DType::kFp32, std::string name = {},
              std::optional<Address> address = std::nullopt, Loc loc = Loc::current());

  /// Records one instruction whose operands come from Tensor::ap(). `engine` pins the issuing
  /// engine; otherwise the engine-assignment rules choose one. The instruction is verified at
  /// once and a violation is reported at `loc`.
  void emit(isa::InstructionBody body, std::optional<isa::Engine> engine = std::nullopt,
            Loc loc = Loc::current());

  /// A loop the hardware runs `trips` times without unrolling it (NKI `nl.fori_loop` /
  /// `dynamic_range`): `body` is traced once and its instructions repeat on their engine's
  /// sequencer, counted down in a sequencer register. The body's instructions must all run on
  /// one engine (one sequencer owns the branch) and may not start DMA transfers; operands are
  /// the same in every iteration (the access patterns have no register offsets). Loops do not
  /// nest.
  void dynamicLoop(std::int64_t trips, const std::function<void()>& body, Loc loc = Loc::current());

  /// Stops tracing with an error at `loc`: "file.cpp:42: <message>".
  [[noreturn]] void fail(ErrorCode code, const std::string& message, Loc loc) const;
  [[noreturn]] void fail(const std::string& message, Loc loc) const {
    fail(ErrorCode::kFailedPrecondition, message, loc);
  }

  /// Starts tracing the program instance at `index` of the grid (the compiler calls this).
  void beginProgram(std::vector<std::int64_t> index);

  /// Marks `t` as a result of the kernel (the compiler does this for returned tensors).
  void markOutput(const Tensor& t, Loc loc = Loc::current());

  /// Whole views of every HBM output declared so far, in declaration order.
  std::vector<Tensor> declaredOutputs();

  [[nodiscard]] const KernelIR& ir() const { return ir_; }
  /// Hands the traced IR to the backend.
  KernelIR release() { return std::move(ir_); }

 private:
  Tensor declare(Buffer buffer, Loc loc);
  /// Where `loc` is, as the IR keeps it (the active CallSite's location if there is one).
  Site site(Loc loc);
  Tensor wholeView(std::int32_t buffer);

  isa::CoreLimits limits_;
  AutoCast autoCast_ = AutoCast::kNone;
  std::int64_t hbmBytes_ = 0;  ///< of the HBM tensors declared so far
  Grid grid_;
  std::vector<std::int64_t> programIndex_;
  bool laterInstance_ = false;
  KernelIR ir_;
  /// The buffers as program tensors, so HBM operands can be verified while tracing.
  isa::Program probe_;
  bool inDynamicLoop_ = false;
  const char* latestPath_ = nullptr;  ///< the std::source_location file name site() saw last
  std::int32_t latestPathFile_ = -1;  ///< its index in ir_.files
  std::optional<std::vector<OutputRedirect>> outputRedirects_;
  std::size_t nextOutputRedirect_ = 0;
};

/// The location as kernel IR stores it: the active CallSite's if there is one (call_site.h).
isa::SourceLocation toLocation(const std::source_location& loc);

/// `path` as a program can keep it (isa::isLocationFileChar characters, bounded length).
std::string locationFile(std::string_view path);

}  // namespace trn::kernel
