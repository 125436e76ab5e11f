// The interface through which an instruction's functional semantics touch the machine. The
// instruction definitions (isa) call it; the core model implements it. Values cross it as fp32
// (the compute format of every engine) or as raw element bytes for bit-exact moves, always in
// access-pattern order: partition-major, then free dimensions outermost to innermost.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "trn/base/status.h"
#include "trn/isa/access_pattern.h"
#include "trn/numerics/convert.h"

namespace trn::isa {

class ExecContext {
 public:
  virtual ~ExecContext() = default;

  /// Reads ap.elementCount() elements, widened to fp32.
  virtual void readFloats(const AccessPattern& ap, std::span<float> out) = 0;

  /// Writes ap.elementCount() fp32 values, cast to ap.dtype with the active rounding mode.
  virtual void writeFloats(const AccessPattern& ap, std::span<const float> values) = 0;

  /// Reads the raw bytes of ap.elementCount() elements (byteSize(ap.dtype) each).
  virtual void readBytes(const AccessPattern& ap, std::span<std::byte> out) = 0;

  /// Writes raw element bytes; no conversion.
  virtual void writeBytes(const AccessPattern& ap, std::span<const std::byte> in) = 0;

  /// The executing engine's per-partition accumulator registers (one fp32 per partition), shared
  /// by the instructions that reduce across calls (reduce_cmd in nki.isa).
  virtual std::span<float> accumulators() = 0;

  /// Register `index` of the executing sequencer.
  virtual std::int32_t& reg(int index) = 0;

  /// 32-bit words of the executing engine's random-number generator.
  virtual std::uint32_t randomWord() = 0;

  /// Reseeds the executing engine's random-number generator.
  virtual void seedRandom(std::uint64_t seed) = 0;

  /// Continues the executing sequencer at instruction `index` of its stream (branches).
  virtual void jumpTo(std::int64_t index) = 0;

  /// The most scratch buffers an instruction may hold at once.
  static constexpr int kScratchSlots = 4;

  /// A buffer of `count` floats for an instruction's operands, valid until the instruction
  /// ends; slots 0..kScratchSlots-1 are distinct buffers. Its contents are unspecified. The core
  /// reuses them from one instruction to the next, so that large operands cost no allocation.
  virtual std::span<float> scratchFloats(int slot, std::size_t count) = 0;
};

/// dst = src element by element in access-pattern order: the raw bytes when the dtypes match
/// (bit-exact, NaN payloads kept), otherwise widened to fp32 and cast on write. Both patterns
/// must hold the same number of elements.
void copyElements(ExecContext& ctx, const AccessPattern& dst, const AccessPattern& src);

}  // namespace trn::isa
