#include "trn/isa/instrs/vector_reduce.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "trn/isa/alu.h"
#include "trn/isa/verifier.h"
#include "vector_common.h"

namespace trn::isa {

using vector_detail::applyStage;
using vector_detail::perPartitionValues;
using vector_detail::requireArithmetic;
using vector_detail::requireInteger;
using vector_detail::requireNotBothPsum;
using vector_detail::requireOp;

namespace {

constexpr std::initializer_list<AluOp> kAccumulatingOps = {AluOp::kAdd, AluOp::kSubtract,
                                                           AluOp::kMultiply, AluOp::kMax,
                                                           AluOp::kMin};

constexpr std::initializer_list<AluOp> kComparisons = {
    AluOp::kEqual, AluOp::kLess, AluOp::kLessEqual, AluOp::kGreater, AluOp::kGreaterEqual};

/// The value a reset puts in the accumulators for reduction `op`: its identity.
float reduceIdentity(AluOp op) {
  switch (op) {
    case AluOp::kMultiply: return 1.0f;
    case AluOp::kMax: return -std::numeric_limits<float>::infinity();
    case AluOp::kMin: return std::numeric_limits<float>::infinity();
    default: return 0.0f;  // add, subtract
  }
}

/// The accumulator registers of the lanes processing `data`'s partitions.
std::span<float> lanesOf(ExecContext& ctx, const AccessPattern& data) {
  return ctx.accumulators().subspan(static_cast<std::size_t>(data.partitionStart),
                                    static_cast<std::size_t>(data.partitionCount));
}

/// Prepares `lanes` for reduce_cmd `cmd` of reduction `op` (`init`: the load_reduce values) and
/// returns whether the instruction's values are then folded into them.
bool startReduce(ReduceCmd cmd, AluOp op, std::span<float> lanes, const std::vector<float>& init) {
  switch (cmd) {
    case ReduceCmd::kIdle: return false;
    case ReduceCmd::kReset: std::fill(lanes.begin(), lanes.end(), reduceIdentity(op)); return false;
    case ReduceCmd::kReduce: return true;
    case ReduceCmd::kResetReduce:
      std::fill(lanes.begin(), lanes.end(), reduceIdentity(op));
      return true;
    case ReduceCmd::kLoadReduce: std::copy(init.begin(), init.end(), lanes.begin()); return true;
  }
  return false;
}

/// `cmd` is one of `allowed`.
Status requireReduceCmd(ReduceCmd cmd, std::initializer_list<ReduceCmd> allowed) {
  for (const ReduceCmd a : allowed) {
    if (a == cmd) {
      return {};
    }
  }
  std::vector<std::string_view> names;
  for (const ReduceCmd a : allowed) {
    names.push_back(enumName(a));
  }
  return failedPrecondition(fmt::format("operand 'reduce_cmd': {} is not supported by this "
                                        "instruction (allowed: {})",
                                        enumName(cmd), fmt::join(names, ", ")));
}

/// Rules shared by range_select and select_reduce: a max reduction, no load_reduce (there is no
/// initial value), reduce_res a [P, 1] tile that only makes sense when the accumulators change.
Status verifyMaxReduce(AluOp reduceOp, ReduceCmd reduceCmd,
                       const std::optional<AccessPattern>& reduceRes, const AccessPattern& data) {
  TRN_RETURN_IF_ERROR(requireOp("reduce_op", reduceOp, {AluOp::kMax}));
  TRN_RETURN_IF_ERROR(requireReduceCmd(reduceCmd, {ReduceCmd::kIdle, ReduceCmd::kReset,
                                                   ReduceCmd::kReduce, ReduceCmd::kResetReduce}));
  if (reduceRes) {
    TRN_RETURN_IF_ERROR(requirePerPartitionScalar("reduce_res", *reduceRes, data));
    if (reduceCmd == ReduceCmd::kIdle) {
      return failedPrecondition("operand 'reduce_res' is given but reduce_cmd is idle, which "
                                "leaves the accumulators unchanged; use reset_reduce or reduce");
    }
  }
  return {};
}

/// Folds the max of each partition's fp32 `values` into the accumulators under `cmd` and writes
/// them to `reduceRes` if given.
void maxReduce(ExecContext& ctx, ReduceCmd cmd, const std::optional<AccessPattern>& reduceRes,
               const AccessPattern& data, const std::vector<float>& values) {
  const std::span<float> lanes = lanesOf(ctx, data);
  if (startReduce(cmd, AluOp::kMax, lanes, {})) {
    const auto free = static_cast<std::size_t>(data.freeSize());
    for (std::size_t p = 0; p < lanes.size(); ++p) {
      for (std::size_t f = 0; f < free; ++f) {
        lanes[p] = applyAlu(AluOp::kMax, lanes[p], values[p * free + f]);
      }
    }
  }
  if (reduceRes) {
    ctx.writeFloats(*reduceRes, lanes);
  }
}

}  // namespace

Status TensorReduce::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(requireOp("op", op,
                                {AluOp::kAdd, AluOp::kSubtract, AluOp::kMultiply, AluOp::kMax,
                                 AluOp::kMin, AluOp::kBitwiseAnd, AluOp::kBitwiseOr,
                                 AluOp::kBitwiseXor, AluOp::kLogicalAnd, AluOp::kLogicalOr,
                                 AluOp::kLogicalXor}));
  if (axis < 1 || axis > data.numDims) {
    return failedPrecondition(fmt::format("operand 'axis': {} is outside 1..{}, the free "
                                          "dimensions of 'data'",
                                          axis, data.numDims));
  }
  if (isBitwise(op)) {
    TRN_RETURN_IF_ERROR(requireInteger("data", data));
    TRN_RETURN_IF_ERROR(requireInteger("dst", dst));
    if (negate) {
      return failedPrecondition(fmt::format("operand 'negate': applies only to arithmetic "
                                            "reductions, not {}",
                                            enumName(op)));
    }
  }
  std::int64_t kept = 1;
  for (std::int64_t d = 0; d + 1 < axis; ++d) {
    kept *= data.dims[static_cast<std::size_t>(d)].count;
  }
  if (dst.partitionCount != data.partitionCount || dst.freeSize() != kept) {
    return failedPrecondition(fmt::format("operand 'dst': [{} partitions x {}] must be [{} x {}] "
                                          "('data' reduced from axis {})",
                                          dst.partitionCount, dst.freeSize(),
                                          data.partitionCount, kept, axis));
  }
  TRN_RETURN_IF_ERROR(requireComputeTileSize("dst", dst, ctx.limits));
  return requireComputeTileSize("data", data, ctx.limits);
}

