// Tensor engine (PE array) instructions: matmul and transpose (nki-reference §3,
// hardware-trn2.md §6).
#pragma once

#include <tuple>

#include "trn/base/status.h"
#include "trn/isa/exec_context.h"
#include "trn/isa/field.h"
#include "trn/isa/instruction.h"
#include "trn/isa/type_list.h"

namespace trn::isa {

/// How the PE array consumes its operands.
enum class MatmulPerfMode : std::uint8_t {
  kNone,       ///< one multiply per PE per cycle; contraction = operand partitions (<= 128)
  kDoubleRow,  ///< fp8 only (NC-v3+): operands [K, 2, F], contraction 2K (<= 256)
};

template <>
struct EnumTable<MatmulPerfMode> {
  static constexpr std::string_view kTypeName = "matmul_perf_mode";
  static constexpr std::array<std::pair<MatmulPerfMode, std::string_view>, 2> kEntries = {{
      {MatmulPerfMode::kNone, "none"}, {MatmulPerfMode::kDoubleRow, "double_row"},
  }};
};

/// dst[M, N] (+)= stationary[K, M]^T @ moving[K, N]. Products are exact; the sum over K is
/// accumulated in fp32 in order k = 0..K-1; the result overwrites PSUM (first matmul of an
/// accumulation group) or is added to it in fp32 (`accumulate`).
struct NcMatmul {
  static constexpr InstrInfo kInfo{
      "nc_matmul", 0x0100, {Engine::kPe}, "nc_matmul",
      "dst[M,N] (+)= stationary[K,M]^T @ moving[K,N]; fp32 accumulation in PSUM"};

  AccessPattern dst;
  AccessPattern stationary;
  AccessPattern moving;
  bool accumulate = false;
  MatmulPerfMode perfMode = MatmulPerfMode::kNone;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &NcMatmul::dst, FieldRole::kOutput, "PSUM [M, N], fp32"},
        FieldDesc{"stationary", &NcMatmul::stationary, FieldRole::kInput,
                  "SBUF [K, M], K partitions (contraction), M <= 128 loaded into the array"},
        FieldDesc{"moving", &NcMatmul::moving, FieldRole::kInput,
                  "SBUF [K, N], streamed through the array, N <= 512"},
        FieldDesc{"accumulate", &NcMatmul::accumulate, FieldRole::kImmediate,
                  "false: overwrite PSUM (start of an accumulation group); true: add to it"},
        FieldDesc{"perf_mode", &NcMatmul::perfMode, FieldRole::kImmediate,
                  "none, or double_row for fp8 operands laid out [K, 2, F]"},
    };
  }

  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// The instructions declared in this header, in opcode order.
using TensorEngineInstructions = TypeList<NcMatmul>;

}  // namespace trn::isa
