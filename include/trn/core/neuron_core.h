// One NeuronCore: SBUF, PSUM, its view of the chip's HBM, five in-order sequencers with their
// registers, the semaphores that order them, and the DMA queues. Running a Program executes each
// engine's stream in program order, starting an instruction only when its semaphore waits hold
// and applying its updates when it completes, so a race-free program has exactly one result; a
// race or a deadlock is an error in every mode. With a chip description the run is also timed
// (timing_model.h). Numerics follow architecture.md: exact matmul products with fp32
// accumulation, fp32 engine math, and a cast on every write with the selected rounding.
#pragma once

#include <array>
#include <barrier>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/core/device_memory.h"
#include "trn/core/memory.h"
#include "trn/core/timeline.h"
#include "trn/isa/core_limits.h"
#include "trn/isa/exec_context.h"
#include "trn/isa/program.h"
#include "trn/isa/verifier.h"
#include "trn/numerics/convert.h"
#include "trn/spec/chip_spec.h"

namespace trn::core {

/// How a core is configured for a run.
/// The instruction limit of a run unless the caller sets one.
inline constexpr std::uint64_t kDefaultMaxInstructions = 1'000'000'000;

struct CoreOptions {
  isa::CoreLimits limits;
  /// Rounding applied when engines write narrower types (RNE, or stochastic with `seed`).
  RoundingMode rounding = RoundingMode::kNearestEven;
  std::uint64_t seed = 0;
  /// Report any read of SBUF, PSUM or HBM bytes that were never written.
  bool poison = false;
  /// Upper bound on executed instructions (guards against endless dynamic loops).
  std::uint64_t maxInstructions = kDefaultMaxInstructions;
  /// What to model. Timing modes need `chip`.
  RunMode mode = RunMode::kFunctionalOnly;
  /// The hardware description that supplies clocks, costs and DMA parameters.
  std::shared_ptr<const spec::ChipSpec> chip;
  /// Physical core index on the chip (selects the HBM stack it shares with its pair).
  int physicalCore = 0;
  /// The cores run together that share a logical core (the same value) synchronise with each
  /// other at core_barrier instructions.
  int logicalCore = 0;
  /// The device memory the program's HBM tensors live in, and the device address of each tensor
  /// in declaration order (the runtime binds them; tensors of one program must not overlap).
  /// Null: the core maps a device of its own holding just its tensors, one after another.
  std::shared_ptr<DeviceMemory> device;
  std::vector<std::int64_t> tensorAddresses;
  /// When the core runs alone on a host thread as part of a multi-core run: its core barriers
  /// wait here for the threads of the other cores of its logical core.
  std::shared_ptr<std::barrier<>> hostBarrier;
  /// Check every access for races and report them as errors (the default). Off, no check is
  /// made (faster) and a racy program's result follows the simulated schedule.
  bool detectRaces = true;
  /// Keep one record per executed instruction and DMA transfer (for traces).
  bool record = false;
  /// The most instruction records kept (about 80 bytes each, with their transfers); later
  /// instructions run unrecorded and are counted in RunStats::unrecorded.
  std::uint64_t maxRecords = std::uint64_t{1} << 22;
};

struct SequencerState;
class CollectiveService;

class NeuronCore {
 public:
  /// Verifies `program` against `options.limits` and allocates the memories it needs.
  static Result<std::unique_ptr<NeuronCore>> create(isa::Program program, CoreOptions options);
  /// The same for a program the caller shares (a compiled kernel's, a loaded file's): the core
  /// keeps a reference instead of a copy.
  static Result<std::unique_ptr<NeuronCore>> create(std::shared_ptr<const isa::Program> program,
                                                    CoreOptions options);

  /// Fills HBM tensor `name` (in device memory) with raw little-endian element bytes of exactly
  /// its size.
  Status setTensor(std::string_view name, std::span<const std::byte> data);

