// The NKI fused_mamba tutorial's mamba_v1..v3 (see mamba_tutorial.h), in the tile language.
#include "trn/kernels/mamba_tutorial.h"

#include <algorithm>
#include <source_location>
#include <string>

#include "trn/kernel/nisa.h"
#include "trn/kernel/nl.h"
#include "trn/kernels/selective_scan.h"

namespace trn::kernels {

using kernel::all;
using kernel::ds;
using kernel::Kernel;
using kernel::Tensor;
namespace nisa = kernel::nisa;
namespace nl = kernel::nl;

namespace {

using Loc = std::source_location;
using isa::ActivationFunction;
using isa::AluOp;

/// nl.tile_size.pmax: the channels of one tile.
constexpr std::int64_t kChannelPsize = 128;
/// mamba_v3's sequence tile ("decided through empirical profiling data", the tutorial says).
constexpr std::int64_t kSeqLenFsize = 512;

/// The shapes the tutorial's kernels take: [batch, channels, seq_len] delta and u, A
/// [channels, state_size], B and C [batch, state_size, seq_len], one float dtype, channels a
/// multiple of 128 (and seq_len of `seqMultiple`).
void checkInputs(Kernel& k, const std::string& name, const Tensor& delta, const Tensor& u,
                 const Tensor& a, const Tensor& b, const Tensor& c, std::int64_t seqMultiple,
                 Loc loc = Loc::current()) {
  auto fail = [&](const std::string& message) { k.fail(name + ": " + message, loc); };
  if (delta.rank() != 3 || u.rank() != 3 || a.rank() != 2 || b.rank() != 3 || c.rank() != 3) {
    fail(
        "takes delta and u [batch, channels, seq_len], A [channels, state_size], B and C "
        "[batch, state_size, seq_len]");
  }
  const std::int64_t batch = delta.shape(0);
  const std::int64_t channels = delta.shape(1);
  const std::int64_t seqLen = delta.shape(2);
  const std::int64_t states = a.shape(1);
  const std::vector<std::int64_t> bc = {batch, states, seqLen};
  if (u.shape() != delta.shape() || a.shape(0) != channels || b.shape() != bc || c.shape() != bc) {
    fail("delta " + formatShape(delta.shape()) + ", u " + formatShape(u.shape()) + ", A " +
         formatShape(a.shape()) + ", B " + formatShape(b.shape()) + " and C " +
         formatShape(c.shape()) + " do not agree");
  }
  for (const Tensor* t : {&u, &a, &b, &c}) {
    if (t->dtype() != delta.dtype() ||
        (delta.dtype() != DType::kFp32 && delta.dtype() != DType::kBf16)) {
      fail("all inputs must be fp32, or all bf16");
    }
  }
  if (channels % kChannelPsize != 0) {
    fail("channels (" + std::to_string(channels) +
         ") must be a multiple of 128, as in the "
         "tutorial");
  }
  if (seqLen % seqMultiple != 0) {
    fail("seq_len (" + std::to_string(seqLen) + ") must be a multiple of " +
         std::to_string(seqMultiple) + ", as in the tutorial");
  }
}

/// The columns of one partition broadcast: B's and C's of a state fit in PSUM together
/// (16 KiB per partition = 2 x 2048 fp32), so a longer sequence is broadcast and multiplied in
/// pieces of this many columns.
constexpr std::int64_t kBroadcastColumns = 2048;

/// out = x * row broadcast to x's partitions, as the tutorial writes `row.broadcast_to(...)`
/// followed by `nisa.tensor_tensor`: the broadcast is one tensor-engine instruction (per 512
/// columns) whose PSUM result the vector engine reads, no copy between (the tutorial's steps 3
/// and 5: "p-dim broadcast + tensor_tensor").
void multiplyByBroadcastRow(const Tensor& out, const Tensor& x, const Tensor& row,
                            const Tensor& ones) {
  const std::int64_t cols = x.shape(1);
  for (std::int64_t c = 0; c < cols; c += kBroadcastColumns) {
    const std::int64_t n = std::min(kBroadcastColumns, cols - c);
    const Tensor bcast = nl::broadcastPartitionsInPsum(row(all, ds(c, n)), ones);
    nisa::tensorTensor(out(all, ds(c, n)), x(all, ds(c, n)), bcast, AluOp::kMultiply);
  }
}

/// Steps 3 to 5 of the tutorial for one state, on the tile's columns: deltaBu = delta * u * B,
/// the scan of deltaA and deltaBu from `initial`, and its product with C, written to `scanC`
/// (v3 puts it in PSUM). `ones` is the [1, 128] row the broadcasts multiply. Returns the scan.
Tensor scanState(Kernel& k, const Tensor& deltaA, const Tensor& deltaI, const Tensor& uI,
                 const Tensor& bI, const Tensor& cI, const nisa::Scalar& initial,
                 const Tensor& ones, const Tensor& scanC) {
  const std::int64_t cols = deltaA.shape(1);
  const DType dtype = deltaI.dtype();
  Tensor deltaU = k.sbuf({kChannelPsize, cols}, dtype, "deltaU");
  nisa::tensorTensor(deltaU, deltaI, uI, AluOp::kMultiply);
  Tensor deltaBu = k.sbuf({kChannelPsize, cols}, dtype, "deltaBu");
  multiplyByBroadcastRow(deltaBu, deltaU, bI, ones);
  Tensor scan = k.sbuf({kChannelPsize, cols}, dtype, "scan_res");
  nisa::tensorTensorScan(scan, deltaA, deltaBu, initial, AluOp::kMultiply, AluOp::kAdd);
  multiplyByBroadcastRow(scanC, scan, cI, ones);
  return scan;
}

/// deltaA = exp(delta_i * A_i) (steps 1 and 2), A_i the per-partition scale.
Tensor deltaATile(Kernel& k, const Tensor& deltaI, const Tensor& aI) {
  Tensor deltaA = k.sbuf({kChannelPsize, deltaI.shape(1)}, deltaI.dtype(), "deltaA");
  nisa::activation(deltaA, deltaI, ActivationFunction::kExp, 0.0f, aI);
  return deltaA;
}

}  // namespace

Tensor mambaV1(Kernel& k, Tensor delta, Tensor u, Tensor a, Tensor b, Tensor c) {
  checkInputs(k, "mamba_v1", delta, u, a, b, c, 1);
  const std::int64_t batch = delta.shape(0);
  const std::int64_t channels = delta.shape(1);
  const std::int64_t seqLen = delta.shape(2);
  const std::int64_t states = a.shape(1);
  const std::int64_t channelTiles = channels / kChannelPsize;
  Tensor output = k.output("output", delta.shape(), delta.dtype());
  const Tensor ones = nl::full(k, {1, kChannelPsize}, delta.dtype(), 1.0f);
  for (std::int64_t i = 0; i < batch; ++i) {
    // The partial sums over the processed states, of every channel tile.
    std::vector<Tensor> scanCAccum;
    for (std::int64_t t = 0; t < channelTiles; ++t) {
      scanCAccum.push_back(nl::zeros(k, {kChannelPsize, seqLen}, delta.dtype()));
    }
    for (std::int64_t n = 0; n < states; ++n) {
      for (std::int64_t t = 0; t < channelTiles; ++t) {
        const std::int64_t c0 = t * kChannelPsize;
        const Tensor deltaI = nl::load(delta(i, ds(c0, kChannelPsize), all));
        const Tensor aI = nl::load(a(ds(c0, kChannelPsize), ds(n, 1)));
        const Tensor deltaA = deltaATile(k, deltaI, aI);
        const Tensor uI = nl::load(u(i, ds(c0, kChannelPsize), all));
        const Tensor bI = nl::load(b(i, ds(n, 1), all));
        const Tensor cI = nl::load(c(i, ds(n, 1), all));
        Tensor scanC = k.sbuf({kChannelPsize, seqLen}, delta.dtype(), "scanC");
        scanState(k, deltaA, deltaI, uI, bI, cI, 0.0f, ones, scanC);
        Tensor& accum = scanCAccum[static_cast<std::size_t>(t)];
        nisa::tensorTensor(accum, accum, scanC, AluOp::kAdd);
      }
    }
    for (std::int64_t t = 0; t < channelTiles; ++t) {
      nl::store(output(i, ds(t * kChannelPsize, kChannelPsize), all),
                scanCAccum[static_cast<std::size_t>(t)]);
    }
  }
  return output;
}

Tensor mambaV2(Kernel& k, Tensor delta, Tensor u, Tensor a, Tensor b, Tensor c) {
  checkInputs(k, "mamba_v2", delta, u, a, b, c, 1);
  const std::int64_t batch = delta.shape(0);
  const std::int64_t channels = delta.shape(1);
  const std::int64_t seqLen = delta.shape(2);
  const std::int64_t states = a.shape(1);
  Tensor output = k.output("output", delta.shape(), delta.dtype());
  const Tensor ones = nl::full(k, {1, kChannelPsize}, delta.dtype(), 1.0f);
  for (std::int64_t i = 0; i < batch; ++i) {
    for (std::int64_t c0 = 0; c0 < channels; c0 += kChannelPsize) {
      Tensor scanCAccum = nl::zeros(k, {kChannelPsize, seqLen}, delta.dtype());
      // delta and u once, reused across the states.
      const Tensor deltaI = nl::load(delta(i, ds(c0, kChannelPsize), all));
      const Tensor uI = nl::load(u(i, ds(c0, kChannelPsize), all));
      for (std::int64_t n = 0; n < states; ++n) {
        const Tensor aI = nl::load(a(ds(c0, kChannelPsize), ds(n, 1)));
        const Tensor deltaA = deltaATile(k, deltaI, aI);
        const Tensor bI = nl::load(b(i, ds(n, 1), all));
        const Tensor cI = nl::load(c(i, ds(n, 1), all));
        Tensor scanC = k.sbuf({kChannelPsize, seqLen}, delta.dtype(), "scanC");
        scanState(k, deltaA, deltaI, uI, bI, cI, 0.0f, ones, scanC);
        nisa::tensorTensor(scanCAccum, scanCAccum, scanC, AluOp::kAdd);
      }
      nl::store(output(i, ds(c0, kChannelPsize), all), scanCAccum);
    }
  }
  return output;
}

Tensor mambaV3(Kernel& k, Tensor delta, Tensor u, Tensor a, Tensor b, Tensor c) {
  checkInputs(k, "mamba_v3", delta, u, a, b, c, kSeqLenFsize);
  const std::int64_t batch = delta.shape(0);
  const std::int64_t channels = delta.shape(1);
  const std::int64_t seqLen = delta.shape(2);
  const std::int64_t states = a.shape(1);
  Tensor output = k.output("output", delta.shape(), delta.dtype());
  const Tensor ones = nl::full(k, {1, kChannelPsize}, delta.dtype(), 1.0f);
  for (std::int64_t i = 0; i < batch; ++i) {
    for (std::int64_t c0 = 0; c0 < channels; c0 += kChannelPsize) {
      Tensor scanCAccum = nl::zeros(k, {kChannelPsize, seqLen}, delta.dtype());
      const Tensor deltaI = nl::load(delta(i, ds(c0, kChannelPsize), all));
      const Tensor uI = nl::load(u(i, ds(c0, kChannelPsize), all));
      for (std::int64_t n = 0; n < states; ++n) {
        const Tensor aI = nl::load(a(ds(c0, kChannelPsize), ds(n, 1)));
        // The last scan result of the previous sequence tile.
        Tensor scanInit = nl::zeros(k, {kChannelPsize, 1}, delta.dtype());
        for (std::int64_t s0 = 0; s0 < seqLen; s0 += kSeqLenFsize) {
          const Tensor deltaSlice = deltaI(all, ds(s0, kSeqLenFsize));
          const Tensor deltaA = deltaATile(k, deltaSlice, aI);
          const Tensor bI = nl::load(b(i, ds(n, 1), ds(s0, kSeqLenFsize)));
          const Tensor cI = nl::load(c(i, ds(n, 1), ds(s0, kSeqLenFsize)));
          // "Use PSUM buffer to reduce accumulation latency", as the tutorial does.
          Tensor scanC = k.psum({kChannelPsize, kSeqLenFsize}, delta.dtype(), "scanC");
          const Tensor scanRes = scanState(k, deltaA, deltaSlice, uI(all, ds(s0, kSeqLenFsize)),
                                           bI, cI, scanInit, ones, scanC);
          nisa::tensorCopy(scanInit, scanRes(all, ds(kSeqLenFsize - 1, 1)));
          Tensor accum = scanCAccum(all, ds(s0, kSeqLenFsize));
          nisa::tensorTensor(accum, accum, scanC, AluOp::kAdd);
        }
      }
      nl::store(output(i, ds(c0, kChannelPsize), all), scanCAccum);
    }
  }
  return output;
}

std::vector<HostTensor> mambaReference(std::span<const HostTensor> in) {
  const std::int64_t batch = in[0].dim(0);
  const std::int64_t channels = in[0].dim(1);
  const std::int64_t seqLen = in[0].dim(2);
  // One batch at a time through the 2-D reference.
  auto slice = [](const HostTensor& t, std::int64_t i) {
    const std::int64_t rows = t.dim(1);
    const std::int64_t cols = t.dim(2);
    HostTensor out = HostTensor::zeros({rows, cols});
    std::copy_n(t.values.begin() + i * rows * cols, rows * cols, out.values.begin());
    return out;
  };
  HostTensor y = HostTensor::zeros({batch, channels, seqLen});
  for (std::int64_t i = 0; i < batch; ++i) {
    const std::vector<HostTensor> one = {slice(in[0], i), slice(in[1], i), in[2], slice(in[3], i),
                                         slice(in[4], i)};
    const HostTensor yi = selectiveScanReference(one)[0];
    std::copy(yi.values.begin(), yi.values.end(), y.values.begin() + i * channels * seqLen);
  }
  return {y};
}

}  // namespace trn::kernels
