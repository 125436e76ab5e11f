#include "trn/isa/instrs/scalar_engine.h"

#include <vector>

#include "trn/isa/alu.h"
#include "trn/isa/verifier.h"

namespace trn::isa {

namespace {

/// One value per partition: the immediate repeated, or the [P, 1] tensor's values.
std::vector<float> perPartition(ExecContext& ctx, const ScalarOperand& s, std::int64_t partitions) {
  std::vector<float> values(static_cast<std::size_t>(partitions));
  if (const float* f = std::get_if<float>(&s)) {
    std::fill(values.begin(), values.end(), *f);
  } else {
    ctx.readFloats(std::get<AccessPattern>(s), values);
  }
  return values;
}

}  // namespace

Status Activation::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(requireSameShape("dst", dst, "data", data));
  TRN_RETURN_IF_ERROR(requirePerPartitionScalar("scale", scale, data));
  TRN_RETURN_IF_ERROR(requirePerPartitionScalar("bias", bias, data));
  TRN_RETURN_IF_ERROR(requireComputeTileSize("dst", dst, ctx.limits));
  return requireComputeTileSize("data", data, ctx.limits);
}

Status Activation::execute(ExecContext& ctx) const {
  const auto partitions = static_cast<std::size_t>(data.partitionCount);
  const auto free = static_cast<std::size_t>(data.freeSize());
  std::vector<float> values(partitions * free);
  ctx.readFloats(data, values);
  const std::vector<float> scales = perPartition(ctx, scale, data.partitionCount);
  const std::vector<float> biases = perPartition(ctx, bias, data.partitionCount);
  for (std::size_t p = 0; p < partitions; ++p) {
    for (std::size_t f = 0; f < free; ++f) {
      float& x = values[p * free + f];
      x = applyActivation(function, x * scales[p] + biases[p]);
    }
  }
  ctx.writeFloats(dst, values);
  return {};
}

}  // namespace trn::isa
