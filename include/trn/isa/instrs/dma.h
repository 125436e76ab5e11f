// DMA instructions: issued by a sequencer onto one of the core's DMA queues, they move data
// between HBM and SBUF (either direction, or within one memory) and signal completion through
// their semaphore updates (hardware-trn2.md §9).
#pragma once

#include <tuple>

#include "trn/base/status.h"
#include "trn/isa/exec_context.h"
#include "trn/isa/field.h"
#include "trn/isa/instruction.h"
#include "trn/isa/type_list.h"

namespace trn::isa {

/// dst = src, element by element in access-pattern order, casting through fp32 when the dtypes
/// differ. Both sides must hold the same number of elements.
struct DmaCopy {
  static constexpr InstrInfo kInfo{"dma_copy", 0x0500,
                                   {Engine::kSp, Engine::kAct, Engine::kPool, Engine::kPe,
                                    Engine::kDve},
                                   "dma_copy", "copy (with cast) between HBM and SBUF on a DMA queue", true};
  AccessPattern dst;
  AccessPattern src;
  std::int64_t queue = 0;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &DmaCopy::dst, FieldRole::kOutput, "HBM or SBUF destination"},
        FieldDesc{"src", &DmaCopy::src, FieldRole::kInput, "HBM or SBUF source"},
        FieldDesc{"queue", &DmaCopy::queue, FieldRole::kImmediate, "DMA queue (0..15)"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// The instructions declared in this header, in opcode order.
using DmaInstructions = TypeList<DmaCopy>;

}  // namespace trn::isa
