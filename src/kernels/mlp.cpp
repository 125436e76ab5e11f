// The fused SwiGLU MLP (see mlp.h): per token block, transposed gate/up projections into PSUM,
// silu on the scalar engine and the gating multiply on the vector engine into hT in SBUF, then
// the down projection with hT stationary and the residual added while PSUM is drained.
#include "trn/kernels/mlp.h"

#include <algorithm>
#include <cmath>
#include <source_location>
#include <string>

#include "projection_tiles.h"
#include "trn/kernel/nisa.h"

namespace trn::kernels {

using detail::ceilDiv;
using detail::kMovingMax;
using detail::kPartitions;
using kernel::ds;
using kernel::Kernel;
using kernel::Tensor;
namespace nisa = kernel::nisa;
using Loc = std::source_location;

namespace {

/// K tiles of a weight loaded by one DMA.
constexpr std::int64_t kTilesPerWeightLoad = 4;
/// xT and hT of one token block may take this many bytes per partition.
constexpr std::int64_t kActivationBudget = 64 * 1024;
/// One block of gate (or up) weight columns, all H tiles, may take this many bytes per partition.
constexpr std::int64_t kGateBlockBudget = 16 * 1024;
/// PSUM: gate/up and down accumulators rotate over banks 0-5, the transposes of x over 6-7.
constexpr std::int64_t kComputeBanks = 6;

constexpr const char* kName = "swiglu_mlp";

std::string shapeText(const Tensor& t) { return formatShape(t.shape()); }

/// Checks x [S, H], wg [H, F], wu [H, F], wd [F, H], r [S, H] and one float dtype.
void checkInputs(Kernel& k, const Tensor& x, const Tensor& wg, const Tensor& wu, const Tensor& wd,
                 const Tensor& r, Loc loc = Loc::current()) {
  const std::string shapes = "x " + shapeText(x) + ", wg " + shapeText(wg) + ", wu " +
                             shapeText(wu) + ", wd " + shapeText(wd) + ", r " + shapeText(r);
  if (x.rank() != 2 || wg.rank() != 2 || wu.rank() != 2 || wd.rank() != 2 || r.rank() != 2) {
    detail::failInput(
        k, kName, "takes 2-D x [S, H], wg [H, F], wu [H, F], wd [F, H], r [S, H]; got " + shapes,
        loc);
  }
  const std::int64_t h = x.shape(1);
  const std::int64_t f = wg.shape(1);
  if (wg.shape(0) != h || wu.shape(0) != h || wu.shape(1) != f || wd.shape(0) != f ||
      wd.shape(1) != h || r.shape(0) != x.shape(0) || r.shape(1) != h) {
    detail::failInput(k, kName,
                      "shapes do not match x [S, H], wg [H, F], wu [H, F], wd [F, H], r [S, H] "
                      "with H = " +
                          std::to_string(h) + " (x's columns) and F = " + std::to_string(f) +
                          " (wg's columns); got " + shapes,
                      loc);
  }
  const DType dtype = x.dtype();
  for (const Tensor* t : {&wg, &wu, &wd, &r}) {
    if ((dtype != DType::kBf16 && dtype != DType::kFp32) || t->dtype() != dtype) {
      detail::failInput(k, kName, "x, wg, wu, wd and r must all be bf16 or all fp32", loc);
    }
  }
}

}  // namespace

Tensor swigluMlp(Kernel& k, Tensor x, Tensor wg, Tensor wu, Tensor wd, Tensor r) {
  checkInputs(k, x, wg, wu, wd, r);
  const std::int64_t tokens = x.shape(0);
  const std::int64_t hSize = x.shape(1);
  const std::int64_t fSize = wg.shape(1);
  const std::int64_t hTiles = ceilDiv(hSize, kPartitions);
  const std::int64_t fTiles = ceilDiv(fSize, kPartitions);
  const std::int64_t bytes = byteSize(x.dtype());
  const std::int64_t blockTokens = std::clamp<std::int64_t>(
      kActivationBudget / ((hTiles + fTiles) * bytes) / kPartitions * kPartitions, kPartitions,
      kMovingMax);
  const std::int64_t gateColumns = std::clamp<std::int64_t>(
      kGateBlockBudget / (hTiles * bytes) / kPartitions * kPartitions, kPartitions, kMovingMax);
  Tensor out = k.output("out", {tokens, hSize}, x.dtype());
  // SPMD: each program instance takes a block of tokens (whole 128-token tiles) and streams all
  // three weights once per token block of its own. The splits that would stream less weight per
  // instance cost more: the down projection sums over F, so a split of F would leave every
  // instance a partial sum of every output element, to be added across instances; a split of
  // its output columns needs all of h in every instance, so each would compute every gate and up
  // product (two thirds of the FLOPs). The MLP is PE-bound (96 % MFU at the demo shape), so a
  // token split halves each instance's work; every output element still sums over F in order.
  const detail::ProgramShare share = detail::programShare(k, tokens, kPartitions);
  if (share.empty()) {
    return out;
  }
  detail::PsumRotation banks(k, 0, kComputeBanks);
  detail::PsumRotation transposes(k, kComputeBanks, k.limits().psumBanks - kComputeBanks);
  detail::EvacuationBalance balance;

  // The weights in use order, once per token block: gate and up column blocks (interleaved by
  // DMA group), then the down projection's 512-column tiles.
  // Loads run a gate block (its gate and up groups) ahead: a gate chunk needs all of its block.
  detail::WeightStream weights(k, 2 * hTiles, balance);
  using Range = detail::WeightStream::Range;
  std::vector<std::vector<Range>> gateBlocks;  // per token block: gate and up, interleaved
  std::vector<std::vector<Range>> downColumns;
  for (std::int64_t s0 = share.begin; s0 < share.end(); s0 += blockTokens) {
    gateBlocks.emplace_back();
    // The first blocks are narrow: a gate chunk needs its whole block, so the first chunk waits
    // for 128 columns of wg and wu instead of gateColumns (then 256, then the full width).
    std::int64_t columns = kPartitions;
    for (std::int64_t f0 = 0; f0 < fSize;
         f0 += columns, columns = std::min(2 * columns, gateColumns)) {
      columns = std::min(columns, gateColumns);
      gateBlocks.back().push_back(
          weights.addColumnPair(wg, wu, f0, std::min(columns, fSize - f0), kTilesPerWeightLoad));
    }
    downColumns.emplace_back();
    for (std::int64_t n0 = 0; n0 < hSize; n0 += kMovingMax) {
      downColumns.back().push_back(
          weights.addColumns(wd, n0, std::min(kMovingMax, hSize - n0), kTilesPerWeightLoad));
    }
  }

  std::size_t block = 0;
  for (std::int64_t s0 = share.begin; s0 < share.end(); s0 += blockTokens, ++block) {
    const std::int64_t blockRows = std::min(blockTokens, share.end() - s0);
    detail::TokenBlock xBlock(k, x, s0, blockRows, transposes, balance);
    const Tensor& xT = xBlock.transposed();
    Tensor hT = k.sbuf({kPartitions, fTiles, blockRows}, k.matmulDType(x.dtype()), "hT");

    // Gate and up projections, transposed: gT[f, s] = sum_h wg[h, f] x[s, h].
    std::int64_t ft = 0;
    for (const Range& pair : gateBlocks[block]) {
      const auto [gate, up] = weights.pairTiles(pair);
      const std::int64_t width = gate.front().shape(1);
      for (std::int64_t c0 = 0; c0 < width; c0 += kPartitions, ++ft) {
        const std::int64_t depth = std::min(kPartitions, width - c0);
        Tensor gT = banks.next({depth, blockRows}, DType::kFp32, "gT");
        Tensor uT = banks.next({depth, blockRows}, DType::kFp32, "uT");
        for (std::int64_t ht = 0; ht < hTiles; ++ht) {
          // The first chunk transposes x one H tile ahead of its matmuls.
          xBlock.transposeThrough(ht + 1);
          const Tensor& wgTile = gate[static_cast<std::size_t>(ht)];
          const Tensor moving = xT(ds(0, wgTile.partitions()), ht, kernel::all);
          nisa::ncMatmul(gT, wgTile(kernel::all, ds(c0, depth)), moving, ht > 0);
          nisa::ncMatmul(uT, up[static_cast<std::size_t>(ht)](kernel::all, ds(c0, depth)), moving,
                         ht > 0);
        }
        // h = silu(g) * u: silu on the scalar engine (kept in fp32), the product on the vector
        // engine, rounded once to the activation dtype.
        Tensor gate32 = k.sbuf({depth, blockRows}, DType::kFp32, "silu_gate");
        nisa::activation(gate32, gT, isa::ActivationFunction::kSilu);
        nisa::tensorTensor(hT(ds(0, depth), ft, kernel::all), gate32, uT, isa::AluOp::kMultiply,
                           isa::Engine::kDve);
        balance.addVectorWork(static_cast<double>(std::max<std::int64_t>(64, blockRows)) / 0.96);
      }
    }

    // Down projection: out[s, c] = sum_f hT[f, s] wd[f, c] + r[s, c], 512 columns at a time.
    for (std::size_t c = 0; c < downColumns[block].size(); ++c) {
      const std::int64_t n0 = static_cast<std::int64_t>(c) * kMovingMax;
      const detail::ColumnTile tile{hT,
                                    s0,
                                    blockRows,
                                    n0,
                                    std::min(kMovingMax, hSize - n0),
                                    downColumns[block][c],
                                    &r,
                                    out,
                                    nullptr,
                                    std::nullopt};
      detail::projectColumn(k, tile, weights, banks, balance, nullptr);
    }
  }
  return out;
}

std::vector<HostTensor> swigluMlpReference(std::span<const HostTensor> in) {
  const HostTensor& x = in[0];
  const HostTensor g = matmul(x, in[1]);
  const HostTensor u = matmul(x, in[2]);
  HostTensor h = HostTensor::zeros(g.shape);
  for (std::int64_t i = 0; i < h.size(); ++i) {
    h[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
  }
  HostTensor out = matmul(h, in[3]);
  for (std::int64_t i = 0; i < out.size(); ++i) {
    out[i] += in[4][i];
  }
  return {out};
}

}  // namespace trn::kernels
