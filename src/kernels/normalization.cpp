// Layer norm (nl style and bn_stats style) and RMS norm (see normalization.h).
#include "trn/kernels/normalization.h"

#include <cmath>
#include <source_location>
#include <string>
#include <tuple>
#include <utility>

#include "tile_util.h"
#include "trn/kernel/nisa.h"
#include "trn/kernel/nl.h"

namespace trn::kernels {

using detail::clip;
using detail::kPartitions;
using isa::ActivationFunction;
using isa::AluOp;
using kernel::all;
using kernel::ds;
using kernel::Kernel;
using kernel::Tensor;
namespace nisa = kernel::nisa;
namespace nl = kernel::nl;

namespace {

using Loc = std::source_location;

/// Checks x [N, D] and the 1-D parameters [D] of a normalisation kernel.
void checkRowsAndParams(Kernel& k, const Tensor& x, std::initializer_list<const Tensor*> params,
                        const std::string& name, Loc loc = Loc::current()) {
  detail::requireRank(k, x, 2, name, "x", loc);
  detail::requireFloat(k, x, name, "x", loc);
  for (const Tensor* p : params) {
    detail::requireRank(k, *p, 1, name, "each parameter vector", loc);
    detail::requireFloat(k, *p, name, "each parameter vector", loc);
    if (p->shape(0) != x.shape(1)) {
      k.fail(name + ": a parameter vector has " + std::to_string(p->shape(0)) +
                 " elements but x has D = " + std::to_string(x.shape(1)) + " columns",
             loc);
    }
  }
}

/// Row tile `index` of x [N, D] (128 rows, the last ragged), declared and loaded at `site`.
Tensor loadRows(Kernel& k, const Tensor& x, std::int64_t index, Loc site) {
  const std::int64_t r = index * kPartitions;
  Tensor xt = k.sbuf({clip(kPartitions, r, x.shape(0)), x.shape(1)}, x.dtype(), "x_tile",
                     std::nullopt, site);
  nisa::dmaCopy(xt, x(ds(r, xt.partitions()), site), std::nullopt, std::nullopt,
                isa::DmaOobMode::kError, std::nullopt, site);
  return xt;
}

/// The rows [begin, end) of x this SPMD program instance normalises: whole 128-row tiles (the
/// last may be ragged), so each instance's tiles are the ones one instance would cut. Rows are
/// independent and the parameter vectors are small, so rows split with no extra traffic beyond
/// each instance loading the parameters once.
detail::ProgramShare rowShare(const Kernel& k, const Tensor& x) {
  return detail::programShare(k, x.shape(0), kPartitions);
}

/// Row tiles the bn_stats layer norm and the RMS norm load ahead of the one it computes: three
/// loads in flight share the DMA engines, so the first tile arrives after three tiles' transfer
/// time; more only delay it.
constexpr std::int64_t kPrefetch = 2;

/// bn_stats takes at most this many elements per partition (NKI nl.tile_size.bn_stats_fmax).
constexpr std::int64_t kBnStatsFmax = 512;

/// How many row tiles of `tileBytes` per partition to load ahead (at most kPrefetch) so that
/// they, `otherBytes` of other tiles and a margin for the small statistics tiles fit one SBUF
/// partition: long rows prefetch less instead of overflowing SBUF (layernorm_bn at D = 8192 fp32
/// on Trn1's 192 KiB).
std::int64_t prefetchThatFits(const Kernel& k, std::int64_t tileBytes, std::int64_t otherBytes) {
  constexpr std::int64_t kSmallTilesMargin = 4096;
  std::int64_t depth = kPrefetch;
  while (depth > 0 && otherBytes + (depth + 1) * tileBytes + kSmallTilesMargin >
                          k.limits().sbufPartitionBytes) {
    --depth;
  }
  return depth;
}

}  // namespace

Tensor layerNorm(Kernel& k, Tensor x, Tensor gamma, Tensor beta) {
  checkRowsAndParams(k, x, {&gamma, &beta}, "layernorm");
  const std::int64_t n = x.shape(0);
  const std::int64_t d = x.shape(1);
  Tensor out = k.output("out", {n, d}, x.dtype());
  const detail::ProgramShare share = rowShare(k, x);
  if (share.empty()) {
    return out;
  }
  const std::int64_t p = std::min(kPartitions, share.count);
  const Tensor gammaRow = nl::load(gamma.reshape({1, d}));
  const Tensor betaRow = nl::load(beta.reshape({1, d}));
  const Tensor gammaB = nl::broadcastPartitions(gammaRow, p);
  const Tensor betaB = nl::broadcastPartitions(betaRow, p);
  for (std::int64_t r = share.begin; r < share.end(); r += kPartitions) {
    const std::int64_t rows = clip(kPartitions, r, n);
    const Tensor xt = nl::load(x(ds(r, rows)));
    const Tensor mean = nl::mean(xt, 1, true, DType::kFp32);
    const Tensor var = nl::var(xt, DType::kFp32);
    const Tensor rstd = nl::rsqrt(nl::add(var, kLayerNormEps));
    const Tensor normed = nl::multiply(nl::subtract(xt, mean, DType::kFp32), rstd);
    const Tensor scaled = nl::multiply(normed, gammaB(ds(0, rows)), DType::kFp32);
    nl::store(out(ds(r, rows)), nl::add(scaled, betaB(ds(0, rows)), x.dtype()));
  }
  return out;
}

Tensor layerNormBn(Kernel& k, Tensor x, Tensor gamma, Tensor beta) {
  return layerNormBnEps(k, std::move(x), std::move(gamma), std::move(beta), kLayerNormEps);
}

Tensor layerNormBnEps(Kernel& k, Tensor x, Tensor gamma, std::optional<Tensor> beta, float eps) {
  if (beta) {
    checkRowsAndParams(k, x, {&gamma, &*beta}, "layernorm_bn");
  } else {
    checkRowsAndParams(k, x, {&gamma}, "layernorm_bn");
  }
  const std::int64_t n = x.shape(0);
  const std::int64_t d = x.shape(1);
  Tensor out = k.output("out", {n, d}, x.dtype());
  const detail::ProgramShare share = rowShare(k, x);
  if (share.empty()) {
    return out;
  }
  const std::int64_t p = std::min(kPartitions, share.count);
  const Tensor gammaB = detail::broadcastOnChip(k, gamma, p, "gamma_bcast");
  const std::optional<Tensor> betaB =
      beta ? std::optional(detail::broadcastOnChip(k, *beta, p, "beta_bcast")) : std::nullopt;
  const std::int64_t chunks = (d + kBnStatsFmax - 1) / kBnStatsFmax;
  // Columns whose gamma and beta the vector engine applies; GpSimd takes the rest. Per tile the
  // vector engine also runs bn_stats (D cycles at 0.96 GHz) and each column costs 4 cycles (two
  // fp32 tensor_tensor passes) on either engine: (D + 4c) / 0.96 = 4 (D - c) / 1.2 at
  // c = 11 D / 36.
  const std::int64_t dveCols = d * 11 / 36;
  const std::int64_t firstTile = share.begin / kPartitions;
  // Per partition besides the x tiles: gamma and beta, normed (fp32) and the output tile.
  const std::int64_t xBytes = d * byteSize(x.dtype());
  const std::int64_t paramBytes = byteSize(gammaB.dtype()) + (betaB ? byteSize(betaB->dtype()) : 0);
  const std::int64_t depth = prefetchThatFits(k, xBytes, d * (paramBytes + 4) + xBytes);
  detail::TilePrefetcher tiles(
      (share.count + kPartitions - 1) / kPartitions, depth,
      [&](std::int64_t i, Loc site) { return loadRows(k, x, firstTile + i, site); });
  for (std::int64_t r = share.begin; r < share.end(); r += kPartitions) {
    const std::int64_t rows = clip(kPartitions, r, n);
    const Tensor xt = tiles.take();
    // One bn_stats record per chunk of columns (the last chunk may be shorter: each record
    // carries its own count), combined by bn_aggr into mean and variance.
    Tensor stats = k.sbuf({rows, 6 * chunks}, DType::kFp32, "bn_stats");
    for (std::int64_t c = 0; c < chunks; ++c) {
      const std::int64_t c0 = c * kBnStatsFmax;
      nisa::bnStats(stats(all, ds(6 * c, 6)), xt(all, ds(c0, clip(kBnStatsFmax, c0, d))));
    }
    Tensor meanVar = k.sbuf({rows, 2}, DType::kFp32, "mean_var");
    nisa::bnAggr(meanVar, stats);
    Tensor rstd = k.sbuf({rows, 1}, DType::kFp32, "rstd");
    nisa::activation(rstd, meanVar(all, ds(1, 1)), ActivationFunction::kRsqrt, eps);
    Tensor shift = k.sbuf({rows, 1}, DType::kFp32, "neg_mean_rstd");
    nisa::tensorScalar(shift, meanVar(all, ds(0, 1)), AluOp::kMultiply, rstd, false,
                       AluOp::kMultiply, -1.0f);
    // (x - mean) * rstd as one two-stage tensor_scalar x * rstd + (-mean * rstd), the form the
    // scalar engine runs (multiply, then add), which has no other work here.
    Tensor normed = k.sbuf({rows, d}, DType::kFp32, "normed");
    nisa::tensorScalar(normed, xt, AluOp::kMultiply, rstd, false, AluOp::kAdd, shift, false,
                       isa::Engine::kAct);
    Tensor ot = k.sbuf({rows, d}, x.dtype(), "out_tile");
    for (const auto& [engine, c0, cols] : {std::tuple{isa::Engine::kDve, std::int64_t{0}, dveCols},
                                           std::tuple{isa::Engine::kPool, dveCols, d - dveCols}}) {
      if (cols == 0) {
        continue;
      }
      const auto part = [&](const Tensor& t) { return t(all, ds(c0, cols)); };
      if (!betaB) {
        nisa::tensorTensor(part(ot), part(normed), part(gammaB(ds(0, rows))), AluOp::kMultiply,
                           engine);
        continue;
      }
      nisa::tensorTensor(part(normed), part(normed), part(gammaB(ds(0, rows))), AluOp::kMultiply,
                         engine);
      nisa::tensorTensor(part(ot), part(normed), part(betaB->operator()(ds(0, rows))),
                         AluOp::kAdd, engine);
    }
    nisa::dmaCopy(out(ds(r, rows)), ot);
  }
  return out;
}

namespace {

/// The tutorials' gamma and beta: both loaded as [1, d] rows, then broadcast to all partitions
/// (in the tutorials' order).
std::pair<Tensor, Tensor> broadcastScaleAndShift(const Tensor& gamma, const Tensor& beta,
                                                 std::int64_t d) {
  const Tensor gammaSb = nl::load(gamma.reshape({1, d}));
  const Tensor betaSb = nl::load(beta.reshape({1, d}));
  const Tensor gammaBcast = nl::broadcastPartitions(gammaSb, kPartitions);
  return {gammaBcast, nl::broadcastPartitions(betaSb, kPartitions)};
}

}  // namespace

Tensor layerNormTutorialV1(Kernel& k, Tensor x, Tensor gamma, Tensor beta) {
  checkRowsAndParams(k, x, {&gamma, &beta}, "layernorm_tutorial_v1");
  const std::int64_t n = x.shape(0);
  const std::int64_t d = x.shape(1);
  Tensor out = k.output("out", {n, d}, x.dtype());
  const auto [gammaBcast, betaBcast] = broadcastScaleAndShift(gamma, beta, d);
  for (std::int64_t r = 0; r < n; r += kPartitions) {
    const std::int64_t rows = clip(kPartitions, r, n);
    const Tensor inputSb = nl::load(x(ds(r, rows)));
    // The tutorial's variance: mean(x^2) - mean(x)^2. It runs in fp32, where every step here is
    // fp32; bf16 inputs keep fp32 statistics too.
    const Tensor mean = nl::mean(inputSb, 1, true, DType::kFp32);
    const Tensor var = nl::subtract(nl::mean(nl::square(inputSb, DType::kFp32), 1, true),
                                    nl::multiply(mean, mean));
    const Tensor shiftScale = nl::multiply(nl::subtract(inputSb, mean, DType::kFp32),
                                           nl::rsqrt(nl::add(var, kLayerNormEps)));
    const Tensor outputSb = nl::add(nl::multiply(shiftScale, gammaBcast(ds(0, rows))),
                                    betaBcast(ds(0, rows)), x.dtype());
    nl::store(out(ds(r, rows)), outputSb);
  }
  return out;
}

Tensor layerNormTutorialV2(Kernel& k, Tensor x, Tensor gamma, Tensor beta) {
  checkRowsAndParams(k, x, {&gamma, &beta}, "layernorm_tutorial_v2");
  const std::int64_t n = x.shape(0);
  const std::int64_t d = x.shape(1);
  Tensor out = k.output("out", {n, d}, x.dtype());
  const auto [gammaBcast, betaBcast] = broadcastScaleAndShift(gamma, beta, d);
  const std::int64_t numBnStats = (d + kBnStatsFmax - 1) / kBnStatsFmax;
  for (std::int64_t r = 0; r < n; r += kPartitions) {
    const std::int64_t rows = clip(kPartitions, r, n);
    const Tensor inputSb = nl::load(x(ds(r, rows)));
    Tensor statsResults = k.sbuf({rows, 6 * numBnStats}, DType::kFp32, "stats_results");
    for (std::int64_t j = 0; j < numBnStats; ++j) {
      const std::int64_t c0 = j * kBnStatsFmax;
      nisa::bnStats(statsResults(all, ds(6 * j, 6)),
                    inputSb(all, ds(c0, clip(kBnStatsFmax, c0, d))));
    }
    Tensor meanVar = k.sbuf({rows, 2}, DType::kFp32, "mean_var");
    nisa::bnAggr(meanVar, statsResults);
    const Tensor mean = meanVar(all, ds(0, 1));
    const Tensor scaleVar = nl::rsqrt(nl::add(meanVar(all, ds(1, 1)), kLayerNormEps));
    // (x - mean) * rstd as one two-stage tensor_scalar; the engine is the backend's choice, as
    // the tutorial leaves it to the compiler.
    Tensor shiftScale = k.sbuf({rows, d}, DType::kFp32, "shift_scale_tensor");
    nisa::tensorScalar(shiftScale, inputSb, AluOp::kSubtract, mean, false, AluOp::kMultiply,
                       scaleVar);
    const Tensor outputSb = nl::add(nl::multiply(shiftScale, gammaBcast(ds(0, rows))),
                                    betaBcast(ds(0, rows)), x.dtype());
    nl::store(out(ds(r, rows)), outputSb);
  }
  return out;
}

Tensor rmsNorm(Kernel& k, Tensor x, Tensor w) { return rmsNormEps(k, x, w, kRmsNormEps); }

Tensor rmsNormEps(Kernel& k, Tensor x, Tensor w, float eps) {
  checkRowsAndParams(k, x, {&w}, "rmsnorm");
  const std::int64_t n = x.shape(0);
  const std::int64_t d = x.shape(1);
  Tensor out = k.output("out", {n, d}, x.dtype());
  const detail::ProgramShare share = rowShare(k, x);
  if (share.empty()) {
    return out;
  }
  const Tensor wb = detail::broadcastOnChip(k, w, std::min(kPartitions, share.count), "w_bcast");
  const std::int64_t dveCols = d * 4 / 9;
  const std::int64_t firstTile = share.begin / kPartitions;
  // Per partition besides the x tiles: w, the scaled tile and the output tile.
  const std::int64_t xBytes = d * byteSize(x.dtype());
  const std::int64_t depth = prefetchThatFits(k, xBytes, d * byteSize(wb.dtype()) + 2 * xBytes);
  detail::TilePrefetcher tiles(
      (share.count + kPartitions - 1) / kPartitions, depth,
      [&](std::int64_t i, Loc site) { return loadRows(k, x, firstTile + i, site); });
  for (std::int64_t r = share.begin; r < share.end(); r += kPartitions) {
    const std::int64_t rows = clip(kPartitions, r, n);
    const Tensor xt = tiles.take();
    // The squares are not needed, only their fp32 sum: they go to the tile the scaled rows
    // overwrite next.
    Tensor scaled = k.sbuf({rows, d}, x.dtype(), "scaled");
    Tensor sumSq = k.sbuf({rows, 1}, DType::kFp32, "sum_sq");
    nisa::activationReduce(scaled, sumSq, xt, ActivationFunction::kSquare);
    Tensor rstd = k.sbuf({rows, 1}, DType::kFp32, "rstd");
    nisa::activation(rstd, sumSq, ActivationFunction::kRsqrt, eps, 1.0f / static_cast<float>(d));
    // The vector engine and GpSimd take the columns in proportion to their clocks (0.96 and
    // 1.2 GHz, the same cycles per element), so both finish the tile at the same time.
    Tensor ot = k.sbuf({rows, d}, x.dtype(), "out_tile");
    for (const auto& [engine, c0, cols] : {std::tuple{isa::Engine::kDve, std::int64_t{0}, dveCols},
                                           std::tuple{isa::Engine::kPool, dveCols, d - dveCols}}) {
      if (cols == 0) {
        continue;
      }
      const auto part = [&](const Tensor& t) { return t(all, ds(c0, cols)); };
      nisa::tensorScalar(part(scaled), part(xt), AluOp::kMultiply, rstd, false, AluOp::kBypass,
                         0.0f, false, engine);
      nisa::tensorTensor(part(ot), part(scaled), part(wb(ds(0, rows))), AluOp::kMultiply, engine);
    }
    nisa::dmaCopy(out(ds(r, rows)), ot);
  }
  return out;
}

std::vector<HostTensor> layerNormReference(std::span<const HostTensor> in) {
  const HostTensor& x = in[0];
  const std::int64_t n = x.dim(0);
  const std::int64_t d = x.dim(1);
  HostTensor out = HostTensor::zeros(x.shape);
  for (std::int64_t i = 0; i < n; ++i) {
    double mean = 0;
    for (std::int64_t j = 0; j < d; ++j) {
      mean += x[i * d + j];
    }
    mean /= static_cast<double>(d);
    double var = 0;
    for (std::int64_t j = 0; j < d; ++j) {
      var += (x[i * d + j] - mean) * (x[i * d + j] - mean);
    }
    var /= static_cast<double>(d);
    const double inv = 1.0 / std::sqrt(var + static_cast<double>(kLayerNormEps));
    for (std::int64_t j = 0; j < d; ++j) {
      out[i * d + j] = (x[i * d + j] - mean) * inv * in[1][j] + in[2][j];
    }
  }
  return {out};
}

std::vector<HostTensor> rmsNormReference(std::span<const HostTensor> in) {
  const HostTensor& x = in[0];
  const std::int64_t n = x.dim(0);
  const std::int64_t d = x.dim(1);
  HostTensor out = HostTensor::zeros(x.shape);
  for (std::int64_t i = 0; i < n; ++i) {
    double sumSq = 0;
    for (std::int64_t j = 0; j < d; ++j) {
      sumSq += x[i * d + j] * x[i * d + j];
    }
    const double inv =
        1.0 / std::sqrt(sumSq / static_cast<double>(d) + static_cast<double>(kRmsNormEps));
    for (std::int64_t j = 0; j < d; ++j) {
      out[i * d + j] = x[i * d + j] * inv * in[1][j];
    }
  }
  return {out};
}

}  // namespace trn::kernels
