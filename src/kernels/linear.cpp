// The projection kernels (see linear.h): token blocks of x transposed on chip, weights streamed
// once per token block in groups of K tiles, fp32 accumulation in rotating PSUM banks.
#include "trn/kernels/linear.h"

#include <algorithm>
#include <optional>
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

/// K tiles of w loaded by one DMA (512 KiB of bf16 for a 512-column tile).
constexpr std::int64_t kTilesPerWeightLoad = 4;
/// x^T of one token block may take this many bytes per partition (two blocks are in flight).
constexpr std::int64_t kTransposedBudget = 48 * 1024;
/// Weight K tiles loaded ahead of the ones the tensor engine works on (two DMA groups).
constexpr std::int64_t kWeightLookahead = 2 * kTilesPerWeightLoad;
/// PSUM: accumulators rotate over banks 0-5, the transposes of x over banks 6-7.
constexpr std::int64_t kAccumulatorBanks = 6;

std::string shapeText(const Tensor& t) { return formatShape(t.shape()); }

/// Checks x [S, K], w [K, N] and (optional) r [S, N]: ranks, matching sizes, one float dtype.
void checkInputs(Kernel& k, const char* name, const Tensor& x, const Tensor& w, const Tensor* r,
                 Loc loc = Loc::current()) {
  if (x.rank() != 2 || w.rank() != 2 || (r != nullptr && r->rank() != 2)) {
    detail::failInput(k, name,
                      "takes 2-D x [S, K], w [K, N]" + std::string(r ? " and r [S, N]" : "") +
                          "; got x " + shapeText(x) + ", w " + shapeText(w) +
                          (r ? ", r " + shapeText(*r) : ""),
                      loc);
  }
  if (x.shape(1) != w.shape(0)) {
    detail::failInput(k, name,
                      "x " + shapeText(x) + " has K = " + std::to_string(x.shape(1)) +
                          " columns but w " + shapeText(w) + " has " + std::to_string(w.shape(0)) +
                          " rows",
                      loc);
  }
  if (r != nullptr && (r->shape(0) != x.shape(0) || r->shape(1) != w.shape(1))) {
    detail::failInput(k, name,
                      "the residual r " + shapeText(*r) + " must be [S, N] = [" +
                          std::to_string(x.shape(0)) + ", " + std::to_string(w.shape(1)) + "]",
                      loc);
  }
  // Under auto-cast, fp32 x may meet a weight already stored in the type its products read.
  const DType dtype = x.dtype();
  const bool castWeight = dtype != k.matmulDType(dtype) && w.dtype() == k.matmulDType(dtype);
  if ((dtype != DType::kBf16 && dtype != DType::kFp32) || (w.dtype() != dtype && !castWeight) ||
      (r != nullptr && r->dtype() != dtype)) {
    detail::failInput(k, name,
                      "x, w and r must all be bf16 or all fp32 (w may be of the auto-cast type "
                      "with fp32 x under auto-cast)",
                      loc);
  }
}

