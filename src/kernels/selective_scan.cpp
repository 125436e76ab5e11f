// The Mamba v1 selective scan in the tile language (see selective_scan.h), and its float64
// reference.
//
// Sequence tiles are outermost, so the partition-broadcast B and C of a tile are loaded once and
// serve every channel tile (the next tile's are prefetched during the current one). Per work item
// (sequence tile, channel tile) all N states are processed by a handful of wide instructions over
// [channels, N, 1 + Ls] tiles whose column 0 carries the state in:
//   dA[:, n, 1:]  = exp(delta * A[:, n])          scalar engine, one activation per state
//   dA[:, n, 0]   = 0                             restarts the recurrence at each state row
//   dBu[:, n, 1:] = B[n] * (delta * u)            GpSimd
//   dBu[:, n, 0]  = h of the previous sequence tile (or 0)
//   dBu           = scan r_i = dA_i * r_{i-1} + dBu_i along the whole row: h   vector engine
//   dBu[:, n, 1:] = dBu[:, n, 1:] * C[n]          GpSimd
//   y             = sum over n of dBu[:, n, 1:]   vector engine (tensor_reduce)
// One scan covers all N states: the zero in column 0 of dA cuts the recurrence between rows.
// The vector engine (scan 2 N (Ls + 1) and reduce N Ls cycles at 0.96 GHz) and GpSimd (two
// tensor_tensor of 2 N Ls cycles at 1.2 GHz) carry about equal work, so the trace is software
// pipelined by one item: the C multiply and reduction of item i - 1 are issued after the scan
// of item i, and each engine's in-order queue always has independent work.
#include "trn/kernels/selective_scan.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <source_location>
#include <string>

#include "trn/kernel/nisa.h"

