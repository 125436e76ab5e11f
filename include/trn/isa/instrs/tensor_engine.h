// Tensor engine (PE array) instructions: matmul and transpose (nki-reference §3,
// hardware-trn2.md §6).
#pragma once

#include <array>
#include <cstdint>
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
      {MatmulPerfMode::kNone, "none"},
      {MatmulPerfMode::kDoubleRow, "double_row"},
  }};
};

/// Side of the PE array (rows = contraction partitions, columns = output partitions).
inline constexpr std::int64_t kPeArraySize = 128;

/// A (row, column) pair of PE tiling mode: nki.isa tile_position (start_row, start_column) or
/// tile_size (row_size, column_size).
using PeTile = std::array<std::int64_t, 2>;

/// dst[M, N] (+)= stationary[K, M]^T @ moving[K, N]. Products are exact; the sum over K is
/// accumulated in fp32 in order k = 0..K-1; the result overwrites PSUM (first matmul of an
/// accumulation group) or is added to it in fp32 (`accumulate`). With `is_transpose` the PE
/// array runs in transpose mode: stationary is the data, moving must be an identity matrix, and
/// dst = stationary^T bit for bit (see NcTranspose for the dtype rules). Tiling mode
/// (tile_position, tile_size) only places the matmul in part of the array; the result is the same.
struct NcMatmul {
  static constexpr InstrInfo kInfo{
      "nc_matmul",
      0x0100,
      {Engine::kPe},
      "matmul",
      "dst[M,N] (+)= stationary[K,M]^T @ moving[K,N]; fp32 accumulation in PSUM"};

  AccessPattern dst;
  AccessPattern stationary;
  AccessPattern moving;
  bool isTranspose = false;
  bool accumulate = false;
  PeTile tilePosition{0, 0};
  PeTile tileSize{kPeArraySize, kPeArraySize};
  MatmulPerfMode perfMode = MatmulPerfMode::kNone;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &NcMatmul::dst, FieldRole::kOutput,
                  "PSUM [M, N], fp32 (transpose mode: [M, K] in the data's dtype)"},
        FieldDesc{"stationary", &NcMatmul::stationary, FieldRole::kInput,
                  "SBUF [K, M], K partitions (contraction), M <= 128 loaded into the array"},
        FieldDesc{"moving", &NcMatmul::moving, FieldRole::kInput,
                  "SBUF [K, N], streamed through the array, N <= 512"},
        FieldDesc{"is_transpose", &NcMatmul::isTranspose, FieldRole::kImmediate,
                  "PE transpose mode: moving is a [K, K] identity, dst = stationary^T bit-exact"},
        FieldDesc{"accumulate", &NcMatmul::accumulate, FieldRole::kImmediate,
                  "false: overwrite PSUM (start of an accumulation group); true: add to it"},
        FieldDesc{"tile_position", &NcMatmul::tilePosition, FieldRole::kImmediate,
                  "tiling mode: [start_row,start_column], multiples of the tile size"},
        FieldDesc{"tile_size", &NcMatmul::tileSize, FieldRole::kImmediate,
                  "tiling mode: [row_size,column_size] in 128, 64, 32; K <= rows, M <= columns"},
        FieldDesc{"perf_mode", &NcMatmul::perfMode, FieldRole::kImmediate,
                  "none, or double_row for fp8 operands laid out [K, 2, F]"},
    };
  }

  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// dst[F, P] = data[P, F]^T (free dimensions flattened), moved bit for bit: NaN payloads,
/// infinities and denormals survive. Issued by the tensor engine (data in SBUF, P, F <= 128, dst
/// in PSUM within one bank; the PE transpose mode of NC-v3+) or by the vector engine (P, F <= 32,
/// SBUF or PSUM on both sides). dst has data's dtype, except that the PE writes a 1-byte input as
/// 16-bit PSUM words with the upper byte zero, so dst is then uint16 (hardware-trn2.md §6).
struct NcTranspose {
  static constexpr InstrInfo kInfo{
      "nc_transpose",
      0x0101,
      {Engine::kPe, Engine::kDve},
      "transpose",
      "dst[F,P] = data[P,F]^T bit-exact (PE <= 128x128, DVE <= 32x32)"};

  AccessPattern dst;
  AccessPattern data;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &NcTranspose::dst, FieldRole::kOutput,
                  "[F, P]; PE: PSUM, DVE: SBUF or PSUM; data's dtype (PE, 1-byte data: uint16)"},
        FieldDesc{"data", &NcTranspose::data, FieldRole::kInput,
                  "[P, F], free dimensions flattened; PE: SBUF, P, F <= 128; DVE: P, F <= 32"},
    };
  }

  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// The instructions declared in this header, in opcode order.
using TensorEngineInstructions = TypeList<NcMatmul, NcTranspose>;

}  // namespace trn::isa