Tensor project(Kernel& k, const char* name, const Tensor& x, const Tensor& w, const Tensor* r,
               const LinearEpilogue& epilogue = {}) {
  if (epilogue.multiplier) {
    if (epilogue.bias || epilogue.activation) {
      detail::failInput(k, name, "a multiplier takes neither a bias nor an activation",
                        Loc::current());
    }
    r = &*epilogue.multiplier;
  }
  checkInputs(k, name, x, w, r);
  std::optional<Tensor> bias;
  if (epilogue.bias) {
    const Tensor& b = *epilogue.bias;
    if (b.rank() != 1 || b.shape(0) != w.shape(1) || b.dtype() != x.dtype()) {
      detail::failInput(k, name,
                        "the bias b " + shapeText(b) + " must be [N] = [" +
                            std::to_string(w.shape(1)) + "] of x's dtype",
                        Loc::current());
    }
    bias = b.reshape({1, b.shape(0)});
  }
  const std::int64_t tokens = x.shape(0);
  const std::int64_t kSize = x.shape(1);
  const std::int64_t nSize = w.shape(1);
  const std::int64_t kTiles = ceilDiv(kSize, kPartitions);
  const std::int64_t blockTokens = std::clamp<std::int64_t>(
      kTransposedBudget / (kTiles * byteSize(x.dtype())) / kPartitions * kPartitions, kPartitions,
      kMovingMax);
  Tensor out = k.output("out", {tokens, nSize}, x.dtype());
  // SPMD: each program instance computes a block of output columns, in units of 128. A block of
  // columns needs only those columns of w, so each instance streams its share of the weights
  // once per token block (blocks x K N / P elements) and all of x; a split of the tokens would
  // stream the whole of w in every instance that has a token block (ceil(blocks / P) x K N),
  // and w is the larger operand in the decoder's projections (2048 x 2560 against 512 x 2048
  // tokens). Each output element still sums over K in the same order.
  const detail::ProgramShare share = detail::programShare(k, nSize, kPartitions);
  if (share.empty()) {
    return out;
  }
  detail::PsumRotation accumulators(k, 0, kAccumulatorBanks);
  detail::PsumRotation transposes(k, kAccumulatorBanks, k.limits().psumBanks - kAccumulatorBanks);
  detail::EvacuationBalance balance;
  // Every weight column tile (512 columns, all K tiles) once per token block, in use order.
  detail::WeightStream weights(k, kWeightLookahead, balance);
  std::vector<detail::WeightStream::Range> columns;
  for (std::int64_t s0 = 0; s0 < tokens; s0 += blockTokens) {
    for (std::int64_t n0 = share.begin; n0 < share.end(); n0 += kMovingMax) {
      columns.push_back(
          weights.addColumns(w, n0, std::min(kMovingMax, share.end() - n0), kTilesPerWeightLoad));
    }
  }

  std::size_t column = 0;
  for (std::int64_t s0 = 0; s0 < tokens; s0 += blockTokens) {
    const std::int64_t blockRows = std::min(blockTokens, tokens - s0);
    detail::TokenBlock block(k, x, s0, blockRows, transposes, balance);
    const Tensor& xT = block.transposed();
    for (std::int64_t n0 = share.begin; n0 < share.end(); n0 += kMovingMax, ++column) {
      const detail::ColumnTile tile{xT,
                                    s0,
                                    blockRows,
                                    n0,
                                    std::min(kMovingMax, share.end() - n0),
                                    columns[column],
                                    r,
                                    out,
                                    bias ? &*bias : nullptr,
                                    epilogue.activation,
                                    epilogue.multiplier ? isa::AluOp::kMultiply : isa::AluOp::kAdd};
      detail::projectColumn(k, tile, weights, accumulators, balance, &block);
    }
  }
  return out;
}

/// out = x @ w (+ r) in float64, x [S, K], w [K, N].
HostTensor projectReference(const HostTensor& x, const HostTensor& w, const HostTensor* r) {
  HostTensor out = matmul(x, w);
  if (r != nullptr) {
    for (std::int64_t i = 0; i < out.size(); ++i) {
      out[i] += (*r)[i];
    }
  }
  return out;
}

}  // namespace

Tensor linear(Kernel& k, Tensor x, Tensor w) { return project(k, "linear", x, w, nullptr); }

Tensor linearResidual(Kernel& k, Tensor x, Tensor w, Tensor r) {
  return project(k, "linear_residual", x, w, &r);
}

Tensor linearEpilogue(Kernel& k, Tensor x, Tensor w, const LinearEpilogue& epilogue) {
  return project(k, "linear_epilogue", x, w, nullptr, epilogue);
}

std::vector<HostTensor> linearReference(std::span<const HostTensor> in) {
  return {projectReference(in[0], in[1], nullptr)};
}

std::vector<HostTensor> linearResidualReference(std::span<const HostTensor> in) {
  return {projectReference(in[0], in[1], &in[2])};
}

}  // namespace trn::kernels
