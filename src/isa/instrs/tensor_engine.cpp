#include "trn/isa/instrs/tensor_engine.h"

#include <fmt/format.h>

#include <vector>

#include "trn/isa/matmul_kernel.h"
#include "trn/isa/verifier.h"

namespace trn::isa {
namespace {

/// Rows of the contraction: K partitions, or 2K for double-row fp8 (operands [K, 2, F]).
std::int64_t contractionRows(const NcMatmul& mm) {
  return mm.perfMode == MatmulPerfMode::kDoubleRow ? 2 * mm.stationary.partitionCount
                                                   : mm.stationary.partitionCount;
}

/// Reads an operand as a (contraction x free) fp32 matrix. A double-row operand [K, 2, F] is
/// read partition-major, so element (p, h, f) lands in row 2p + h of a (2K x F) matrix: the two
/// multiplies of PE row p accumulate in the order h = 0, 1 (docs/isa.md).
std::vector<float> readOperand(ExecContext& ctx, const AccessPattern& ap) {
  std::vector<float> values(static_cast<std::size_t>(ap.elementCount()));
  ctx.readFloats(ap, values);
  return values;
}

}  // namespace

Status NcMatmul::verify(const VerifyContext& ctx) const {
  const CoreLimits& limits = ctx.limits;
  const bool doubleRow = perfMode == MatmulPerfMode::kDoubleRow;
  TRN_RETURN_IF_ERROR(requireDType("dst", dst, {DType::kFp32}));
  for (const auto& [name, ap] : {std::pair{"stationary", &stationary}, {"moving", &moving}}) {
    TRN_RETURN_IF_ERROR(requireFloat(name, *ap));
    if (ap->dtype == DType::kFp8E4m3Fn) {
      return failedPrecondition(fmt::format(
          "operand '{}': fp8_e4m3fn matmul operands need NC-v4 (Trainium3) MX support", name));
    }
  }
  if ((stationary.dtype == DType::kFp32) != (moving.dtype == DType::kFp32)) {
    return failedPrecondition(fmt::format("an fp32 matmul needs both operands in fp32 (stationary "
                                          "is {}, moving is {})",
                                          dtypeName(stationary.dtype), dtypeName(moving.dtype)));
  }
  if (stationary.partitionCount != moving.partitionCount) {
    return failedPrecondition(fmt::format("contraction mismatch: stationary has {} partitions, "
                                          "moving {}",
                                          stationary.partitionCount, moving.partitionCount));
  }
  if (stationary.partitionCount > limits.matmulMaxContraction) {
    return failedPrecondition(fmt::format("contraction K = {} exceeds {} (K <= {} partitions)",
                                          stationary.partitionCount, limits.matmulMaxContraction,
                                          limits.matmulMaxContraction));
  }
  std::int64_t m = stationary.freeSize();
  std::int64_t n = moving.freeSize();
  if (doubleRow) {
    if (!limits.fp8DoubleRow) {
      return failedPrecondition("perf_mode=double_row is not available on this chip");
    }
    for (const auto& [name, ap] : {std::pair{"stationary", &stationary}, {"moving", &moving}}) {
      if (ap->dtype != DType::kFp8E4m3 && ap->dtype != DType::kFp8E5m2) {
        return failedPrecondition(fmt::format("operand '{}': double_row needs fp8_e4m3 or "
                                              "fp8_e5m2, not {}",
                                              name, dtypeName(ap->dtype)));
      }
      if (ap->numDims < 2 || ap->dims[0].count != 2) {
        return failedPrecondition(fmt::format("operand '{}': double_row operands are laid out "
                                              "[K, 2, F]; the outermost free dimension must have "
                                              "count 2",
                                              name));
      }
    }
    m /= 2;
    n /= 2;
  }
  if (m > limits.matmulMaxStationaryFree) {
    return failedPrecondition(fmt::format("stationary free size M = {} exceeds {}", m,
                                          limits.matmulMaxStationaryFree));
  }
  if (n > limits.matmulMaxMovingFree) {
    return failedPrecondition(fmt::format("moving free size N = {} exceeds {} (one PSUM bank of "
                                          "fp32)",
                                          n, limits.matmulMaxMovingFree));
  }
  if (dst.partitionCount != m || dst.freeSize() != n) {
    return failedPrecondition(fmt::format("dst is [{}, {}] but stationary^T @ moving is [{}, {}]",
                                          dst.partitionCount, dst.freeSize(), m, n));
  }
  const AccessPattern::ByteRange range = dst.byteRange();
  if (range.begin / limits.psumBankBytes != (range.end - 1) / limits.psumBankBytes) {
    return failedPrecondition(fmt::format("dst bytes [{}, {}) cross a {}-byte PSUM bank boundary; "
                                          "a matmul writes within one bank",
                                          range.begin, range.end, limits.psumBankBytes));
  }
  return {};
}

Status NcMatmul::execute(ExecContext& ctx) const {
  const auto k = static_cast<std::size_t>(contractionRows(*this));
  const auto m = static_cast<std::size_t>(dst.partitionCount);
  const auto n = static_cast<std::size_t>(dst.freeSize());
  const std::vector<float> s = readOperand(ctx, stationary);
  const std::vector<float> v = readOperand(ctx, moving);
  std::vector<float> out(m * n);
  if (accumulate) {
    ctx.readFloats(dst, out);
  }
  matmulTile({s.data(), k, m, m}, {v.data(), k, n, n}, {out.data(), m, n, n},
             accumulate ? PsumWrite::kAccumulate : PsumWrite::kOverwrite);
  ctx.writeFloats(dst, out);
  return {};
}

}  // namespace trn::isa
