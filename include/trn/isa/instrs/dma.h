// DMA instructions: issued by a sequencer onto one of the core's DMA queues, they move data
// between HBM and SBUF (either direction, or within one memory) and signal completion through
// their semaphore updates (hardware-trn2.md §9): plain and indirect (gather/scatter) copies with
// cast, 2-D transposes, and the DMA engines' fp32 add-reduction of several sources. The semantics
// decisions and their sources are in docs/isa/dma-scalar.md.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

#include "trn/base/status.h"
#include "trn/isa/exec_context.h"
#include "trn/isa/field.h"
#include "trn/isa/instruction.h"
#include "trn/isa/type_list.h"

namespace trn::isa {

/// What an indirect DMA does with a row index outside its table (nki.isa oob_mode).
enum class DmaOobMode : std::uint8_t {
  kError,  ///< the instruction fails with an error naming the index and the bound
  kSkip,   ///< rows with out-of-range indices are not transferred
};

template <>
struct EnumTable<DmaOobMode> {
  static constexpr std::string_view kTypeName = "oob_mode";
  static constexpr std::array<std::pair<DmaOobMode, std::string_view>, 2> kEntries = {{
      {DmaOobMode::kError, "error"}, {DmaOobMode::kSkip, "skip"},
  }};
};

/// The sequencers that may trigger a DMA transfer (hardware-trn2.md §9: any engine's sequencer).
inline constexpr EngineSet kDmaIssuers{Engine::kSp, Engine::kAct, Engine::kPool, Engine::kPe,
                                       Engine::kDve};

/// dst = src, element by element in access-pattern order, casting through fp32 when the dtypes
/// differ (bit-exact when they are equal). Both sides hold the same number of elements.
///
/// Indirect form (NKI `.ap(vector_offset=index, indirect_dim=0)` on the HBM side): with
/// `src_index` (gather) or `dst_index` (scatter), the indexed HBM operand describes a table of
/// R rows (its row count) of F elements; the index is an SBUF [P, 1] int32/uint32 tensor and
/// the other operand has P partitions (or rows) of F elements. Row r of the other operand moves
/// from/to table row index[r]; an index outside 0..R-1 is handled by `oob_mode`.
struct DmaCopy {
  static constexpr InstrInfo kInfo{"dma_copy", 0x0500, kDmaIssuers, "dma_copy",
                                   "copy (with cast, optionally gather/scatter) between HBM and "
                                   "SBUF on a DMA queue",
                                   true};
  AccessPattern dst;
  AccessPattern src;
  std::int64_t queue = 0;
  std::optional<AccessPattern> dstIndex;
  std::optional<AccessPattern> srcIndex;
  DmaOobMode oobMode = DmaOobMode::kError;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &DmaCopy::dst, FieldRole::kOutput, "HBM or SBUF destination"},
        FieldDesc{"src", &DmaCopy::src, FieldRole::kInput, "HBM or SBUF source"},
        FieldDesc{"queue", &DmaCopy::queue, FieldRole::kImmediate, "DMA queue (0..15)"},
        FieldDesc{"dst_index", &DmaCopy::dstIndex, FieldRole::kInput,
                  "scatter: SBUF [P, 1] int32/uint32 row indices into the HBM dst table"},
        FieldDesc{"src_index", &DmaCopy::srcIndex, FieldRole::kInput,
                  "gather: SBUF [P, 1] int32/uint32 row indices into the HBM src table"},
        FieldDesc{"oob_mode", &DmaCopy::oobMode, FieldRole::kImmediate,
                  "out-of-range row index: error, or skip the row"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// dst[j, i] = src[i, j]: a 2-D transpose of a [P, F] block (F = the flattened free elements, or
/// for HBM the row elements) into [F, P], bit-exact. HBM->SBUF or SBUF->SBUF; 2- and 4-byte types
/// only (hardware-trn2.md §9).
struct DmaTranspose {
  static constexpr InstrInfo kInfo{"dma_transpose", 0x0501, kDmaIssuers, "dma_transpose",
                                   "2-D transpose of a block of 2- or 4-byte elements into SBUF "
                                   "on a DMA queue",
                                   true};
  AccessPattern dst;
  AccessPattern src;
  std::int64_t queue = 0;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &DmaTranspose::dst, FieldRole::kOutput, "SBUF [F, P] destination"},
        FieldDesc{"src", &DmaTranspose::src, FieldRole::kInput, "HBM or SBUF [P, F] source"},
        FieldDesc{"queue", &DmaTranspose::queue, FieldRole::kImmediate, "DMA queue (0..15)"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// dst = src0 * scale0 + src1 * scale1 + ... in fp32, element by element in access-pattern
/// order: each source is widened to fp32 and multiplied by its scale, the products are added in
/// source order with fp32 rounding after every step, and the sum is cast to dst's dtype. Sources
/// are src0, src1, ... without gaps; every operand holds the same number of elements.
struct DmaCompute {
  static constexpr int kMaxSources = 4;
  static constexpr InstrInfo kInfo{"dma_compute", 0x0502, kDmaIssuers, "dma_compute",
                                   "scaled fp32 add-reduction of up to 4 sources in the DMA "
                                   "engines",
                                   true};
  AccessPattern dst;
  std::optional<AccessPattern> src0;
  std::optional<AccessPattern> src1;
  std::optional<AccessPattern> src2;
  std::optional<AccessPattern> src3;
  float scale0 = 1.0f;
  float scale1 = 1.0f;
  float scale2 = 1.0f;
  float scale3 = 1.0f;
  AluOp reduceOp = AluOp::kAdd;
  std::int64_t queue = 0;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &DmaCompute::dst, FieldRole::kOutput, "HBM or SBUF destination"},
        FieldDesc{"src0", &DmaCompute::src0, FieldRole::kInput, "first source (required)"},
        FieldDesc{"src1", &DmaCompute::src1, FieldRole::kInput, "second source"},
        FieldDesc{"src2", &DmaCompute::src2, FieldRole::kInput, "third source"},
        FieldDesc{"src3", &DmaCompute::src3, FieldRole::kInput, "fourth source"},
        FieldDesc{"scale0", &DmaCompute::scale0, FieldRole::kImmediate, "fp32 scale of src0"},
        FieldDesc{"scale1", &DmaCompute::scale1, FieldRole::kImmediate, "fp32 scale of src1"},
        FieldDesc{"scale2", &DmaCompute::scale2, FieldRole::kImmediate, "fp32 scale of src2"},
        FieldDesc{"scale3", &DmaCompute::scale3, FieldRole::kImmediate, "fp32 scale of src3"},
        FieldDesc{"reduce_op", &DmaCompute::reduceOp, FieldRole::kImmediate,
                  "how scaled sources combine (add)"},
        FieldDesc{"queue", &DmaCompute::queue, FieldRole::kImmediate, "DMA queue (0..15)"},
    };
  }

  /// The source fields and their scales, in order.
  [[nodiscard]] std::array<std::pair<const std::optional<AccessPattern>*, float>, kMaxSources>
  sources() const {
    return {{{&src0, scale0}, {&src1, scale1}, {&src2, scale2}, {&src3, scale3}}};
  }

  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// The instructions declared in this header, in opcode order.
using DmaInstructions = TypeList<DmaCopy, DmaTranspose, DmaCompute>;

}  // namespace trn::isa
