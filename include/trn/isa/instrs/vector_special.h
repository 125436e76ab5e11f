// Vector engine (DVE) special-purpose instructions: batch-norm statistics, top-8 search and
// replace, and 32-partition shuffles (nki-reference §3, hardware-trn2.md §7). The 32x32 DVE
// transpose is nc_transpose (tensor_engine.h), one instruction for both engines. Semantics
// decisions and their sources are in docs/isa/special.md.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <tuple>

#include "trn/base/status.h"
#include "trn/isa/exec_context.h"
#include "trn/isa/field.h"
#include "trn/isa/instruction.h"
#include "trn/isa/type_list.h"

namespace trn::isa {

/// Partitions in one vector-engine shuffle quadrant (one reshape bank).
inline constexpr std::int64_t kShuffleQuadrant = 32;

/// nc_stream_shuffle's shuffle_mask: for output partition i of every quadrant, the input
/// partition (0..31) of the same quadrant it copies, or kShuffleKeep.
using ShuffleMask = std::array<std::int64_t, kShuffleQuadrant>;

/// shuffle_mask entry that leaves the output partition unmodified.
inline constexpr std::int64_t kShuffleKeep = 255;

/// Per partition, statistics of data's elements at even and at odd flat positions:
/// dst = [count_even, mean_even, M2_even, count_odd, mean_odd, M2_odd], where M2 = variance *
/// count = sum((x - mean)^2). Computed in fp32: the mean as a sequential sum divided by the count,
/// then M2 as a sequential sum of squared deviations; an empty half gives 0, 0, 0.
struct BnStats {
  static constexpr InstrInfo kInfo{"bn_stats",
                                   0x0800,
                                   {Engine::kDve},
                                   "bn_stats",
                                   "per-partition count/mean/M2 of even and odd elements"};
  AccessPattern dst;
  AccessPattern data;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &BnStats::dst, FieldRole::kOutput, "[P, 6] statistics record"},
        FieldDesc{"data", &BnStats::data, FieldRole::kInput, "[P, F], F <= 512 (bn_stats_fmax)"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// Combines the (count, mean, M2) triples of one or more bn_stats records into dst = [mean,
/// variance] per partition (population variance M2 / count). Triples are merged left to right
/// in fp32 with the pairwise update of Chan et al.; triples with count 0 are skipped.
struct BnAggr {
  static constexpr InstrInfo kInfo{"bn_aggr",
                                   0x0801,
                                   {Engine::kDve},
                                   "bn_aggr",
                                   "combine bn_stats records into mean and variance"};
  AccessPattern dst;
  AccessPattern data;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &BnAggr::dst, FieldRole::kOutput, "[P, 2]: mean, variance"},
        FieldDesc{"data", &BnAggr::data, FieldRole::kInput,
                  "[P, 3n]: (count, mean, variance*count) triples from bn_stats"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// dst = the 8 largest values of each partition of src, in descending order (compared in fp32;
/// NaN ranks above +Inf).
struct Max8 {
  static constexpr InstrInfo kInfo{
      "max8", 0x0802, {Engine::kDve}, "max8", "top-8 values per partition, descending"};
  AccessPattern dst;
  AccessPattern src;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &Max8::dst, FieldRole::kOutput, "[P, 8]"},
        FieldDesc{"src", &Max8::src, FieldRole::kInput, "[P, F], 8 <= F <= 16384"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// dst[p, i] = flat index of the first occurrence of vals[p, i] in data[p, :] (fp32 equality).
/// vals are matched in order i = 0..7 and each data position is claimed once, so duplicate vals
/// get ascending positions; a value with no (unclaimed) match gives all ones (0xFFFF / 0xFFFFFFFF).
struct NcFindIndex8 {
  static constexpr InstrInfo kInfo{"nc_find_index8",
                                   0x0803,
                                   {Engine::kDve},
                                   "max8",
                                   "index of the first occurrence of each of 8 values"};
  AccessPattern dst;
  AccessPattern data;
  AccessPattern vals;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &NcFindIndex8::dst, FieldRole::kOutput, "[P, 8] uint16 or uint32"},
        FieldDesc{"data", &NcFindIndex8::data, FieldRole::kInput, "[P, F], 8 <= F <= 16384"},
        FieldDesc{"vals", &NcFindIndex8::vals, FieldRole::kInput, "[P, 8] values to find"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// dst = data with the first occurrence of each vals[p, i] replaced by imm. vals are processed in
/// reverse order i = 7..0 and each data position is replaced once, so duplicate vals pair with
/// descending positions; dst_idx (optional) receives each val's position, or all ones when it
/// has no match. Elements not replaced are copied bit for bit when dst and data share a dtype.
struct NcMatchReplace8 {
  static constexpr InstrInfo kInfo{"nc_match_replace8",
                                   0x0804,
                                   {Engine::kDve},
                                   "max8",
                                   "replace the first occurrence of each of 8 values with imm"};
  AccessPattern dst;
  AccessPattern data;
  AccessPattern vals;
  float imm = 0.0f;
  std::optional<AccessPattern> dstIdx;

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &NcMatchReplace8::dst, FieldRole::kOutput, "[P, F] replaced data"},
        FieldDesc{"data", &NcMatchReplace8::data, FieldRole::kInput, "[P, F], F <= 16384"},
        FieldDesc{"vals", &NcMatchReplace8::vals, FieldRole::kInput, "[P, 8] values to replace"},
        FieldDesc{"imm", &NcMatchReplace8::imm, FieldRole::kImmediate, "replacement value"},
        FieldDesc{"dst_idx", &NcMatchReplace8::dstIdx, FieldRole::kOutput,
                  "optional [P, 8] uint16 or uint32 matched positions"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// Cross-partition copy within 32-partition quadrants: dst partition q*32 + i (relative to dst's
/// first partition) receives src partition q*32 + shuffle_mask[i] (relative to src's), bit for
/// bit; mask entry 255 leaves the dst partition unmodified. In place (dst == src) is allowed.
struct NcStreamShuffle {
  static constexpr InstrInfo kInfo{"nc_stream_shuffle",
                                   0x0805,
                                   {Engine::kDve},
                                   "simple_stream",
                                   "permute/broadcast partitions within 32-partition quadrants"};
  AccessPattern dst;
  AccessPattern src;
  ShuffleMask shuffleMask = [] {
    ShuffleMask identity{};
    for (std::size_t i = 0; i < identity.size(); ++i) {
      identity[i] = static_cast<std::int64_t>(i);
    }
    return identity;
  }();

  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &NcStreamShuffle::dst, FieldRole::kOutput, "[Pd, F] destination"},
        FieldDesc{"src", &NcStreamShuffle::src, FieldRole::kInput, "[Ps, F] source, dst's dtype"},
        FieldDesc{"shuffle_mask", &NcStreamShuffle::shuffleMask, FieldRole::kImmediate,
                  "32 source partitions (0..31) per quadrant; 255 keeps the dst partition"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// The instructions declared in this header, in opcode order.
using VectorSpecialInstructions =
    TypeList<BnStats, BnAggr, Max8, NcFindIndex8, NcMatchReplace8, NcStreamShuffle>;

}  // namespace trn::isa
