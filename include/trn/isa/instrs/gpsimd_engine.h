// GpSimd engine (POOL) instructions: index generation, affine masks, gathers and cross-partition
// reductions (nki-reference §3, hardware-trn2.md §7). POOL reaches SBUF only (the generic
// verifier rejects PSUM and HBM operands). Decisions and sources are in docs/isa/special.md.
#pragma once

#include <cstdint>
#include <tuple>

#include "trn/base/status.h"
#include "trn/isa/exec_context.h"
#include "trn/isa/field.h"
#include "trn/isa/index_pattern.h"
#include "trn/isa/instruction.h"
#include "trn/isa/type_list.h"

namespace trn::isa {

/// Partitions wired to one of the eight GpSimd cores (local_gather groups).
inline constexpr std::int64_t kGpSimdCorePartitions = 16;

/// Reduction operators of tensor_partition_reduce (nki.isa docs: add, mean, max, bitwise_or,
/// bitwise_and, bitwise_xor).
enum class PartitionReduceOp : std::uint8_t {
  kAdd,
  kMean,
  kMax,
  kBitwiseOr,
  kBitwiseAnd,
  kBitwiseXor
};

template <>
struct EnumTable<PartitionReduceOp> {
  static constexpr std::string_view kTypeName = "partition_reduce_op";
  using O = PartitionReduceOp;
  static constexpr std::array<std::pair<O, std::string_view>, 6> kEntries = {{
      {O::kAdd, "add"},
      {O::kMean, "mean"},
      {O::kMax, "max"},
      {O::kBitwiseOr, "bitwise_or"},
      {O::kBitwiseAnd, "bitwise_and"},
      {O::kBitwiseXor, "bitwise_xor"},
  }};
};

/// dst[c, i] = offset + c * channel_multiplier + pattern value i (sum of step_k * index_k), in
/// 32-bit two's-complement arithmetic, c the partition relative to dst's first; the int32 is
/// stored exactly in integer dtypes (saturated to their range) and rounded to fp32, then cast, in
/// float dtypes.
struct Iota {
  static constexpr InstrInfo kInfo{"iota",
                                   0x0400,
                                   {Engine::kPool},
                                   "iota_affine_select",
                                   "generate offset + c*channel_multiplier + affine pattern"};
  AccessPattern dst;
  IndexPattern pattern;
  std::int64_t offset = 0;
  std::int64_t channelMultiplier = 0;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &Iota::dst, FieldRole::kOutput, "SBUF [P, F], F = pattern size"},
        FieldDesc{"pattern", &Iota::pattern, FieldRole::kImmediate,
                  "[[step,count],...] up to 4 pairs, outermost first (int32 steps)"},
        FieldDesc{"offset", &Iota::offset, FieldRole::kImmediate, "int32 added to every value"},
        FieldDesc{"channel_multiplier", &Iota::channelMultiplier, FieldRole::kImmediate,
                  "int32 multiplied by the partition index"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// dst = cmp_op(offset + c * channel_multiplier + pattern value, 0) ? on_true_tile :
/// on_false_value, the affine value computed as in iota. Selected elements are copied bit for bit
/// when dst and on_true_tile share a dtype, otherwise cast through fp32.
struct AffineSelect {
  static constexpr InstrInfo kInfo{"affine_select",
                                   0x0401,
                                   {Engine::kPool},
                                   "iota_affine_select",
                                   "select on_true_tile or a constant by an affine predicate"};
  AccessPattern dst;
  IndexPattern pattern;
  std::int64_t offset = 0;
  std::int64_t channelMultiplier = 0;
  AccessPattern onTrueTile;
  float onFalseValue = 0.0f;
  AluOp cmpOp = AluOp::kEqual;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &AffineSelect::dst, FieldRole::kOutput, "SBUF [P, F], F = pattern size"},
        FieldDesc{"pattern", &AffineSelect::pattern, FieldRole::kImmediate,
                  "[[step,count],...] up to 4 pairs, outermost first (int32 steps)"},
        FieldDesc{"offset", &AffineSelect::offset, FieldRole::kImmediate,
                  "int32 added to every affine value"},
        FieldDesc{"channel_multiplier", &AffineSelect::channelMultiplier, FieldRole::kImmediate,
                  "int32 multiplied by the partition index"},
        FieldDesc{"on_true_tile", &AffineSelect::onTrueTile, FieldRole::kInput,
                  "SBUF [P, F] taken where the predicate holds"},
        FieldDesc{"on_false_value", &AffineSelect::onFalseValue, FieldRole::kImmediate,
                  "fp32 constant taken elsewhere"},
        FieldDesc{"cmp_op", &AffineSelect::cmpOp, FieldRole::kImmediate,
                  "comparison of the affine value with 0: equal, not_equal, greater, ..."},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// dst[0, f] = op over partitions p = 0..P-1 of data[p, f]. add/max/mean in fp32, in partition
/// order (mean: the fp32 sum divided by P); the bitwise operators act on the raw integer bits
/// (zero-extended to 32 bits, result truncated to dst's width).
struct TensorPartitionReduce {
  static constexpr InstrInfo kInfo{"tensor_partition_reduce",
                                   0x0402,
                                   {Engine::kPool},
                                   "tensor_partition_reduce",
                                   "reduce across partitions"};
  AccessPattern dst;
  PartitionReduceOp op = PartitionReduceOp::kAdd;
  AccessPattern data;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &TensorPartitionReduce::dst, FieldRole::kOutput, "SBUF [1, F]"},
        FieldDesc{"op", &TensorPartitionReduce::op, FieldRole::kImmediate,
                  "add, mean, max, bitwise_or, bitwise_and or bitwise_xor"},
        FieldDesc{"data", &TensorPartitionReduce::data, FieldRole::kInput, "SBUF [P, F]"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// Each GpSimd core (partitions 16g..16g+15) gathers with the uint16 indices of its 16 index
/// partitions, read partition-first (index[0, 0], index[1, 0], ..., index[15, 0], index[0, 1],
/// ...), the first num_valid_indices of them: for every partition p of the group and j <
/// num_valid_indices, dst[p, j*E + e] = src_buffer[p, idx_j + e] for e < num_elem_per_idx = E,
/// where idx_j is an element offset into p's flattened free dimensions. No cast (dst has
/// src_buffer's dtype); an offset past the end of src_buffer is a run-time error.
struct LocalGather {
  static constexpr InstrInfo kInfo{
      "local_gather",
      0x0403,
      {Engine::kPool},
      "local_gather",
      "gather within each 16-partition GpSimd core with shared indices"};
  AccessPattern dst;
  AccessPattern srcBuffer;
  AccessPattern index;
  std::int64_t numElemPerIdx = 1;
  std::int64_t numValidIndices = 0;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &LocalGather::dst, FieldRole::kOutput,
                  "SBUF [P, V*E], src_buffer's dtype and partitions"},
        FieldDesc{"src_buffer", &LocalGather::srcBuffer, FieldRole::kInput,
                  "SBUF [P, F], P a multiple of 16 starting at a multiple of 16"},
        FieldDesc{"index", &LocalGather::index, FieldRole::kInput,
                  "SBUF [P, K] uint16 element offsets, shared by each 16-partition group"},
        FieldDesc{"num_elem_per_idx", &LocalGather::numElemPerIdx, FieldRole::kImmediate,
                  "E contiguous elements per index: 1, 2, 4, 8, 16 or 32"},
        FieldDesc{"num_valid_indices", &LocalGather::numValidIndices, FieldRole::kImmediate,
                  "V indices used per group (<= 16*K, <= 4096); 0: all 16*K"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// dst[p, i] = data[p, indices[p, i]], data's free dimensions flattened; bit-exact (dst has
/// data's dtype). An index outside data's free size is a run-time error.
struct NcNGather {
  static constexpr InstrInfo kInfo{"nc_n_gather",
                                   0x0404,
                                   {Engine::kPool},
                                   "nc_n_gather",
                                   "per-partition gather by uint32 flat index"};
  AccessPattern dst;
  AccessPattern data;
  AccessPattern indices;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &NcNGather::dst, FieldRole::kOutput, "SBUF [P, N], data's dtype"},
        FieldDesc{"data", &NcNGather::data, FieldRole::kInput, "SBUF [P, F], any dtype"},
        FieldDesc{"indices", &NcNGather::indices, FieldRole::kInput,
                  "SBUF [P, N] uint32 flat indices into data's partition"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// The instructions declared in this header, in opcode order.
using GpSimdEngineInstructions =
    TypeList<Iota, AffineSelect, TensorPartitionReduce, LocalGather, NcNGather>;

}  // namespace trn::isa