namespace trn::kernels {

using kernel::all;
using kernel::ds;
using kernel::Kernel;
using kernel::Tensor;
namespace nisa = kernel::nisa;

namespace {

using Loc = std::source_location;
using isa::AluOp;
using isa::Engine;

constexpr std::int64_t kChannelTile = 128;
/// Per-partition SBUF bytes the working tiles may take: four dBu, three C-broadcast and two dA
/// and B-broadcast tiles of 4 N Ls bytes (44 N Ls bytes), plus the [channels, Ls] tiles (about
/// 64 Ls bytes).
constexpr std::int64_t kSbufBudget = 196 * 1024;

bool isFloatInput(DType t) { return t == DType::kFp32 || t == DType::kBf16; }

std::string shapeText(const Tensor& t) { return formatShape(t.shape()); }

/// The sequence tile for N states: kSelectiveScanSeqTile, or less so the tiles fit the budget.
std::int64_t seqTile(std::int64_t states, std::int64_t length) {
  const std::int64_t fit = std::max<std::int64_t>(1, kSbufBudget / (44 * states + 64));
  return std::min({kSelectiveScanSeqTile, fit, length});
}

/// A work item whose scan has been issued and whose output stage has not.
struct PendingItem {
  std::int64_t c0 = 0;
  std::int64_t cp = 0;
  std::int64_t t0 = 0;
  std::int64_t ls = 0;
  Tensor h;       ///< [cp, N, 1 + ls]: the scan results (column 0: the state carried in)
  Tensor cBcast;  ///< [128, N, ls]: C of the item's sequence tile on every partition
};

/// y[c0 : c0 + cp, t0 : t0 + ls] = sum_n C[n] * h[:, n, 1:].
void finishItem(Kernel& k, const Tensor& y, const PendingItem& item) {
  Tensor body = item.h(all, all, ds(1, item.ls));
  nisa::tensorTensor(body, body, item.cBcast(ds(0, item.cp), all, all), AluOp::kMultiply,
                     Engine::kPool);
  Tensor yTile = k.sbuf({item.cp, item.ls}, DType::kFp32, "y_tile");
  nisa::tensorReduce(yTile, body.permute({0, 2, 1}), AluOp::kAdd, 2);
  nisa::dmaCopy(y(ds(item.c0, item.cp), ds(item.t0, item.ls)), yTile);
}

}  // namespace

Tensor selectiveScan(Kernel& k, Tensor delta, Tensor u, Tensor a, Tensor b, Tensor c) {
  const Loc here = Loc::current();
  if (delta.rank() != 2 || u.rank() != 2 || a.rank() != 2 || b.rank() != 2 || c.rank() != 2) {
    k.fail("selective_scan takes 2-D delta [C, L], u [C, L], A [C, N], B [N, L] and C [N, L]",
           here);
  }
  const std::int64_t channels = delta.shape(0);
  const std::int64_t length = delta.shape(1);
  const std::int64_t states = a.shape(1);
  if (u.shape() != delta.shape()) {
    k.fail("selective_scan: u is " + shapeText(u) + " but delta is " + shapeText(delta), here);
  }
  if (a.shape(0) != channels) {
    k.fail("selective_scan: A is " + shapeText(a) + " but there are " + std::to_string(channels) +
               " channels (delta is " + shapeText(delta) + ")",
           here);
  }
  for (const auto& [name, t] : {std::pair{"B", &b}, {"C", &c}}) {
    if (t->shape(0) != states || t->shape(1) != length) {
      k.fail(std::string("selective_scan: ") + name + " is " + shapeText(*t) +
                 " but must be [N, L] = [" + std::to_string(states) + ", " +
                 std::to_string(length) + "]",
             here);
    }
  }
  for (const Tensor* t : {&delta, &u, &a, &b, &c}) {
    if (!isFloatInput(t->dtype())) {
      k.fail("selective_scan: inputs must be fp32 or bf16", here);
    }
  }

  Tensor y = k.output("y", {channels, length}, DType::kFp32);
  const std::int64_t seq = seqTile(states, length);
  const std::int64_t channelTiles = (channels + kChannelTile - 1) / kChannelTile;

  // Per channel tile: A's rows, and the state h[:, n] at the end of the last sequence tile.
  std::vector<Tensor> aTiles;
  std::vector<Tensor> hState;
  for (std::int64_t ct = 0; ct < channelTiles; ++ct) {
    const std::int64_t c0 = ct * kChannelTile;
    const std::int64_t cp = std::min(kChannelTile, channels - c0);
    aTiles.push_back(k.sbuf({cp, states}, DType::kFp32, "a_tile"));
    nisa::dmaCopy(aTiles.back(), a(ds(c0, cp)));
    hState.push_back(k.sbuf({cp, states}, DType::kFp32, "h_state"));
  }

  // B[n, t0:t0+ls] and C[n, t0:t0+ls] on every partition, as [128, N, ls], each declared at one
  // site (one buffer ring) whether loaded up front or prefetched.
  const Loc bSite = Loc::current();
  const Loc cSite = Loc::current();
  struct Rows {
    Tensor b;
    Tensor c;
  };
  auto loadRows = [&](std::int64_t t0, std::optional<Engine> engine) {
    const std::int64_t ls = std::min(seq, length - t0);
    auto broadcast = [&](const Tensor& src, const char* name, const Loc& site) {
      Tensor tile = k.sbuf({kChannelTile, states, ls}, DType::kFp32, name, std::nullopt, site);
      Tensor view = src(ds(0, 1), ds(t0, ls), site)
                        .broadcast(0, kChannelTile, site)
                        .pattern(kChannelTile, {{length, states}, {1, ls}}, 0, site);
      nisa::dmaCopy(tile, view, std::nullopt, std::nullopt, isa::DmaOobMode::kError, engine, site);
      return tile;
    };
    return Rows{broadcast(b, "b_bcast", bSite), broadcast(c, "c_bcast", cSite)};
  };

  std::optional<PendingItem> pending;
  std::int64_t items = 0;
  Rows next = loadRows(0, std::nullopt);
  for (std::int64_t t0 = 0; t0 < length; t0 += seq) {
    const std::int64_t ls = std::min(seq, length - t0);
    const Tensor bBcast = next.b;
    const Tensor cBcast = next.c;
    for (std::int64_t ct = 0; ct < channelTiles; ++ct) {
      const std::int64_t c0 = ct * kChannelTile;
      const std::int64_t cp = std::min(kChannelTile, channels - c0);
      Tensor deltaTile = k.sbuf({cp, ls}, DType::kFp32, "delta_tile");
      Tensor uTile = k.sbuf({cp, ls}, DType::kFp32, "u_tile");
      nisa::dmaCopy(deltaTile, delta(ds(c0, cp), ds(t0, ls)));
      nisa::dmaCopy(uTile, u(ds(c0, cp), ds(t0, ls)));

      // dA = exp(delta * A[:, n]) behind a zero that restarts the scan at each state row.
      Tensor dA = k.sbuf({cp, states, ls + 1}, DType::kFp32, "delta_a");
      nisa::memset(dA(all, all, 0), 0.0f, Engine::kAct);
      for (std::int64_t n = 0; n < states; ++n) {
        nisa::activation(dA(all, n, ds(1, ls)), deltaTile, isa::ActivationFunction::kExp, 0.0f,
                         aTiles[static_cast<std::size_t>(ct)](all, ds(n, 1)));
      }

      // dBu = B[n] * delta * u behind the state carried in. dBu lives until the item's output
      // stage one item later; alternating two declaration sites (two rings of two) lets the next
      // items' GpSimd work start before that.
      Tensor dBu = items++ % 2 == 0 ? k.sbuf({cp, states, ls + 1}, DType::kFp32, "delta_bu_even")
                                    : k.sbuf({cp, states, ls + 1}, DType::kFp32, "delta_bu_odd");
      Tensor deltaU = k.sbuf({cp, ls}, DType::kFp32, "delta_u");
      nisa::tensorTensor(deltaU, deltaTile, uTile, AluOp::kMultiply, Engine::kPool);
      nisa::tensorTensor(dBu(all, all, ds(1, ls)), bBcast(ds(0, cp), all, all),
                         deltaU.expandDim(1).broadcast(1, states), AluOp::kMultiply, Engine::kPool);
      Tensor& h = hState[static_cast<std::size_t>(ct)];
      if (t0 == 0) {
        nisa::memset(dBu(all, all, 0), 0.0f, Engine::kAct);
      } else {
        nisa::tensorCopy(dBu(all, all, 0), h, Engine::kDve);
      }

      // h[:, n, t] for the tile, in place, and the last step's state for the next tile.
      nisa::tensorTensorScan(dBu, dA, dBu, 0.0f, AluOp::kMultiply, AluOp::kAdd);
      if (t0 + ls < length) {
        nisa::tensorCopy(h, dBu(all, all, ls), Engine::kDve);
      }

      if (pending) {
        finishItem(k, y, *pending);
      }
      // The next sequence tile's B and C (4 N Ls bytes per partition each) are triggered by
      // GpSimd here, once the previous tile's last output stage has released their buffers:
      // issued up front with the first tile's they would share the DMA bandwidth with them and
      // delay the start.
      if (ct == 0 && t0 + seq < length) {
        next = loadRows(t0 + seq, Engine::kPool);
      }
      pending = PendingItem{c0, cp, t0, ls, dBu, cBcast};
    }
  }
  if (pending) {
    finishItem(k, y, *pending);
  }
  return y;
}

std::vector<HostTensor> selectiveScanReference(std::span<const HostTensor> in) {
  const HostTensor& delta = in[0];
  const HostTensor& u = in[1];
  const HostTensor& a = in[2];
  const HostTensor& b = in[3];
  const HostTensor& c = in[4];
  const std::int64_t channels = delta.dim(0);
  const std::int64_t length = delta.dim(1);
  const std::int64_t states = a.dim(1);
  HostTensor y = HostTensor::zeros({channels, length});
  std::vector<double> h(static_cast<std::size_t>(states));
  for (std::int64_t ch = 0; ch < channels; ++ch) {
    std::fill(h.begin(), h.end(), 0.0);
    for (std::int64_t t = 0; t < length; ++t) {
      const double dt = delta[ch * length + t];
      double sum = 0.0;
      for (std::int64_t n = 0; n < states; ++n) {
        double& state = h[static_cast<std::size_t>(n)];
        state =
            std::exp(dt * a[ch * states + n]) * state + dt * b[n * length + t] * u[ch * length + t];
        sum += c[n * length + t] * state;
      }
      y[ch * length + t] = sum;
    }
  }
  return {y};
}

std::vector<HostTensor> selectiveScanInputs(std::span<const kernel::TensorSpec> specs,
                                            std::uint64_t seed) {
  std::vector<HostTensor> inputs = randomInputs(specs, seed);
  const HostTensor deltaRange = randomInput(specs[0], seed + 100, 0.001, 0.1);
  inputs[0] = deltaRange;
  HostTensor& a = inputs[2];
  const std::int64_t states = a.dim(1);
  for (std::int64_t i = 0; i < a.size(); ++i) {
    a[i] = roundTo(-static_cast<double>(i % states + 1), specs[2].dtype);
  }
  return inputs;
}

}  // namespace trn::kernels
