#include "projection_tiles.h"

#include <algorithm>

#include "trn/kernel/nisa.h"

namespace trn::kernels::detail {

using kernel::Address;
using kernel::ds;
using kernel::Kernel;
using kernel::Tensor;
namespace nisa = kernel::nisa;
using Loc = std::source_location;

namespace {

// DMA issuers. The backend gives the tensor engine and GpSimd one DMA queue each, and a queue
// runs its transfers one after another: weights triggered by the tensor engine (in its program
// order, so a prefetch is issued as the matmuls reach it) and activations triggered by GpSimd
// (idle otherwise) each arrive in the order they are used, at the full DMA bandwidth the two
// queues share, instead of every transfer in flight sharing it evenly and the first one needed
// arriving with the last.
constexpr isa::Engine kWeightIssuer = isa::Engine::kPe;
constexpr isa::Engine kActivationIssuer = isa::Engine::kPool;

}  // namespace

PsumRotation::PsumRotation(Kernel& k, std::int64_t first, std::int64_t count)
    : k_(&k), first_(first), count_(count) {}

Tensor PsumRotation::next(std::vector<std::int64_t> shape, DType dtype, const std::string& name,
                          Loc loc) {
  const std::int64_t bank = first_ + turn_++ % count_;
  return k_->psum(std::move(shape), dtype, name, Address{0, bank * k_->limits().psumBankBytes},
                  loc);
}

void EvacuationBalance::copy(const Tensor& dst, const Tensor& src, Loc loc) {
  // Cost formulas of configs/chips/trn2.yaml: tensor_copy on the vector engine runs at 2
  // elements per cycle (perf mode) when every operand is 16-bit, else 1, at 0.96 GHz; on the
  // scalar engine at 1 element per cycle at 1.2 GHz; both at least 64 cycles.
  const auto n = static_cast<double>(src.freeSize());
  const bool halfWidth = byteSize(src.dtype()) == 2 && byteSize(dst.dtype()) == 2;
  const double vector = std::max(64.0, halfWidth ? n / 2 : n) / 0.96;
  const double scalar = std::max(64.0, n) / 1.2;
  if (vectorNs_ + vector <= scalarNs_ + scalar) {
    vectorNs_ += vector;
    nisa::tensorCopy(dst, src, isa::Engine::kDve, loc);
  } else {
    scalarNs_ += scalar;
    nisa::tensorCopy(dst, src, isa::Engine::kAct, loc);
  }
}

TokenBlock::TokenBlock(Kernel& k, const Tensor& x, std::int64_t s0, std::int64_t rows,
                       PsumRotation& psum, EvacuationBalance& balance)
    : k_(&k), psum_(&psum), balance_(&balance), kSize_(x.shape(1)), rows_(rows) {
  const std::int64_t tokenTiles = ceilDiv(rows, kPartitions);
  rowsTile_ = k.sbuf({std::min(rows, kPartitions), tokenTiles, kSize_}, x.dtype(), "x_rows");
  xT_ = k.sbuf({kPartitions, ceilDiv(kSize_, kPartitions), rows}, k.matmulDType(x.dtype()), "xT");
  // One DMA per column block, the full token tiles together and a ragged one separately.
  const std::int64_t fullTokenTiles = rows / kPartitions;
  auto load = [&](std::int64_t c0, std::int64_t width) {
    if (fullTokenTiles > 0) {
      nisa::dmaCopy(rowsTile_(kernel::all, ds(0, fullTokenTiles), ds(c0, width)),
                    x(ds(s0, kPartitions), ds(c0, width))
                        .pattern(kPartitions, {{kPartitions * kSize_, fullTokenTiles}, {1, width}}),
                    std::nullopt, std::nullopt, isa::DmaOobMode::kError, kActivationIssuer);
    }
    if (rows > fullTokenTiles * kPartitions) {
      const std::int64_t tokens = rows - fullTokenTiles * kPartitions;
      nisa::dmaCopy(rowsTile_(ds(0, tokens), fullTokenTiles, ds(c0, width)),
                    x(ds(s0 + fullTokenTiles * kPartitions, tokens), ds(c0, width)), std::nullopt,
                    std::nullopt, isa::DmaOobMode::kError, kActivationIssuer);
    }
  };
  for (std::int64_t c0 = 0; c0 < kSize_; c0 += kColumnBlock) {
    const std::int64_t width = std::min(kColumnBlock, kSize_ - c0);
    load(c0, width);
  }
}

std::pair<std::vector<Tensor>, std::vector<Tensor>> WeightStream::pairTiles(Range range) {
  std::pair<std::vector<Tensor>, std::vector<Tensor>> out;
  for (std::size_t i = 0; i < range.count; ++i) {
    for (const Tensor& t : tiles(range.first + i, 1)) {
      (i % 2 == 0 ? out.first : out.second).push_back(t);
    }
  }
  return out;
}

void TokenBlock::transposeThrough(std::int64_t kTile) {
  const std::int64_t through = std::min(ceilDiv(kSize_, kPartitions), kTile + 1);
  // The PE transposes 2- and 4-byte elements as they are but writes a 1-byte one as 16 bits
  // (hardware-trn2.md §6), so fp8 operands are transposed as x's rows are and rounded by the
  // copy out of PSUM: one rounding, as the DMA's cast would make.
  const DType dtype = byteSize(xT_.dtype()) == 1 ? rowsTile_.dtype() : xT_.dtype();
  for (; transposedTiles_ < through; ++transposedTiles_) {
    // The K tile's blocks of every token tile share one PSUM bank and one copy.
    const std::int64_t kt = transposedTiles_;
    const std::int64_t width = std::min(kPartitions, kSize_ - kt * kPartitions);
    Tensor rows = rowsTile_(kernel::all, kernel::all, ds(kt * kPartitions, width));
    if (rows.dtype() != dtype) {
      // The full token tiles in one copy, a ragged last one (fewer rows) in another.
      Tensor cast = k_->sbuf({rows.shape(0), rows.shape(1), width}, dtype, "x_rows_cast");
      const std::int64_t fullTiles = rows_ / kPartitions;
      if (fullTiles > 0) {
        balance_->copy(cast(kernel::all, ds(0, fullTiles), kernel::all),
                       rows(kernel::all, ds(0, fullTiles), kernel::all));
      }
      if (rows_ > fullTiles * kPartitions) {
        const std::int64_t tokens = rows_ - fullTiles * kPartitions;
        balance_->copy(cast(ds(0, tokens), fullTiles, kernel::all),
                       rows(ds(0, tokens), fullTiles, kernel::all));
      }
      rows = cast;
    }
    Tensor blocks = psum_->next({width, rows_}, dtype, "xT_psum");
    for (std::int64_t t0 = 0; t0 < rows_; t0 += kPartitions) {
      const std::int64_t tokens = std::min(kPartitions, rows_ - t0);
      nisa::ncTranspose(blocks(kernel::all, ds(t0, tokens)),
                        rows(ds(0, tokens), t0 / kPartitions, kernel::all));
    }
    balance_->copy(xT_(ds(0, width), kt, kernel::all), blocks);
  }
}

Tensor loadWeightTiles(Kernel& k, const Tensor& w, std::int64_t t0, std::int64_t count,
                       std::int64_t n0, std::int64_t width, EvacuationBalance& casts) {
  const std::int64_t rows = std::min(kPartitions, w.shape(0) - t0 * kPartitions);
  Tensor tile = k.sbuf({rows, count, width}, w.dtype(), "w_tiles");
  const Tensor first = w(ds(t0 * kPartitions, rows), ds(n0, width));
  nisa::dmaCopy(
      tile,
      count == 1 ? first : first.pattern(rows, {{kPartitions * w.shape(1), count}, {1, width}}),
      std::nullopt, std::nullopt, isa::DmaOobMode::kError, kWeightIssuer);
  const DType dtype = k.matmulDType(w.dtype());
  if (dtype == w.dtype()) {
    return tile;
  }
  Tensor cast = k.sbuf({rows, count, width}, dtype, "w_tiles_cast");
  casts.copy(cast, tile);
  return cast;
}

WeightStream::Range WeightStream::addColumns(const Tensor& w, std::int64_t n0, std::int64_t width,
                                             std::int64_t perLoad) {
  return addColumnPair(w, Tensor(), n0, width, perLoad);
}

WeightStream::Range WeightStream::addColumnPair(const Tensor& a, const Tensor& b, std::int64_t n0,
                                                std::int64_t width, std::int64_t perLoad) {
  const std::size_t first = groups_.size();
  const std::int64_t kTiles = ceilDiv(a.shape(0), kPartitions);
  const std::int64_t fullTiles = a.shape(0) / kPartitions;
  for (std::int64_t t0 = 0; t0 < kTiles;) {
    const std::int64_t count = t0 < fullTiles ? std::min(perLoad, fullTiles - t0) : 1;
    groups_.push_back({a, t0, count, n0, width});
    if (b.valid()) {
      groups_.push_back({b, t0, count, n0, width});
    }
    t0 += count;
  }
  return {first, groups_.size() - first};
}

void WeightStream::loadThrough(std::size_t last) {
  std::int64_t ahead = 0;  // K tiles loaded beyond group `last`
  for (std::size_t i = last + 1; i < loaded_.size(); ++i) {
    ahead += groups_[i].count;
  }
  while (loaded_.size() < groups_.size() && (loaded_.size() <= last || ahead < lookahead_)) {
    const Group& g = groups_[loaded_.size()];
    if (loaded_.size() > last) {
      ahead += g.count;
    }
    loaded_.push_back(loadWeightTiles(*k_, g.w, g.t0, g.count, g.n0, g.width, *casts_));
  }
}

std::vector<Tensor> WeightStream::tiles(std::size_t first, std::size_t count) {
  loadThrough(first + count - 1);
  std::vector<Tensor> out;
  for (std::size_t i = first; i < first + count; ++i) {
    const Tensor& group = loaded_[i];
    for (std::int64_t j = 0; j < groups_[i].count; ++j) {
      out.push_back(group(kernel::all, j, kernel::all));
    }
  }
  return out;
}

void projectColumn(Kernel& k, const ColumnTile& tile, WeightStream& weights,
                   PsumRotation& accumulators, EvacuationBalance& balance, TokenBlock* pending) {
  const DType dtype = tile.out.dtype();
  const std::int64_t tokenTiles = ceilDiv(tile.rows, kPartitions);
  std::vector<Tensor> acc;
  for (std::int64_t t = 0; t < tokenTiles; ++t) {
    const std::int64_t rows = std::min(kPartitions, tile.rows - t * kPartitions);
    acc.push_back(accumulators.next({rows, tile.width}, DType::kFp32, "acc"));
  }
  std::vector<Tensor> residual;
  auto loadResidual = [&] {
    if (tile.bias != nullptr) {
      // One tile of the bias row, each partition a copy (a stride-0 read of HBM).
      const std::int64_t rows = acc[0].partitions();
      Tensor bTile = k.sbuf({rows, tile.width}, dtype, "bias");
      nisa::dmaCopy(bTile, (*tile.bias)(ds(0, 1), ds(tile.n0, tile.width)).broadcast(0, rows),
                    std::nullopt, std::nullopt, isa::DmaOobMode::kError, isa::Engine::kDve);
      residual.push_back(bTile);
    }
    for (std::int64_t t = 0; t < tokenTiles && tile.residual != nullptr; ++t) {
      // Triggered by the vector engine, which adds it, behind its earlier work: well before it
      // is needed, and not ahead of the first loads the tensor engine waits for.
      const std::int64_t rows = acc[static_cast<std::size_t>(t)].partitions();
      Tensor rTile = k.sbuf({rows, tile.width}, dtype, "residual");
      nisa::dmaCopy(rTile,
                    (*tile.residual)(ds(tile.s0 + t * kPartitions, rows), ds(tile.n0, tile.width)),
                    std::nullopt, std::nullopt, isa::DmaOobMode::kError, isa::Engine::kDve);
      residual.push_back(rTile);
    }
  };
  auto finish = [&](std::int64_t t) {
    const Tensor& sum = acc[static_cast<std::size_t>(t)];
    const std::int64_t rows = sum.partitions();
    Tensor result = k.sbuf({rows, tile.width}, dtype, "out_tile");
    const double cycles = static_cast<double>(std::max<std::int64_t>(64, tile.width));
    Tensor combined = sum;  // what the activation reads: PSUM, or the sum with r or b in fp32
    if (tile.residual != nullptr || tile.bias != nullptr) {
      const Tensor& operand = tile.bias != nullptr ? residual[0](ds(0, rows), kernel::all)
                                                   : residual[static_cast<std::size_t>(t)];
      // Before an activation the sum stays fp32, so the result is rounded once.
      combined = tile.activation ? k.sbuf({rows, tile.width}, DType::kFp32, "biased") : result;
      const isa::AluOp op = tile.residual != nullptr ? tile.residualOp : isa::AluOp::kAdd;
      nisa::tensorTensor(combined, sum, operand, op, isa::Engine::kDve);
      balance.addVectorWork(cycles / 0.96);
    }
    if (tile.activation) {
      nisa::activation(result, combined, *tile.activation);
      balance.addScalarWork(cycles / 1.2);
    } else if (tile.residual == nullptr && tile.bias == nullptr) {
      balance.copy(result, sum);
    }
    nisa::dmaCopy(
        tile.out(ds(tile.s0 + t * kPartitions, sum.partitions()), ds(tile.n0, tile.width)), result);
  };
  auto multiply = [&](std::int64_t t, std::int64_t kt, const Tensor& wTile) {
    const Tensor& dst = acc[static_cast<std::size_t>(t)];
    nisa::ncMatmul(
        dst,
        tile.activationsT(ds(0, wTile.partitions()), kt, ds(t * kPartitions, dst.partitions())),
        wTile, /*accumulate=*/kt > 0);
  };
  const std::size_t end = tile.groups.first + tile.groups.count;
  std::int64_t kt = 0;
  for (std::size_t g = tile.groups.first; g < end; ++g) {
    const std::vector<Tensor> wTiles = weights.tiles(g, 1);
    const auto count = static_cast<std::int64_t>(wTiles.size());
    if (pending != nullptr) {
      pending->transposeThrough(g + 1 < end ? kt : kt + count - 1);
    }
    if (g + 1 < end) {
      for (std::int64_t j = 0; j < count; ++j) {
        if (pending != nullptr) {
          // The next K tile's transposes go in before this one's matmuls, so their copy to
          // SBUF finishes under them.
          pending->transposeThrough(kt + j + 1);
        }
        for (std::int64_t t = 0; t < tokenTiles; ++t) {
          multiply(t, kt + j, wTiles[static_cast<std::size_t>(j)]);
        }
      }
    } else {
      if (residual.empty()) {
        loadResidual();
      }
      for (std::int64_t t = 0; t < tokenTiles; ++t) {
        for (std::int64_t j = 0; j < count; ++j) {
          multiply(t, kt + j, wTiles[static_cast<std::size_t>(j)]);
        }
        finish(t);
      }
    }
    if (residual.empty() && g + 1 < end && 2 * (kt + count) >= tile.activationsT.shape(1)) {
      loadResidual();  // half way through K
    }
    kt += count;
  }
}

void failInput(Kernel& k, const std::string& kernelName, const std::string& message, Loc loc) {
  k.fail(kernelName + ": " + message, loc);
}

}  // namespace trn::kernels::detail