  /// The current bytes of HBM tensor `name`.
  [[nodiscard]] Result<std::span<const std::byte>> tensorBytes(std::string_view name) const;

  /// Executes the program to completion in options.mode. Errors: a race (both instructions and
  /// the overlapping bytes), a deadlock (every unfinished engine's pending wait), a poison read,
  /// a runtime fault of an instruction, or the instruction limit.
  Result<RunStats> run();

  [[nodiscard]] const isa::Program& program() const { return *program_; }
  /// How the program uses each semaphore (from verification).
  [[nodiscard]] const std::vector<isa::SemaphoreUse>& semaphoreUse() const {
    return use_.semaphores;
  }
  /// Per program tensor, whether some instruction writes it (from verification).
  [[nodiscard]] const std::vector<bool>& writtenTensors() const { return use_.writtenTensors; }
  [[nodiscard]] const CoreOptions& options() const { return options_; }
  /// The device memory the core's HBM tensors live in.
  [[nodiscard]] const DeviceMemory& device() const { return *options_.device; }
  /// The device, for the scheduler's collectives, which write into it.
  [[nodiscard]] DeviceMemory* sharedDevice() const { return options_.device.get(); }
  /// The device address of HBM tensor `tensor` (an index into program().tensors).
  [[nodiscard]] std::int64_t tensorAddress(std::int32_t tensor) const {
    return options_.tensorAddresses[static_cast<std::size_t>(tensor)];
  }

  class Context;  // the ExecContext implementation (neuron_core.cpp)

  /// Applies the semantics of `instr`, issued by `engine` with sequencer state `seq`: its data
  /// effects (unless the mode has no data, when only control flow runs). Sets `jump` to the next
  /// stream index for a taken branch, else -1. Used by the scheduler (simulation.h).
  Status execute(isa::Engine engine, const isa::InstructionBody& instr, SequencerState& seq,
                 std::int64_t& jump);

  /// The raw bytes of tile `ap` of this core (data modes; poison is checked as for an
  /// instruction's read), and writing them: the two halves of a sendrecv between two cores.
  Status readTile(isa::Engine engine, SequencerState& seq, const isa::AccessPattern& ap,
                  std::span<std::byte> out);
  Status writeTile(isa::Engine engine, SequencerState& seq, const isa::AccessPattern& ap,
                   std::span<const std::byte> in);

  /// A fresh sequencer state for this core (registers zero, RNG seeded).
  [[nodiscard]] SequencerState newSequencer() const;

 private:
  NeuronCore(std::shared_ptr<const isa::Program> program, CoreOptions options);
  /// Places the HBM tensors (in a device of its own unless one was given) and maps SBUF and PSUM
  /// (committed only when touched) in the data modes.
  Status allocateMemories();
  /// Checks the given device and tensor addresses, or makes a device of its own.
  Status bindTensors();

  std::shared_ptr<const isa::Program> program_;
  CoreOptions options_;
  isa::ProgramUse use_;
  TrackedBytes sbuf_;
  TrackedBytes psum_;
  TrackedBytes* hbm_ = nullptr;  ///< the device's bytes (data modes)
  /// Operand buffers instructions borrow (isa::ExecContext::scratchFloats), kept between them.
  std::array<std::vector<float>, isa::ExecContext::kScratchSlots> scratch_;
};

/// Runs several cores in one timeline: cores on one device memory share the HBM stacks their
/// physical indices map to (CoreOptions::physicalCore), so the two cores of a pair compete for
/// bandwidth; cores on different devices (different chips) share nothing but `collectives`,
/// which runs their `collective` instructions (a program with one and no service is an error).
/// The ranks are the logical cores (CoreOptions::logicalCore), numbered in the order their first
/// cores are given; a rank's collectives are issued by that first core alone. All cores must use
/// the same mode and chip type. Returns each core's statistics.
Result<std::vector<RunStats>> runTogether(const std::vector<NeuronCore*>& cores,
                                          CollectiveService* collectives = nullptr);

}  // namespace trn::core