Status TensorReduce::execute(ExecContext& ctx) const {
  std::vector<float> values(static_cast<std::size_t>(data.elementCount()));
  ctx.readFloats(data, values);
  const auto outputs = static_cast<std::size_t>(dst.elementCount());
  const std::size_t block = values.size() / outputs;  // reduced elements per output
  std::vector<float> results(outputs);
  for (std::size_t k = 0; k < outputs; ++k) {
    const float* x = values.data() + k * block;
    float acc = x[0];
    for (std::size_t j = 1; j < block; ++j) {
      acc = applyAlu(op, acc, x[j]);
    }
    results[k] = negate ? -acc : acc;
  }
  ctx.writeFloats(dst, results);
  return {};
}

Status TensorScalarReduce::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(requireSameShape("dst", dst, "data", data));
  TRN_RETURN_IF_ERROR(requirePerPartitionScalar("operand0", operand0, data));
  TRN_RETURN_IF_ERROR(requirePerPartitionScalar("reduce_res", reduceRes, data));
  TRN_RETURN_IF_ERROR(requirePerPartitionScalar("reduce_init", reduceInit, data));
  TRN_RETURN_IF_ERROR(requireArithmetic("op0", op0));
  TRN_RETURN_IF_ERROR(requireOp("reduce_op", reduceOp,
                                {AluOp::kAdd, AluOp::kMultiply, AluOp::kMax, AluOp::kMin}));
  TRN_RETURN_IF_ERROR(requireReduceCmd(
      reduceCmd, {ReduceCmd::kResetReduce, ReduceCmd::kReduce, ReduceCmd::kLoadReduce}));
  TRN_RETURN_IF_ERROR(requireComputeTileSize("dst", dst, ctx.limits));
  return requireComputeTileSize("data", data, ctx.limits);
}

Status TensorScalarReduce::execute(ExecContext& ctx) const {
  const auto partitions = static_cast<std::size_t>(data.partitionCount);
  const auto free = static_cast<std::size_t>(data.freeSize());
  std::vector<float> values(partitions * free);
  ctx.readFloats(data, values);
  const std::vector<float> s0 = perPartitionValues(ctx, operand0, data.partitionCount);
  const std::vector<float> init = perPartitionValues(ctx, reduceInit, data.partitionCount);
  const std::span<float> lanes = lanesOf(ctx, data);
  startReduce(reduceCmd, reduceOp, lanes, init);
  for (std::size_t p = 0; p < partitions; ++p) {
    for (std::size_t f = 0; f < free; ++f) {
      float& x = values[p * free + f];
      x = applyStage(op0, x, s0[p], reverse0);
      lanes[p] = applyAlu(reduceOp, lanes[p], x);
    }
  }
  ctx.writeFloats(dst, values);
  ctx.writeFloats(reduceRes, lanes);
  return {};
}

