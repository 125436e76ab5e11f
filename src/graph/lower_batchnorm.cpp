// The lowering of an inference-mode BatchNormalization that the folding pass could not fold into
// a Conv (fold_batchnorm.h): channels on the partitions, each channel's scale
// s = scale / sqrt(var + epsilon) and shift beta - mean * s computed on the device as [C, 1]
// columns, then y = x * s + shift over each channel's positions in one vector-engine
// instruction per tile (a per-partition multiply and add).
#include <fmt/format.h>

#include <algorithm>

#include "lower_window.h"
#include "lowering_context.h"
#include "trn/kernel/nisa.h"
#include "trn/kernel/nl.h"

namespace trn::graph::detail {
namespace {

namespace nl = kernel::nl;
using isa::AluOp;
using kernel::Tensor;

/// Elements per partition of one tile.
constexpr std::int64_t kColumns = 8192;

/// Channels [c0, c0 + cs) of the per-channel input i, as a [cs, 1] column.
Tensor channelColumn(const LoweringContext& ctx, std::size_t i, std::int64_t c0, std::int64_t cs) {
  return nl::load(hbmView(ctx.input(i).flat, c0, 1, cs, {isa::Dim{1, 1}}));
}

void batchNormalization(LoweringContext& ctx) {
  const Sizes x = ctx.inputSizes(0);
  const std::int64_t batch = x[0];
  const std::int64_t channels = x[1];
  const std::int64_t size = elementCount(x, 2, x.size());
  const float eps = ctx.node().floatAttribute("epsilon").value_or(1e-5f);
  const DType dtype = ctx.outputDType(0);
  const DeviceValue& in = ctx.input(0);
  const DeviceValue out = ctx.declareOutput(0);
  for (std::int64_t c0 = 0; c0 < channels; c0 += kPartitions) {
    const std::int64_t cs = std::min(kPartitions, channels - c0);
    const Tensor scale = nl::multiply(
        channelColumn(ctx, 1, c0, cs),
        nl::rsqrt(nl::add(channelColumn(ctx, 4, c0, cs), eps, DType::kFp32)), DType::kFp32);
    const Tensor shift = nl::subtract(
        channelColumn(ctx, 2, c0, cs),
        nl::multiply(channelColumn(ctx, 3, c0, cs), scale, DType::kFp32), DType::kFp32);
    for (std::int64_t n = 0; n < batch; ++n) {
      for (std::int64_t f0 = 0; f0 < size; f0 += kColumns) {
        if (!ctx.takeUnit()) {
          continue;
        }
        const std::int64_t fs = std::min(kColumns, size - f0);
        const std::int64_t offset = (n * channels + c0) * size + f0;
        const Tensor tile = nl::load(hbmView(in.flat, offset, size, cs, {isa::Dim{1, fs}}));
        const Tensor y = ctx.kernel().sbuf({cs, fs}, dtype, "batchnorm");
        kernel::nisa::tensorScalar(y, tile, AluOp::kMultiply, scale, false, AluOp::kAdd, shift);
        nl::store(hbmView(out.flat, offset, size, cs, {isa::Dim{1, fs}}), y);
      }
    }
  }
}

}  // namespace

void addBatchNormLowerings(OpLowerings& table) {
  table["BatchNormalization"] = {batchNormalization, "per-channel scale and shift"};
}

}  // namespace trn::graph::detail
