// The enumerated immediates of the instruction set (ALU operators, activation functions,
// comparison and semaphore operators, ...). Each enum is described once by an EnumTable that
// lists every value with its program-text name; printing, parsing, binary encoding and the
// `trnsim isa show` reference are derived from those tables.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>

namespace trn::isa {

/// Binary ALU operators of the Vector/Scalar/GpSimd engines (nki.language ops). Arithmetic ones
/// compute in fp32; bitwise ones act on the raw integer bits of the input.
enum class AluOp : std::uint8_t {
  kAdd,
  kSubtract,
  kMultiply,
  kDivide,
  kMax,
  kMin,
  kPow,
  kEqual,
  kNotEqual,
  kGreater,
  kGreaterEqual,
  kLess,
  kLessEqual,
  kLogicalAnd,
  kLogicalOr,
  kLogicalXor,
  kAbsMax,
  kAbsMin,
  kBitwiseAnd,
  kBitwiseOr,
  kBitwiseXor,
  kShiftLeft,
  kShiftRight,
  kBypass,  ///< returns the first operand (the "no-op" second stage of tensor_scalar)
};

/// ScalarE activation functions (nki-reference §3).
enum class ActivationFunction : std::uint8_t {
  kCopy,
  kSquare,
  kSigmoid,
  kRelu,
  kPrelu,
  kGelu,
  kGeluDx,
  kGeluApproxTanh,
  kGeluApproxSigmoid,
  kGeluApproxSigmoidDx,
  kSilu,
  kSiluDx,
  kTanh,
  kSoftplus,
  kMish,
  kErf,
  kErfDx,
  kExp,
  kLog,
  kSin,
  kArctan,
  kSqrt,
  kRsqrt,
  kReciprocal,
  kSign,
  kAbs,
};

/// A collective operation over the ranks of a system run (the `collective` instruction, and the
/// fabric's algorithms, docs/collectives.md).
enum class CollectiveOp : std::uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kPermute,
  kAllToAllV,  ///< all-to-all with per-pair counts and displacements (a metadata tensor)
};

/// What an instruction does with its engine's per-partition accumulator registers (nki.isa
/// reduce_cmd), shared by the instructions of one engine that reduce across calls.
enum class ReduceCmd : std::uint8_t {
  kIdle,         ///< leave the registers alone
  kReset,        ///< set them to zero only
  kReduce,       ///< accumulate this instruction's reduction onto them
  kResetReduce,  ///< set them to zero, then accumulate
  kLoadReduce,   ///< load an initial value, then accumulate
};

/// Semaphore wait condition.
enum class WaitCompare : std::uint8_t { kGreaterEqual, kEqual };

/// Semaphore update applied when an instruction completes.
enum class SemaphoreUpdateOp : std::uint8_t { kAdd, kSubtract, kSet };

/// Every enum's table: `kEntries` pairs values with their text names; `kTypeName` names the enum
/// in documentation. Specialised below for each enum.
template <typename E>
struct EnumTable;

template <>
struct EnumTable<AluOp> {
  static constexpr std::string_view kTypeName = "alu_op";
  static constexpr std::array<std::pair<AluOp, std::string_view>, 24> kEntries = {{
      {AluOp::kAdd, "add"},
      {AluOp::kSubtract, "subtract"},
      {AluOp::kMultiply, "multiply"},
      {AluOp::kDivide, "divide"},
      {AluOp::kMax, "max"},
      {AluOp::kMin, "min"},
      {AluOp::kPow, "pow"},
      {AluOp::kEqual, "equal"},
      {AluOp::kNotEqual, "not_equal"},
      {AluOp::kGreater, "greater"},
      {AluOp::kGreaterEqual, "greater_equal"},
      {AluOp::kLess, "less"},
      {AluOp::kLessEqual, "less_equal"},
      {AluOp::kLogicalAnd, "logical_and"},
      {AluOp::kLogicalOr, "logical_or"},
      {AluOp::kLogicalXor, "logical_xor"},
      {AluOp::kAbsMax, "abs_max"},
      {AluOp::kAbsMin, "abs_min"},
      {AluOp::kBitwiseAnd, "bitwise_and"},
      {AluOp::kBitwiseOr, "bitwise_or"},
      {AluOp::kBitwiseXor, "bitwise_xor"},
      {AluOp::kShiftLeft, "left_shift"},
      {AluOp::kShiftRight, "right_shift"},
      {AluOp::kBypass, "bypass"},
  }};
};

