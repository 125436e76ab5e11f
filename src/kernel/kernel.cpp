#include "trn/kernel/kernel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <numeric>

#include "passes/engine_rules.h"
#include "trn/kernel/call_site.h"
#include "trn/base/checked.h"
#include "trn/isa/verifier.h"

namespace trn::kernel {

std::int64_t Buffer::elementCount() const {
  return std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
}

std::int64_t Buffer::partitionBytes() const {
  return shape.empty() ? 0 : elementCount() / shape[0] * byteSize(dtype);
}

std::string formatLocation(const isa::SourceLocation& location) {
  if (location.file.empty()) {
    return "<unknown>";
  }
  return fmt::format("{}:{}", std::filesystem::path(location.file).filename().string(),
                     location.line);
}

std::string formatLocation(const KernelIR& ir, Site site) {
  return formatLocation(ir.location(site));
}

Site KernelIR::site(const isa::SourceLocation& location) {
  return site(location.file, location.line);
}

Site KernelIR::site(std::string_view file, std::int32_t line) {
  if (file.empty()) {
    return Site{-1, line};
  }
  // A kernel names a few files, mostly the same one op after op: the latest is tried first.
  if (latestFile_ < 0 || files[static_cast<std::size_t>(latestFile_)] != file) {
    auto known = std::find(files.begin(), files.end(), file);
    if (known == files.end()) {
      files.emplace_back(file);
      known = files.end() - 1;
    }
    latestFile_ = static_cast<std::int32_t>(known - files.begin());
  }
  return Site{latestFile_, line};
}

std::string_view KernelIR::file(Site site) const {
  return site.file < 0 ? std::string_view() : files[static_cast<std::size_t>(site.file)];
}

isa::SourceLocation KernelIR::location(Site site) const {
  return isa::SourceLocation{std::string(file(site)), site.line};
}

isa::SyncView OpSemaphores::of(std::size_t op, isa::SemaphoreUpdate& update) const {
  if (op + 1 >= waitsFrom.size()) {
    return {};
  }
  const std::span<const isa::SemaphoreWait> opWaits(waits.data() + waitsFrom[op],
                                                    waitsFrom[op + 1] - waitsFrom[op]);
  if (signals[op] < 0) {
    return isa::SyncView(opWaits, {});
  }
  update = isa::SemaphoreUpdate{signals[op], isa::SemaphoreUpdateOp::kAdd, 1};
  return isa::SyncView(opWaits, std::span(&update, 1));
}

namespace {

Buffer makeBuffer(std::string name, isa::Memory memory, DType dtype,
                  std::vector<std::int64_t> shape, isa::TensorKind kind,
                  std::optional<Address> address = std::nullopt) {
  Buffer b;
  b.name = std::move(name);
  b.memory = memory;
  b.dtype = dtype;
  b.shape = std::move(shape);
  b.hbmKind = kind;
  b.address = address;
  return b;
}

/// Makes room for one more element at the end of `v`. Growing the IR's vectors costs copying
/// their elements (an Op is about 0.7 KiB), so up to a million elements capacity grows eightfold,
/// which copies each element a seventh as often as doubling does; capacity not yet used is
/// address space that nothing touches (and so costs no memory).
template <typename Vector>
void makeRoomForOne(Vector& v) {
  constexpr std::size_t kFirst = 256;
  constexpr std::size_t kEightfoldUpTo = std::size_t{1} << 20;
  if (v.size() == v.capacity() && v.capacity() < kEightfoldUpTo) {
    v.reserve(std::clamp(v.capacity() * 8, kFirst, kEightfoldUpTo));
  }
}

}  // namespace

isa::SourceLocation toLocation(const std::source_location& loc) {
  if (const isa::SourceLocation* site = CallSite::active()) {
    return *site;
  }
  // A kernel's instructions come from a few files, each named by one static string: the storable
  // name of the latest one is kept, so that tracing converts a name once, not per instruction.
  struct LatestFile {
    const char* path = nullptr;
    std::string storable;
  };
  thread_local LatestFile latest;
  if (latest.path != loc.file_name()) {
    latest.storable = locationFile(loc.file_name());
    latest.path = loc.file_name();
  }
  return isa::SourceLocation{latest.storable, static_cast<std::int32_t>(loc.line())};
}

Site Kernel::site(Loc loc) {
  if (const isa::SourceLocation* call = CallSite::active()) {
    return ir_.site(*call);
  }
  // Each file is named by one static string: its file index is kept for the latest one, so that
  // tracing converts and looks up a name once per file, not per op.
  if (latestPath_ != loc.file_name()) {
    latestPathFile_ = ir_.site(locationFile(loc.file_name()), 0).file;
    latestPath_ = loc.file_name();
  }
  return Site{latestPathFile_, static_cast<std::int32_t>(loc.line())};
}

std::string locationFile(std::string_view path) {
  // Programs keep file names of printable ASCII without spaces or '#', of bounded length
  // (isa/program.h): other characters become '_', and a long path keeps its end.
  if (path.size() > isa::ProgramLimits::kMaxLocationFileBytes) {
    path.remove_prefix(path.size() - isa::ProgramLimits::kMaxLocationFileBytes);
  }
  std::string file(path);
  std::replace_if(
      file.begin(), file.end(), [](char c) { return !isa::isLocationFileChar(c); }, '_');
  return file;
}

Result<DType> parseAutoCastType(std::string_view name) {
  if (name == "bf16") {
    return DType::kBf16;
  }
  if (name == "fp16") {
    return DType::kFp16;
  }
  if (name == "tf32") {
    return DType::kTf32;
  }
  if (name == "fp8_e4m3" || name == "fp8") {
    return DType::kFp8E4m3;
  }
  return Status(ErrorCode::kInvalidArgument,
                fmt::format("auto-cast type '{}': expected bf16, fp16, tf32 or fp8_e4m3", name));
}

Kernel::Kernel(std::string name, isa::CoreLimits limits, Grid grid, AutoCast autoCast)
    : limits_(limits),
      autoCast_(autoCast),
      grid_(std::move(grid)),
      programIndex_(grid_.shape.size(), 0) {
  ir_.name = std::move(name);
}

void Kernel::beginProgram(std::vector<std::int64_t> index) {
  TRN_CHECK(index.size() == grid_.shape.size()) << "a program index needs one entry per axis";
  laterInstance_ = index != std::vector<std::int64_t>(grid_.shape.size(), 0);
  programIndex_ = std::move(index);
}

void Kernel::fail(ErrorCode code, const std::string& message, Loc loc) const {
  throw TraceError{Status(code, fmt::format("{}: {}", formatLocation(toLocation(loc)), message))};
}

std::int64_t Kernel::programId(int axis, Loc loc) const {
  if (axis < 0 || axis >= programNdim()) {
    fail(ErrorCode::kOutOfRange,
         fmt::format("program_id axis {} does not exist; the grid has {} dimensions", axis,
                     programNdim()),
         loc);
  }
  return programIndex_[static_cast<std::size_t>(axis)];
}

std::int64_t Kernel::numPrograms(int axis, Loc loc) const {
  if (axis < 0 || axis >= programNdim()) {
    fail(ErrorCode::kOutOfRange,
         fmt::format("num_programs axis {} does not exist; the grid has {} dimensions", axis,
                     programNdim()),
         loc);
  }
  return grid_.shape[static_cast<std::size_t>(axis)];
}

Tensor Kernel::declare(Buffer buffer, Loc loc) {
  buffer.site = site(loc);
  const bool onChip = buffer.memory != isa::Memory::kHbm;
  if (buffer.shape.empty() || (onChip && buffer.shape.size() < 2)) {
    fail(ErrorCode::kInvalidArgument,
         fmt::format("{} tensor '{}' needs {}; got [{}] (write [n, 1] for a column)",
                     isa::memoryName(buffer.memory), buffer.name,
                     onChip ? "at least two dimensions (partition first)" : "a shape",
                     fmt::join(buffer.shape, ", ")),
         loc);
  }
  for (const std::int64_t d : buffer.shape) {
    if (d < 1) {
      fail(ErrorCode::kInvalidArgument,
           fmt::format("tensor '{}' has a non-positive dimension in [{}]", buffer.name,
                       fmt::join(buffer.shape, ", ")),
           loc);
    }
  }
  if (static_cast<int>(buffer.shape.size()) > kMaxRank) {
    fail(ErrorCode::kInvalidArgument,
         fmt::format("tensor '{}' has {} dimensions; views have at most {}", buffer.name,
                     buffer.shape.size(), kMaxRank),
         loc);
  }
  Checked<std::int64_t> bytes = byteSize(buffer.dtype);
  for (const std::int64_t d : buffer.shape) {
    bytes *= d;
  }
  const Checked<std::int64_t> hbmTotal = bytes + (onChip ? 0 : hbmBytes_);
  if (!hbmTotal.valid() || (!onChip && hbmTotal.value() > limits_.hbmBytes)) {
    fail(ErrorCode::kOutOfRange,
         fmt::format("{} tensor '{}' [{}] {} needs {} bytes{}; {} has {} bytes",
                     isa::memoryName(buffer.memory), buffer.name, fmt::join(buffer.shape, "x"),
                     dtypeName(buffer.dtype),
                     bytes.valid() ? fmt::to_string(bytes.value()) : "more than 2^63",
                     onChip || hbmBytes_ == 0
                         ? ""
                         : fmt::format(" after the {} bytes of the HBM tensors before it",
                                       hbmBytes_),
                     onChip ? isa::memoryName(buffer.memory) : "the core's HBM",
                     onChip ? limits_.partitions * (buffer.memory == isa::Memory::kSbuf
                                                        ? limits_.sbufPartitionBytes
                                                        : limits_.psumPartitionBytes())
                            : limits_.hbmBytes),
         loc);
  }
  if (!onChip) {
    hbmBytes_ = hbmTotal.value();
  }
  if (onChip) {
    const std::int64_t capacity = buffer.memory == isa::Memory::kSbuf
                                      ? limits_.sbufPartitionBytes
                                      : limits_.psumPartitionBytes();
    if (buffer.shape[0] > limits_.partitions) {
      fail(ErrorCode::kOutOfRange,
           fmt::format("{} tensor '{}' [{}] has {} partitions; the hardware has {}",
                       isa::memoryName(buffer.memory), buffer.name, fmt::join(buffer.shape, ", "),
                       buffer.shape[0], limits_.partitions),
           loc);
    }
    if (buffer.partitionBytes() > capacity) {
      fail(ErrorCode::kOutOfRange,
           fmt::format("{} tensor '{}' [{}] {} needs {} bytes per partition; {} has {}",
                       isa::memoryName(buffer.memory), buffer.name, fmt::join(buffer.shape, ", "),
                       dtypeName(buffer.dtype), buffer.partitionBytes(),
                       isa::memoryName(buffer.memory), capacity),
           loc);
    }
    if (buffer.address) {
      const Address& a = *buffer.address;
      if (a.partition < 0 || a.partition + buffer.shape[0] > limits_.partitions || a.byte < 0 ||
          a.byte + buffer.partitionBytes() > capacity || a.byte % byteSize(buffer.dtype) != 0) {
        fail(ErrorCode::kOutOfRange,
             fmt::format("address (partition {}, byte {}) of '{}' does not fit: it needs {} "
                         "partitions and {} bytes each, aligned to its {}-byte elements, within "
                         "{}'s {} partitions of {} bytes",
                         a.partition, a.byte, buffer.name, buffer.shape[0], buffer.partitionBytes(),
                         byteSize(buffer.dtype), isa::memoryName(buffer.memory), limits_.partitions,
                         capacity),
             loc);
      }
    }
  } else if (buffer.address) {
    fail(ErrorCode::kInvalidArgument, "HBM tensors are placed by the runtime; drop the address",
         loc);
  }
  const auto id = static_cast<std::int32_t>(ir_.buffers.size());
  if (buffer.name.empty()) {
    buffer.name = fmt::format("t{}", id);
  }
  if (!onChip) {
    for (const Buffer& other : ir_.buffers) {
      if (other.memory == isa::Memory::kHbm && other.name == buffer.name) {
        fail(ErrorCode::kInvalidArgument,
             fmt::format("HBM tensor '{}' is already declared (at {}); HBM tensor names must be "
                         "unique",
                         buffer.name, formatLocation(ir_, other.site)),
             loc);
      }
    }
  }
  // Only HBM operands consult the probe's tensors (by buffer index): an on-chip buffer holds a
  // place only when an HBM tensor is declared after it, so the many tiles a kernel declares after
  // its inputs and outputs take none.
  if (!onChip) {
    probe_.tensors.resize(static_cast<std::size_t>(id));
    probe_.tensors.push_back(
        isa::TensorDecl{buffer.name, buffer.hbmKind, buffer.dtype, buffer.shape});
  }
  makeRoomForOne(ir_.buffers);
  ir_.buffers.push_back(std::move(buffer));
  return wholeView(id);
}

Tensor Kernel::wholeView(std::int32_t id) {
  const Buffer& buffer = ir_.buffers[static_cast<std::size_t>(id)];
  isa::AccessPattern base;
  base.memory = buffer.memory;
  base.dtype = buffer.dtype;
  base.tensor = id;
  return Tensor(this, base, buffer.shape);
}

Tensor Kernel::input(std::string name, std::vector<std::int64_t> shape, DType dtype, Loc loc) {
  Tensor t = declare(makeBuffer(std::move(name), isa::Memory::kHbm, dtype, std::move(shape),
                                isa::TensorKind::kInput),
                     loc);
  ir_.inputs.push_back(t.buffer());
  return t;
}

void Kernel::redirectOutputs(std::vector<OutputRedirect> redirects) {
  nextOutputRedirect_ = 0;
  if (redirects.empty()) {
    outputRedirects_.reset();
  } else {
    outputRedirects_ = std::move(redirects);
  }
}

Tensor Kernel::output(std::string name, std::vector<std::int64_t> shape, DType dtype, Loc loc) {
  if (outputRedirects_) {
    if (nextOutputRedirect_ >= outputRedirects_->size()) {
      fail(ErrorCode::kFailedPrecondition,
           fmt::format("output '{}' is one more than the {} the calling kernel redirected", name,
                       outputRedirects_->size()),
           loc);
    }
    const OutputRedirect target = (*outputRedirects_)[nextOutputRedirect_++];
    if (target.scratch) {
      if (target.reuse && target.reuse->shape() == shape && target.reuse->dtype() == dtype) {
        return *target.reuse;
      }
      return hbmScratch(target.name, std::move(shape), dtype, loc);
    }
    name = target.name;
  }
  if (laterInstance_) {
    for (std::size_t b = 0; b < ir_.buffers.size(); ++b) {
      const Buffer& other = ir_.buffers[b];
      if (other.memory == isa::Memory::kHbm && other.hbmKind == isa::TensorKind::kOutput &&
          other.name == name) {
        if (other.shape != shape || other.dtype != dtype) {
          fail(ErrorCode::kInvalidArgument,
               fmt::format("SPMD program instances must declare output '{}' alike: [{}] {} here, "
                           "[{}] {} in the first instance",
                           name, fmt::join(shape, ", "), dtypeName(dtype),
                           fmt::join(other.shape, ", "), dtypeName(other.dtype)),
               loc);
        }
        return wholeView(static_cast<std::int32_t>(b));
      }
    }
  }
  return declare(makeBuffer(std::move(name), isa::Memory::kHbm, dtype, std::move(shape),
                            isa::TensorKind::kOutput),
                 loc);
}

Tensor Kernel::hbmScratch(std::string name, std::vector<std::int64_t> shape, DType dtype, Loc loc) {
  return declare(makeBuffer(std::move(name), isa::Memory::kHbm, dtype, std::move(shape),
                            isa::TensorKind::kScratch),
                 loc);
}

Tensor Kernel::sbuf(std::vector<std::int64_t> shape, DType dtype, std::string name,
                    std::optional<Address> address, Loc loc) {
  return declare(makeBuffer(std::move(name), isa::Memory::kSbuf, dtype, std::move(shape),
                            isa::TensorKind::kScratch, address),
                 loc);
}

Tensor Kernel::psum(std::vector<std::int64_t> shape, DType dtype, std::string name,
                    std::optional<Address> address, Loc loc) {
  return declare(makeBuffer(std::move(name), isa::Memory::kPsum, dtype, std::move(shape),
                            isa::TensorKind::kScratch, address),
                 loc);
}

void Kernel::markOutput(const Tensor& t, Loc loc) {
  if (!t.valid() || &t.kernel() != this) {
    fail(ErrorCode::kInvalidArgument, "a kernel returned a tensor it does not own", loc);
  }
  const Buffer& b = ir_.buffers[static_cast<std::size_t>(t.buffer())];
  if (laterInstance_ && b.memory == isa::Memory::kHbm &&
      std::find(ir_.outputs.begin(), ir_.outputs.end(), t.buffer()) != ir_.outputs.end()) {
    return;  // the same shared output, returned by another program instance
  }
  if (b.memory != isa::Memory::kHbm || b.hbmKind != isa::TensorKind::kOutput) {
    // Reported at the line that declared the returned tensor: the return statement itself has
    // no location the library can see.
    throw TraceError{Status(
        ErrorCode::kInvalidArgument,
        fmt::format(
            "{}: kernel '{}' returns '{}', declared here, which is {}; a kernel returns "
            "HBM outputs (Kernel::output)",
            formatLocation(ir_, b.site), ir_.name, b.name,
            b.memory == isa::Memory::kHbm ? "an HBM input or scratch tensor" : "an on-chip tile"))};
  }
  ir_.outputs.push_back(t.buffer());
}

std::vector<Tensor> Kernel::declaredOutputs() {
  std::vector<Tensor> out;
  for (std::size_t b = 0; b < ir_.buffers.size(); ++b) {
    const Buffer& buf = ir_.buffers[b];
    if (buf.memory == isa::Memory::kHbm && buf.hbmKind == isa::TensorKind::kOutput) {
      out.push_back(wholeView(static_cast<std::int32_t>(b)));
    }
  }
  return out;
}

void Kernel::dynamicLoop(std::int64_t trips, const std::function<void()>& body, Loc loc) {
  if (inDynamicLoop_) {
    fail(ErrorCode::kUnsupported, "dynamic loops do not nest; unroll the inner loop with a C++ for",
         loc);
  }
  if (trips < 1 || trips > std::numeric_limits<std::int32_t>::max()) {
    fail(ErrorCode::kOutOfRange,
         fmt::format("a dynamic loop runs 1 to 2^31-1 times; {} was asked", trips), loc);
  }
  DynamicLoop loop{static_cast<std::int64_t>(ir_.ops.size()), 0, trips, toLocation(loc)};
  inDynamicLoop_ = true;
  body();
  inDynamicLoop_ = false;
  loop.end = static_cast<std::int64_t>(ir_.ops.size());
  if (loop.end == loop.begin) {
    fail(ErrorCode::kInvalidArgument, "a dynamic loop needs at least one instruction", loc);
  }
  std::vector<std::string> engines;
  for (std::int64_t i = loop.begin; i < loop.end; ++i) {
    const Op& op = ir_.ops[static_cast<std::size_t>(i)];
    const isa::Instruction& instr = op.instr;
    const std::string here =
        fmt::format("{} on {} at {}", isa::info(instr.body).mnemonic, isa::engineName(instr.engine),
                    formatLocation(ir_, op.site));
    if (isa::info(instr.body).viaDma) {
      fail(ErrorCode::kUnsupported,
           fmt::format("a dynamic loop cannot start DMA transfers ({}): move the transfer out of "
                       "the loop or unroll it with a C++ for",
                       here),
           loc);
    }
    if (instr.engine != ir_.ops[static_cast<std::size_t>(loop.begin)].instr.engine) {
      const Op& firstOp = ir_.ops[static_cast<std::size_t>(loop.begin)];
      const isa::Instruction& first = firstOp.instr;
      fail(ErrorCode::kUnsupported,
           fmt::format("a dynamic loop runs on one sequencer, but its instructions use two "
                       "engines ({} on {} at {}; {}): pin them to one engine or unroll the loop",
                       isa::info(first.body).mnemonic, isa::engineName(first.engine),
                       formatLocation(ir_, firstOp.site), here),
           loc);
    }
  }
  ir_.loops.push_back(loop);
}

void Kernel::emit(isa::InstructionBody body, std::optional<isa::Engine> engine, Loc loc) {
  const std::string_view mnemonic = isa::info(body).mnemonic;
  std::visit(
      [&](const auto& b) {
        isa::forEachAccessPattern(
            b, [&](std::string_view name, isa::FieldRole, const isa::AccessPattern& ap) {
              const bool known =
                  ap.tensor >= 0 && static_cast<std::size_t>(ap.tensor) < ir_.buffers.size() &&
                  ir_.buffers[static_cast<std::size_t>(ap.tensor)].memory == ap.memory;
              if (!known) {
                fail(ErrorCode::kInvalidArgument,
                     fmt::format("{}: operand {} does not come from a tensor of this kernel "
                                 "(use Tensor::ap())",
                                 mnemonic, name),
                     loc);
              }
            });
      },
      body);
  const EngineCandidates candidates = engine ? EngineCandidates{{*engine}, 1} : engineCandidates(body);
  Status first;
  for (const isa::Engine e : candidates.engines()) {
    const Status status = isa::verifyInstructionBody(body, e, probe_, limits_);
    if (status.ok()) {
      if (ir_.ops.size() >= kMaxTracedOps) {
        fail(ErrorCode::kOutOfRange,
             fmt::format("{}: the kernel traced more than {} tile operations, the most one kernel "
                         "may have; its shapes are too large for one launch (use fewer, larger "
                         "tiles, a dynamic loop, or split the work)",
                         mnemonic, kMaxTracedOps),
             loc);
      }
      // Built in place: a default Op zero-fills its ~0.7 KiB body only for it to be overwritten.
      makeRoomForOne(ir_.ops);
      ir_.ops.emplace_back(isa::Instruction{e, std::move(body), {}, {}},
                           engine ? EngineOrigin::kPinned : EngineOrigin::kRule, site(loc));
      return;
    }
    if (first.ok()) {
      first = status;
    }
  }
  fail(first.code(), fmt::format("{}: {}", mnemonic, first.message()), loc);
}

}  // namespace trn::kernel