Status TensorTensorScan::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(requireSameShape("data0", data0, "data1", data1));
  TRN_RETURN_IF_ERROR(requireSameShape("dst", dst, "data0", data0));
  TRN_RETURN_IF_ERROR(requirePerPartitionScalar("initial", initial, data0));
  TRN_RETURN_IF_ERROR(requireArithmetic("op0", op0));
  TRN_RETURN_IF_ERROR(requireArithmetic("op1", op1));
  TRN_RETURN_IF_ERROR(requireNotBothPsum("data0", data0, "data1", data1));
  for (const auto& [name, ap] : {std::pair{"dst", &dst}, {"data0", &data0}, {"data1", &data1}}) {
    TRN_RETURN_IF_ERROR(requireComputeTileSize(name, *ap, ctx.limits));
  }
  return {};
}

Status TensorTensorScan::execute(ExecContext& ctx) const {
  const auto partitions = static_cast<std::size_t>(data0.partitionCount);
  const auto free = static_cast<std::size_t>(data0.freeSize());
  std::vector<float> a(partitions * free);
  std::vector<float> b(partitions * free);
  ctx.readFloats(data0, a);
  ctx.readFloats(data1, b);
  const std::vector<float> start = perPartitionValues(ctx, initial, data0.partitionCount);
  for (std::size_t p = 0; p < partitions; ++p) {
    float state = start[p];
    for (std::size_t f = 0; f < free; ++f) {
      const std::size_t i = p * free + f;
      const float first = reverse0 ? applyAlu(op0, state, a[i]) : applyAlu(op0, a[i], state);
      state = reverse1 ? applyAlu(op1, b[i], first) : applyAlu(op1, first, b[i]);
      a[i] = state;
    }
  }
  ctx.writeFloats(dst, a);
  return {};
}

Status TensorScalarCumulative::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(requireSameShape("dst", dst, "src", src));
  TRN_RETURN_IF_ERROR(requirePerPartitionScalar("imm0", imm0, src));
  TRN_RETURN_IF_ERROR(requirePerPartitionScalar("imm1", imm1, src));
  TRN_RETURN_IF_ERROR(requireArithmetic("op0", op0));
  TRN_RETURN_IF_ERROR(requireOp("op1", op1, kAccumulatingOps));
  TRN_RETURN_IF_ERROR(requireReduceCmd(
      reduceCmd, {ReduceCmd::kResetReduce, ReduceCmd::kReduce, ReduceCmd::kLoadReduce}));
  for (const auto& [name, ap] : {std::pair{"dst", &dst}, {"src", &src}}) {
    TRN_RETURN_IF_ERROR(requireDType(name, *ap,
                                     {DType::kFp32, DType::kBf16, DType::kFp16, DType::kFp8E4m3,
                                      DType::kFp8E5m2, DType::kFp8E3m4, DType::kFp8E4m3Fn,
                                      DType::kInt8, DType::kInt16, DType::kUint8,
                                      DType::kUint16}));
    TRN_RETURN_IF_ERROR(requireComputeTileSize(name, *ap, ctx.limits));
  }
  return {};
}

Status TensorScalarCumulative::execute(ExecContext& ctx) const {
  const auto partitions = static_cast<std::size_t>(src.partitionCount);
  const auto free = static_cast<std::size_t>(src.freeSize());
  std::vector<float> values(partitions * free);
  ctx.readFloats(src, values);
  const std::vector<float> s0 = perPartitionValues(ctx, imm0, src.partitionCount);
  const std::vector<float> init = perPartitionValues(ctx, imm1, src.partitionCount);
  const std::span<float> lanes = lanesOf(ctx, src);
  startReduce(reduceCmd, op1, lanes, init);
  for (std::size_t p = 0; p < partitions; ++p) {
    for (std::size_t f = 0; f < free; ++f) {
      float& x = values[p * free + f];
      lanes[p] = applyAlu(op1, applyStage(op0, x, s0[p], reverse0), lanes[p]);
      x = lanes[p];
    }
  }
  ctx.writeFloats(dst, values);
  return {};
}