template <>
struct EnumTable<ActivationFunction> {
  static constexpr std::string_view kTypeName = "activation_function";
  using F = ActivationFunction;
  static constexpr std::array<std::pair<F, std::string_view>, 26> kEntries = {{
      {F::kCopy, "copy"},
      {F::kSquare, "square"},
      {F::kSigmoid, "sigmoid"},
      {F::kRelu, "relu"},
      {F::kPrelu, "prelu"},
      {F::kGelu, "gelu"},
      {F::kGeluDx, "gelu_dx"},
      {F::kGeluApproxTanh, "gelu_apprx_tanh"},
      {F::kGeluApproxSigmoid, "gelu_apprx_sigmoid"},
      {F::kGeluApproxSigmoidDx, "gelu_apprx_sigmoid_dx"},
      {F::kSilu, "silu"},
      {F::kSiluDx, "silu_dx"},
      {F::kTanh, "tanh"},
      {F::kSoftplus, "softplus"},
      {F::kMish, "mish"},
      {F::kErf, "erf"},
      {F::kErfDx, "erf_dx"},
      {F::kExp, "exp"},
      {F::kLog, "log"},
      {F::kSin, "sin"},
      {F::kArctan, "arctan"},
      {F::kSqrt, "sqrt"},
      {F::kRsqrt, "rsqrt"},
      {F::kReciprocal, "reciprocal"},
      {F::kSign, "sign"},
      {F::kAbs, "abs"},
  }};
};

template <>
struct EnumTable<ReduceCmd> {
  static constexpr std::string_view kTypeName = "reduce_cmd";
  static constexpr std::array<std::pair<ReduceCmd, std::string_view>, 5> kEntries = {{
      {ReduceCmd::kIdle, "idle"},
      {ReduceCmd::kReset, "reset"},
      {ReduceCmd::kReduce, "reduce"},
      {ReduceCmd::kResetReduce, "reset_reduce"},
      {ReduceCmd::kLoadReduce, "load_reduce"},
  }};
};

template <>
struct EnumTable<CollectiveOp> {
  static constexpr std::string_view kTypeName = "collective_op";
  static constexpr std::array<std::pair<CollectiveOp, std::string_view>, 7> kEntries = {{
      {CollectiveOp::kAllReduce, "all_reduce"},
      {CollectiveOp::kAllGather, "all_gather"},
      {CollectiveOp::kReduceScatter, "reduce_scatter"},
      {CollectiveOp::kAllToAll, "all_to_all"},
      {CollectiveOp::kBroadcast, "broadcast"},
      {CollectiveOp::kPermute, "permute"},
      {CollectiveOp::kAllToAllV, "all_to_allv"},
  }};
};

template <>
struct EnumTable<WaitCompare> {
  static constexpr std::string_view kTypeName = "wait_compare";
  static constexpr std::array<std::pair<WaitCompare, std::string_view>, 2> kEntries = {{
      {WaitCompare::kGreaterEqual, ">="},
      {WaitCompare::kEqual, "=="},
  }};
};

template <>
struct EnumTable<SemaphoreUpdateOp> {
  static constexpr std::string_view kTypeName = "semaphore_update";
  static constexpr std::array<std::pair<SemaphoreUpdateOp, std::string_view>, 3> kEntries = {{
      {SemaphoreUpdateOp::kAdd, "+="},
      {SemaphoreUpdateOp::kSubtract, "-="},
      {SemaphoreUpdateOp::kSet, "="},
  }};
};

/// Text name of an enum value.
template <typename E>
constexpr std::string_view enumName(E value) {
  for (const auto& [v, name] : EnumTable<E>::kEntries) {
    if (v == value) {
      return name;
    }
  }
  return "?";
}

/// Looks up an enum value by its text name.
template <typename E>
constexpr bool enumFromName(std::string_view name, E& out) {
  for (const auto& [v, n] : EnumTable<E>::kEntries) {
    if (n == name) {
      out = v;
      return true;
    }
  }
  return false;
}

/// True if E has an EnumTable.
template <typename E>
concept TabledEnum = requires {
  EnumTable<E>::kEntries;
};

}  // namespace trn::isa
