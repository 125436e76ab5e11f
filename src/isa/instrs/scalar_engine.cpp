#include "trn/isa/instrs/scalar_engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "trn/isa/alu.h"
#include "trn/isa/verifier.h"
#include "vector_common.h"

namespace trn::isa {

using vector_detail::perPartitionValues;

namespace {

Status operandError(std::string_view operand, std::string_view what) {
  return failedPrecondition(fmt::format("operand '{}': {}", operand, what));
}

}  // namespace

Status Activation::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(requireSameShape("dst", dst, "data", data));
  TRN_RETURN_IF_ERROR(requirePerPartitionScalar("scale", scale, data));
  TRN_RETURN_IF_ERROR(requirePerPartitionScalar("bias", bias, data));
  TRN_RETURN_IF_ERROR(requireComputeTileSize("dst", dst, ctx.limits));
  TRN_RETURN_IF_ERROR(requireComputeTileSize("data", data, ctx.limits));
  if (reduceOp != AluOp::kAdd) {
    return operandError("reduce_op", fmt::format("{} is not supported; the Scalar engine's "
                                                 "accumulator registers only add",
                                                 enumName(reduceOp)));
  }
  if (reduceCmd == ReduceCmd::kLoadReduce) {
    return operandError("reduce_cmd", "load_reduce needs an initial value, which activation "
                                      "does not take (use reset_reduce or reduce)");
  }
  if (reduceRes) {
    TRN_RETURN_IF_ERROR(requirePerPartitionScalar("reduce_res", ScalarOperand{*reduceRes}, data));
  }
  return {};
}

Status Activation::execute(ExecContext& ctx) const {
  const auto partitions = static_cast<std::size_t>(data.partitionCount);
  const auto free = static_cast<std::size_t>(data.freeSize());
  const std::span<float> values = ctx.scratchFloats(0, partitions * free);
  ctx.readFloats(data, values);
  const std::vector<float> scales = perPartitionValues(ctx, scale, data.partitionCount);
  const std::vector<float> biases = perPartitionValues(ctx, bias, data.partitionCount);
  for (std::size_t p = 0; p < partitions; ++p) {
    const std::span<float> row = values.subspan(p * free, free);
    applyActivationRow(function, row, row, scales[p], biases[p]);
  }
  if (reduceCmd != ReduceCmd::kIdle || reduceRes) {
    const std::span<float> registers =
        ctx.accumulators().subspan(static_cast<std::size_t>(data.partitionStart), partitions);
    for (std::size_t p = 0; p < partitions; ++p) {
      float& reg = registers[p];
      if (reduceCmd == ReduceCmd::kReset || reduceCmd == ReduceCmd::kResetReduce) {
        reg = 0.0f;
      }
      if (reduceCmd == ReduceCmd::kReduce || reduceCmd == ReduceCmd::kResetReduce) {
        float sum = 0.0f;
        for (std::size_t f = 0; f < free; ++f) {
          sum += values[p * free + f];
        }
        reg += sum;
      }
    }
  }
  ctx.writeFloats(dst, values);
  if (reduceRes) {
    ctx.writeFloats(*reduceRes, ctx.accumulators().subspan(
                                    static_cast<std::size_t>(data.partitionStart), partitions));
  }
  return {};
}

}  // namespace trn::isa