Status RangeSelect::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(requireSameShape("dst", dst, "on_true_tile", onTrueTile));
  TRN_RETURN_IF_ERROR(requireFloat("on_true_tile", onTrueTile));
  TRN_RETURN_IF_ERROR(requireOp("comp_op0", compOp0, kComparisons));
  TRN_RETURN_IF_ERROR(requireOp("comp_op1", compOp1, kComparisons));
  for (const auto& [name, ap] : {std::pair{"bound0", &bound0}, {"bound1", &bound1}}) {
    TRN_RETURN_IF_ERROR(requirePerPartitionScalar(name, *ap, onTrueTile));
    TRN_RETURN_IF_ERROR(requireDType(name, *ap, {DType::kFp32}));
  }
  TRN_RETURN_IF_ERROR(verifyMaxReduce(reduceOp, reduceCmd, reduceRes, onTrueTile));
  if (onFalseValue != -FLT_MAX) {
    return failedPrecondition(fmt::format("operand 'on_false_value': {} is not supported; the "
                                          "hardware fills with FP32_MIN ({})",
                                          onFalseValue, -FLT_MAX));
  }
  constexpr std::int64_t kExactIndex = std::int64_t{1} << 24;
  const std::int64_t last = rangeStart + onTrueTile.freeSize() - 1;
  if (rangeStart < -kExactIndex || last > kExactIndex) {
    return failedPrecondition(fmt::format("operand 'range_start': indices {}..{} are not all "
                                          "exact in fp32 (|index| <= 2^24)",
                                          rangeStart, last));
  }
  TRN_RETURN_IF_ERROR(requireComputeTileSize("dst", dst, ctx.limits));
  return requireComputeTileSize("on_true_tile", onTrueTile, ctx.limits);
}

Status RangeSelect::execute(ExecContext& ctx) const {
  const auto partitions = static_cast<std::size_t>(onTrueTile.partitionCount);
  const auto free = static_cast<std::size_t>(onTrueTile.freeSize());
  std::vector<float> values(partitions * free);
  ctx.readFloats(onTrueTile, values);
  const std::vector<float> lower = perPartitionValues(ctx, bound0, onTrueTile.partitionCount);
  const std::vector<float> upper = perPartitionValues(ctx, bound1, onTrueTile.partitionCount);
  for (std::size_t p = 0; p < partitions; ++p) {
    for (std::size_t f = 0; f < free; ++f) {
      const auto index = static_cast<float>(rangeStart + static_cast<std::int64_t>(f));
      const bool inside = applyAlu(compOp0, index, lower[p]) != 0.0f &&
                          applyAlu(compOp1, index, upper[p]) != 0.0f;
      if (!inside) {
        values[p * free + f] = onFalseValue;
      }
    }
  }
  ctx.writeFloats(dst, values);
  maxReduce(ctx, reduceCmd, reduceRes, onTrueTile, values);
  return {};
}

Status SelectReduce::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(requireSameShape("dst", dst, "on_true", onTrue));
  TRN_RETURN_IF_ERROR(requireSameShape("predicate", predicate, "on_true", onTrue));
  TRN_RETURN_IF_ERROR(requireDType(
      "predicate", predicate, {DType::kInt8, DType::kUint8, DType::kInt16, DType::kUint16}));
  if (onTrue.dtype == DType::kTf32 || onTrue.dtype == DType::kInt32 ||
      onTrue.dtype == DType::kUint32) {
    return failedPrecondition(fmt::format("operand 'on_true': dtype {} is not allowed (any type "
                                          "but tf32, int32 and uint32)",
                                          dtypeName(onTrue.dtype)));
  }
  TRN_RETURN_IF_ERROR(requirePerPartitionScalar("on_false", onFalse, onTrue));
  TRN_RETURN_IF_ERROR(requireNotBothPsum("on_true", onTrue, "predicate", predicate));
  TRN_RETURN_IF_ERROR(verifyMaxReduce(reduceOp, reduceCmd, reduceRes, onTrue));
  if (reduceRes) {
    TRN_RETURN_IF_ERROR(requireFloat("reduce_res", *reduceRes));
  }
  for (const auto& [name, ap] :
       {std::pair{"dst", &dst}, {"on_true", &onTrue}, {"predicate", &predicate}}) {
    TRN_RETURN_IF_ERROR(requireComputeTileSize(name, *ap, ctx.limits));
  }
  return {};
}

Status SelectReduce::execute(ExecContext& ctx) const {
  const auto partitions = static_cast<std::size_t>(onTrue.partitionCount);
  const auto free = static_cast<std::size_t>(onTrue.freeSize());
  std::vector<float> values(partitions * free);
  std::vector<float> mask(partitions * free);
  ctx.readFloats(onTrue, values);
  ctx.readFloats(predicate, mask);
  const std::vector<float> otherwise = perPartitionValues(ctx, onFalse, onTrue.partitionCount);
  for (std::size_t p = 0; p < partitions; ++p) {
    for (std::size_t f = 0; f < free; ++f) {
      const std::size_t i = p * free + f;
      if ((mask[i] != 0.0f) == reversePred) {
        values[i] = otherwise[p];
      }
    }
  }
  ctx.writeFloats(dst, values);
  maxReduce(ctx, reduceCmd, reduceRes, onTrue, values);
  return {};
}

}  // namespace trn::isa
