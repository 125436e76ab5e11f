// The kernel IR: what tracing a tile kernel produces and the backend passes transform into a
// Program. It is a flat list of ISA instructions in trace order plus the buffers they name.
// Operands are ordinary isa::AccessPatterns whose `tensor` field holds a buffer index for every
// memory and whose on-chip partition start and byte offset are relative to the buffer until the
// allocation pass places it; engines and DMA queues are chosen by passes unless the author pinned
// them. Every op keeps the kernel source line that created it, as a Site: an index into the IR's
// table of file names and a line, so that tracing copies no file name per op or buffer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trn/base/huge_pages.h"
#include "trn/isa/instruction_set.h"
#include "trn/isa/program.h"

namespace trn::kernel {

/// A kernel source line: `file` indexes KernelIR::files (-1: no location, an empty file name).
struct Site {
  std::int32_t file = -1;
  std::int32_t line = 0;
  friend bool operator==(const Site&, const Site&) = default;
};

/// An explicit on-chip placement given by the author (NKI `address=(partition, byte)`).
struct Address {
  std::int64_t partition = 0;
  std::int64_t byte = 0;  ///< within each partition
};

/// A tensor the kernel declares: an HBM input/output/scratch tensor or an on-chip tile.
struct Buffer {
  std::string name;
  isa::Memory memory = isa::Memory::kSbuf;
  DType dtype = DType::kFp32;
  /// Dimension 0 is the partition dimension for SBUF/PSUM (the row dimension for HBM).
  std::vector<std::int64_t> shape;
  isa::TensorKind hbmKind = isa::TensorKind::kScratch;  ///< HBM only
  std::optional<Address> address;                       ///< on-chip, author-placed
  std::optional<Address> placement;  ///< on-chip, where the allocation pass put it (if used)
  Site site;                         ///< where the kernel declared it

  /// SBUF/PSUM: bytes the tile takes in each of its partitions.
  [[nodiscard]] std::int64_t partitionBytes() const;
  [[nodiscard]] std::int64_t elementCount() const;
};

/// Where an op's engine came from.
enum class EngineOrigin : std::uint8_t {
  kRule,    ///< chosen by the engine-assignment rules; a pass may move it
  kPinned,  ///< given by the author; kept
};

/// One traced instruction.
struct Op {
  /// Engine and body with buffer-relative operands. Its `sync` and `location` stay empty: the
  /// semaphores are in KernelIR::semaphores, and the lowering pass writes `site` into the Program.
  isa::Instruction instr;
  EngineOrigin origin = EngineOrigin::kRule;
  Site site;  ///< the kernel source line that created it
};

/// A loop the hardware runs (not unrolled): ops [begin, end) repeat `trips` times on one
/// sequencer, counted down in a sequencer register.
struct DynamicLoop {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t trips = 1;
  isa::SourceLocation location;
};

/// The semaphores the synchronise pass gives the ops, kept apart from them so that an op holds no
/// vectors of its own (two allocations an instruction): op i waits for
/// waits[waitsFrom[i], waitsFrom[i + 1]) and, when signals[i] >= 0, adds 1 to semaphore
/// signals[i] as it completes. Empty before that pass.
struct OpSemaphores {
  LargeVector<isa::SemaphoreWait> waits;
  LargeVector<std::size_t> waitsFrom;
  LargeVector<std::int32_t> signals;

  /// Op `op`'s semaphores (none before the synchronise pass). The view stays valid while this
  /// table and `update` live.
  [[nodiscard]] isa::SyncView of(std::size_t op, isa::SemaphoreUpdate& update) const;
};

struct KernelIR {
  std::string name;
  /// The distinct source file names that Sites index, each once.
  std::vector<std::string> files;
  /// Huge-page backed too: a kernel may declare a tile per loop iteration, 100,000 of them.
  LargeVector<Buffer> buffers;
  /// Huge-page backed: an Op takes about 0.7 KiB, so a 100k-instruction kernel holds 70 MB of
  /// them, which 4 KiB pages would fault in one by one (base/huge_pages.h).
  LargeVector<Op> ops;
  std::vector<std::int32_t> inputs;   ///< buffer indices, in argument order
  std::vector<std::int32_t> outputs;  ///< buffer indices, in return order
  std::vector<DynamicLoop> loops;     ///< in trace order, not nested
  OpSemaphores semaphores;            ///< by op, from the synchronise pass on
  /// True once the allocation pass has rebased on-chip operands onto physical addresses.
  bool allocated = false;

  /// The Site of `location`, adding its file name to `files` if it is new.
  Site site(const isa::SourceLocation& location);
  Site site(std::string_view file, std::int32_t line);
  /// The file name `site` names ("" for none).
  [[nodiscard]] std::string_view file(Site site) const;
  /// `site` as a whole source location.
  [[nodiscard]] isa::SourceLocation location(Site site) const;

 private:
  std::int32_t latestFile_ = -1;  ///< the file of the latest site(), tried first
};

/// The buffer an operand names.
inline const Buffer& bufferOf(const KernelIR& ir, const isa::AccessPattern& ap) {
  return ir.buffers[static_cast<std::size_t>(ap.tensor)];
}

/// "kernel.cpp:42" for error messages; the file name without its directories.
std::string formatLocation(const isa::SourceLocation& location);
std::string formatLocation(const KernelIR& ir, Site site);

}  // namespace trn::kernel
