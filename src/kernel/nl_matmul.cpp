// nl-level tensor-engine functions (nl.h): matmul, transpose and the partition broadcast of a row.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "nl_util.h"
#include "trn/kernel/nisa.h"
#include "trn/kernel/nl.h"

namespace trn::kernel::nl {
namespace {

/// x [M, K] transposed to a new SBUF tile [K, M] of x's dtype: tensor-engine transpose into PSUM,
/// then a copy back.
Tensor transposeToSbuf(const Tensor& x, Loc loc) {
  Kernel& k = x.kernel();
  Tensor ps =
      k.psum({x.freeSize(), x.partitions()}, x.dtype(), "matmul_xT_psum", std::nullopt, loc);
  nisa::ncTranspose(ps, x, std::nullopt, loc);
  Tensor out = detail::newTile(x, ps.shape(), x.dtype(), "matmul_xT", loc);
  nisa::tensorCopy(out, ps, std::nullopt, loc);
  return out;
}

/// Checks the operands of a matmul; returns (M, K, N).
std::array<std::int64_t, 3> checkMatmul(std::string_view fn, const Tensor& x, const Tensor& y,
                                        bool transposeX, Loc loc) {
  detail::requireOnChip(x, fn, "x", loc);
  detail::requireOnChip(y, fn, "y", loc);
  const isa::CoreLimits& limits = x.kernel().limits();
  const std::int64_t k = transposeX ? x.partitions() : x.freeSize();
  const std::int64_t m = transposeX ? x.freeSize() : x.partitions();
  const std::int64_t n = y.freeSize();
  const std::string operands = fmt::format("x ({}{}) and y ({})", x.describe(),
                                           transposeX ? ", [K, M]" : ", [M, K]", y.describe());
  if (k != y.partitions()) {
    detail::fail(x, fn,
                 fmt::format("contraction sizes differ: {} has K = {}, y has K = {} partitions",
                             operands, k, y.partitions()),
                 loc);
  }
  if (k > limits.matmulMaxContraction || m > limits.matmulMaxStationaryFree ||
      n > limits.matmulMaxMovingFree) {
    detail::fail(x, fn,
                 fmt::format("{}: K = {}, M = {}, N = {} exceed the tensor engine's limits "
                             "K <= {}, M <= {}, N <= {} per call",
                             operands, k, m, n, limits.matmulMaxContraction,
                             limits.matmulMaxStationaryFree, limits.matmulMaxMovingFree),
                 loc);
  }
  if (x.memory() != isa::Memory::kSbuf || y.memory() != isa::Memory::kSbuf) {
    detail::fail(x, fn, fmt::format("{}: matmul operands must be in SBUF", operands), loc);
  }
  return {m, k, n};
}

void matmulInto(std::string_view fn, const Tensor& dst, const Tensor& x, const Tensor& y,
                bool accumulate, bool transposeX, Loc loc) {
  const auto [m, k, n] = checkMatmul(fn, x, y, transposeX, loc);
  detail::requireOnChip(dst, fn, "dst", loc);
  if (dst.memory() != isa::Memory::kPsum || dst.partitions() != m || dst.freeSize() != n) {
    detail::fail(dst, fn,
                 fmt::format("dst ({}) must be a PSUM tile [{}, {}] for x ({}) and y ({})",
                             dst.describe(), m, n, x.describe(), y.describe()),
                 loc);
  }
  const Tensor stationary = transposeX ? x : transposeToSbuf(x, loc);
  nisa::ncMatmul(dst, stationary, y, accumulate, {0, 0}, {isa::kPeArraySize, isa::kPeArraySize},
                 isa::MatmulPerfMode::kNone, false, loc);
}

}  // namespace

Tensor matmul(const Tensor& x, const Tensor& y, bool transposeX, Loc loc) {
  const auto [m, k, n] = checkMatmul("matmul", x, y, transposeX, loc);
  Tensor out = x.kernel().psum({m, n}, DType::kFp32, "matmul", std::nullopt, loc);
  matmulInto("matmul", out, x, y, false, transposeX, loc);
  return out;
}

void matmulAccumulate(const Tensor& dst, const Tensor& x, const Tensor& y, bool accumulate,
                      bool transposeX, Loc loc) {
  matmulInto("matmulAccumulate", dst, x, y, accumulate, transposeX, loc);
}

Tensor transpose(const Tensor& data, Loc loc) {
  detail::requireOnChip(data, "transpose", "data", loc);
  Kernel& k = data.kernel();
  const std::int64_t p = data.partitions();
  const std::int64_t f = data.freeSize();
  const isa::CoreLimits& limits = k.limits();
  if (data.memory() == isa::Memory::kSbuf && p <= limits.matmulMaxContraction &&
      f <= limits.matmulMaxStationaryFree && byteSize(data.dtype()) >= 2) {
    Tensor out = k.psum({f, p}, data.dtype(), "transpose", std::nullopt, loc);
    nisa::ncTranspose(out, data, std::nullopt, loc);
    return out;
  }
  constexpr std::int64_t kVectorBlock = 32;
  if (p <= kVectorBlock && f <= kVectorBlock) {
    Tensor out = detail::newTile(data, {f, p}, data.dtype(), "transpose", loc);
    nisa::ncTranspose(out, data, isa::Engine::kDve, loc);
    return out;
  }
  detail::fail(data, "transpose",
               fmt::format("{} ({} x {} elements) fits neither the tensor engine (SBUF, 2- or "
                           "4-byte elements, <= {} x {}) nor the vector engine (<= 32 x 32)",
                           data.describe(), p, f, limits.matmulMaxContraction,
                           limits.matmulMaxStationaryFree),
               loc);
}

Tensor broadcastPartitionsInPsum(const Tensor& row, const Tensor& ones, Loc loc) {
  detail::requireOnChip(row, "broadcastPartitionsInPsum", "row", loc);
  detail::requireOnChip(ones, "broadcastPartitionsInPsum", "ones", loc);
  Kernel& k = row.kernel();
  const std::int64_t partitions = ones.freeSize();
  if (row.partitions() != 1 || !isFloat(row.dtype()) || ones.partitions() != 1 ||
      ones.dtype() != row.dtype() || partitions > k.limits().partitions) {
    detail::fail(row, "broadcastPartitionsInPsum",
                 fmt::format("needs a floating-point [1, F] row and a [1, P] ones row of its "
                             "dtype with P <= {}, not {} and {}",
                             k.limits().partitions, row.describe(), ones.describe()),
                 loc);
  }
  const std::int64_t f = row.freeSize();
  const bool direct = row.memory() == isa::Memory::kSbuf && row.isContiguous();
  const Tensor src = (direct ? row : copy(row, std::nullopt, loc)).reshape({1, f}, loc);
  Tensor out = k.psum({partitions, f}, DType::kFp32, "broadcast_psum", std::nullopt, loc);
  const std::int64_t chunk = k.limits().matmulMaxMovingFree;
  for (std::int64_t c = 0; c < f; c += chunk) {
    const std::int64_t n = std::min(chunk, f - c);
    nisa::ncMatmul(out(all, ds(c, n), loc), ones, src(all, ds(c, n), loc), false, {0, 0},
                   {isa::kPeArraySize, isa::kPeArraySize}, isa::MatmulPerfMode::kNone, false, loc);
  }
  return out;
}

Tensor broadcastPartitions(const Tensor& row, std::int64_t partitions, Loc loc) {
  detail::requireOnChip(row, "broadcastPartitions", "row", loc);
  Kernel& k = row.kernel();
  if (row.partitions() != 1 || partitions < 1 || partitions > k.limits().partitions ||
      !isFloat(row.dtype())) {
    detail::fail(row, "broadcastPartitions",
                 fmt::format("needs a floating-point [1, F] row and 1..{} partitions, not {} to "
                             "{} partitions",
                             k.limits().partitions, row.describe(), partitions),
                 loc);
  }
  const std::int64_t f = row.freeSize();
  const bool direct = row.memory() == isa::Memory::kSbuf && row.isContiguous();
  const Tensor src = (direct ? row : copy(row, std::nullopt, loc)).reshape({1, f}, loc);
  // ones[1, P]^T @ row[1, F]: one exact product per element (a matmul operand of fp32 class
  // needs an fp32 partner, so the ones take the row's dtype).
  const Tensor ones = full(k, {1, partitions}, row.dtype(), 1.0f, loc);
  Tensor out = detail::newTile(row, {partitions, f}, row.dtype(), "broadcast", loc);
  const std::int64_t chunk = k.limits().matmulMaxMovingFree;
  for (std::int64_t c = 0; c < f; c += chunk) {
    const std::int64_t n = std::min(chunk, f - c);
    const Tensor ps = broadcastPartitionsInPsum(src(all, ds(c, n), loc), ones, loc);
    nisa::tensorCopy(out(all, ds(c, n), loc), ps, std::nullopt, loc);
  }
  return out;
}

}  // namespace trn::kernel::nl
