// Flash-attention forward in the tile language (see attention.h). The kernel is a list of work
// items, one per (query head, 128-query tile, key block), run as a software pipeline: step i
// issues the scores and running max of item i, the exp of item i - 1, the P transposes of item
// i - 3, P @ v of item i - 5 and the accumulator update of item i - 6, so each engine's in-order
// stream only meets work whose inputs were produced in earlier steps.
#include "trn/kernels/attention.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <map>
#include <optional>
#include <source_location>
#include <string>
#include <utility>
#include <vector>

#include "tile_util.h"
#include "trn/kernel/nisa.h"
#include "trn/kernel/nl.h"

namespace trn::kernels {

using kernel::all;
using kernel::ds;
using kernel::Kernel;
using kernel::Tensor;
namespace nisa = kernel::nisa;
using isa::ActivationFunction;
using isa::AluOp;
using isa::Engine;

namespace {

using Loc = std::source_location;

constexpr std::int64_t kTile = 128;          ///< queries per tile, keys per transpose / P @ v
constexpr std::int64_t kChunk = 512;         ///< keys per q k^T matmul (one PSUM bank of fp32)
constexpr std::int64_t kMaxSequence = 8192;  ///< k^T and [v | 1] of a kv head stay in SBUF
constexpr std::int64_t kBlockChunks = kAttentionBlockKeys / kChunk;

/// One work item: a block of keys for one query tile.
struct Item {
  std::int64_t head = 0;    ///< query head
  std::int64_t kvHead = 0;  ///< its key/value head
  std::int64_t q0 = 0;      ///< first query
  std::int64_t rows = 0;    ///< queries in the tile (<= 128)
  std::int64_t k0 = 0;      ///< first key of the block
  std::int64_t keys = 0;    ///< keys in the block
  bool first = false;       ///< first block of its query tile
  bool last = false;        ///< last block of its query tile
  bool masked = false;      ///< its last chunk holds the causal diagonal
};

/// What an item's stages hand to the next ones.
struct ItemState {
  std::vector<Tensor> bias;     ///< the bias tile per chunk (SBUF), when there is a bias
  std::vector<Tensor> scores;   ///< q k^T per chunk (PSUM, or SBUF when masked or biased), fp32
  std::vector<Tensor> p;        ///< exp'd scores per chunk, [rows, chunk keys], input dtype
  std::vector<Tensor> pT;       ///< transposed P per chunk, [128, subtiles * rows], input dtype
  Tensor negScaledMax;          ///< -scale * running max, [rows, 1] fp32
  std::optional<Tensor> alpha;  ///< exp(scale * (old max - new max)), absent for the first block
  Tensor pv;                    ///< [o | l] of this block, PSUM fp32
};

struct Shapes {
  std::int64_t hq = 0;
  std::int64_t hkv = 0;
  std::int64_t s = 0;
  std::int64_t d = 0;
};

Shapes checkInputs(Kernel& k, const Tensor& q, const Tensor& key, const Tensor& value,
                   Loc loc = Loc::current()) {
  if (q.rank() != 3 || key.rank() != 3 || value.rank() != 3) {
    k.fail("flash_attention takes 3-D q [Hq, S, D], k [Hkv, S, D] and v [Hkv, S, D]", loc);
  }
  if (key.shape() != value.shape()) {
    k.fail("flash_attention: k " + formatShape(key.shape()) + " and v " +
               formatShape(value.shape()) + " must have one shape",
           loc);
  }
  const Shapes s{q.shape(0), key.shape(0), q.shape(1), q.shape(2)};
  if (key.shape(1) != s.s || key.shape(2) != s.d) {
    k.fail("flash_attention: q " + formatShape(q.shape()) + " and k " + formatShape(key.shape()) +
               " must have the same sequence length and head dim",
           loc);
  }
  if (s.d < 1 || s.d > kTile) {
    k.fail("flash_attention: head dim D = " + std::to_string(s.d) +
               " is not supported (1 to 128: the contraction of q k^T on the partitions)",
           loc);
  }
  if (s.hq % s.hkv != 0) {
    k.fail("flash_attention: Hq = " + std::to_string(s.hq) +
               " query heads is not a multiple of Hkv = " + std::to_string(s.hkv) +
               " key/value heads",
           loc);
  }
  if (s.s > kMaxSequence) {
    k.fail("flash_attention: S = " + std::to_string(s.s) + " exceeds " +
               std::to_string(kMaxSequence) + " (k^T and v of a head are kept in SBUF)",
           loc);
  }
  if (q.dtype() != key.dtype() || q.dtype() != value.dtype() ||
      (q.dtype() != DType::kBf16 && q.dtype() != DType::kFp32)) {
    k.fail("flash_attention: q, k and v must all be bf16 or all fp32", loc);
  }
  return s;
}

/// The bias must be [S, S], bf16 or fp32.
void checkBias(Kernel& k, const Tensor& bias, const Shapes& s, Loc loc = Loc::current()) {
  if (bias.rank() != 2 || bias.shape(0) != s.s || bias.shape(1) != s.s) {
    k.fail("flash_attention: the bias " + formatShape(bias.shape()) + " must be [S, S] = [" +
               std::to_string(s.s) + ", " + std::to_string(s.s) + "]",
           loc);
  }
  if (bias.dtype() != DType::kBf16 && bias.dtype() != DType::kFp32) {
    k.fail("flash_attention: the bias must be bf16 or fp32", loc);
  }
}

/// The work items of query heads [heads.begin, heads.end()) in pipeline order: heads, then query
/// tiles, then key blocks; with `tilesOverHeads`, per kv head its query tiles, then the query
/// heads that read it, then key blocks, so the heads of a group meet the same bias tiles in a row.
std::vector<Item> workItems(const Shapes& s, bool causal, detail::ProgramShare heads,
                            bool tilesOverHeads) {
  std::vector<Item> items;
  const std::int64_t group = s.hq / s.hkv;
  auto addBlocks = [&](std::int64_t h, std::int64_t q0) {
    const std::int64_t rows = std::min(kTile, s.s - q0);
    const std::int64_t keyEnd = causal ? q0 + rows : s.s;
    for (std::int64_t k0 = 0; k0 < keyEnd; k0 += kAttentionBlockKeys) {
      Item it;
      it.head = h;
      it.kvHead = h / group;
      it.q0 = q0;
      it.rows = rows;
      it.k0 = k0;
      it.keys = std::min(kAttentionBlockKeys, keyEnd - k0);
      it.first = k0 == 0;
      it.last = k0 + it.keys == keyEnd;
      it.masked = causal && it.last;
      items.push_back(it);
    }
  };
  // Runs of query heads sharing a kv head (one run per head without tilesOverHeads).
  for (std::int64_t h0 = heads.begin; h0 < heads.end();) {
    const std::int64_t h1 =
        tilesOverHeads ? std::min(heads.end(), (h0 / group + 1) * group) : h0 + 1;
    for (std::int64_t q0 = 0; q0 < s.s; q0 += kTile) {
      for (std::int64_t h = h0; h < h1; ++h) {
        addBlocks(h, q0);
      }
    }
    h0 = h1;
  }
  return items;
}

class FlashAttention {
 public:
  /// The attention of query heads `heads` (all of o is declared; only their rows are written).
  FlashAttention(Kernel& k, Tensor q, Tensor key, Tensor value, const Shapes& s, bool causal,
                 const AttentionScores& scores, detail::ProgramShare heads)
      : k_(k),
        q_(q),
        key_(key),
        value_(value),
        bias_(scores.bias),
        s_(s),
        dt_(q.dtype()),
        scale_(
            scores.scale.value_or(static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.d))))),
        expScale_(bias_ ? 1.0f : scale_),
        items_(workItems(s, causal, heads, scores.bias.has_value())),
        state_(items_.size()) {
    out_ = k.output("o", q.shape(), dt_);
    if (items_.empty()) {
      return;  // an SPMD program instance without heads emits nothing
    }
    // Row index p of each partition, the causal bound of range_select.
    rowIndex_ = k.sbuf({kTile, 1}, DType::kFp32, "row_index");
    nisa::iota(rowIndex_, {{0, 1}}, 0, 1);
  }

  Tensor run() {
    const auto n = static_cast<std::int64_t>(items_.size());
    // Within a step each engine meets first the work that depends only on earlier steps and
    // produces what the other engines need in this step: the tensor engine q k^T, transposes,
    // P @ v; the scalar engine the rescale, exp, copies; the vector engine the max, copies, add.
    auto inRange = [n](std::int64_t j) { return j >= 0 && j < n; };
    for (std::int64_t i = 0; i < n + kAccumulateLag; ++i) {
      if (inRange(i - kAccumulateLag)) {
        stageRescale(i - kAccumulateLag);
      }
      if (inRange(i)) {
        stageScores(i);
      }
      if (inRange(i - kExpLag)) {
        stageExp(i - kExpLag);
      }
      if (inRange(i - kTransposeLag)) {
        stageTranspose(i - kTransposeLag);
      }
      if (inRange(i - kValuesLag)) {
        stageValues(i - kValuesLag);
      }
      if (inRange(i - kAccumulateLag)) {
        stageAccumulate(i - kAccumulateLag);
      }
    }
    return out_;
  }

 private:
  /// k^T [D, S] and [v | 1] [128, key tiles, D + 1] of kv head g, loaded 512 keys at a time as
  /// the items reach them (keys [0, end)), so the first tiles start before the whole head is in.
  void loadKv(std::int64_t g, std::int64_t end) {
    if (!kT_.contains(g)) {
      const std::int64_t tiles = (s_.s + kTile - 1) / kTile;
      kT_[g] = k_.sbuf({s_.d, s_.s}, dt_, "kT");
      v_[g] = k_.sbuf({kTile, tiles, s_.d + 1}, dt_, "v_ones");
      nisa::memset(v_[g](all, all, ds(s_.d, 1)), 1.0f, Engine::kPool);
      loadedKeys_[g] = 0;
    }
    const Tensor kT = kT_.at(g);
    const Tensor v = v_.at(g);
    for (std::int64_t& c0 = loadedKeys_[g]; c0 < end; c0 += kChunk) {
      const std::int64_t n = std::min(kChunk, s_.s - c0);
      loadTransposed(kT(all, ds(c0, n)), key_(g, ds(c0, n)).reshape({n, s_.d}));
      const std::int64_t full = n / kTile;
      if (full > 0) {
        nisa::dmaCopy(
            v(all, ds(c0 / kTile, full), ds(0, s_.d)),
            value_(g, ds(c0, full * kTile)).reshape({full, kTile, s_.d}).permute({1, 0, 2}));
      }
      if (full * kTile < n) {
        const std::int64_t rest = n - full * kTile;
        nisa::dmaCopy(v(ds(0, rest), c0 / kTile + full, ds(0, s_.d)),
                      value_(g, ds(c0 + full * kTile, rest)).reshape({rest, s_.d}));
      }
    }
  }

  /// dst [D, n] = src^T for an HBM src [n, D]: one DMA transpose where the chip has one (Trn2+),
  /// else (Trn1) 128-row loads transposed on the tensor engine through PSUM.
  void loadTransposed(const Tensor& dst, const Tensor& src) {
    const std::int64_t elementBytes = byteSize(src.dtype());
    if ((k_.limits().dmaTransposeElementBytes & (1u << elementBytes)) != 0) {
      nisa::dmaTranspose(dst, src);
      return;
    }
    const std::int64_t n = src.shape()[0];
    for (std::int64_t r0 = 0; r0 < n; r0 += kTile) {
      const std::int64_t m = std::min(kTile, n - r0);
      Tensor rows = k_.sbuf({kTile, s_.d}, dt_, "rows")(ds(0, m), all);
      nisa::dmaCopy(rows, src(ds(r0, m), all));
      Tensor transposed = k_.psum({s_.d, kTile}, dt_, "rows_T")(all, ds(0, m));
      nisa::ncTranspose(transposed, rows);
      nisa::tensorCopy(dst(all, ds(r0, m)), transposed);
    }
  }

  /// q^T [D, up to 512 queries] of the query group holding item i's tile, loaded once (one DMA
  /// transpose per group has longer contiguous runs than one per tile).
  void loadQuery(std::int64_t i) {
    const Item& it = items_[static_cast<std::size_t>(i)];
    const std::int64_t g0 = it.q0 / kChunk * kChunk;
    const std::int64_t key = it.head * s_.s + g0;
    if (qT_.contains(key)) {
      return;
    }
    const std::int64_t n = std::min(kChunk, s_.s - g0);
    Tensor qT = k_.sbuf({s_.d, kChunk}, dt_, "qT")(all, ds(0, n));
    loadTransposed(qT, q_(it.head, ds(g0, n)).reshape({n, s_.d}));
    qT_[key] = qT;
  }

  /// q^T [D, rows] of item i's query tile.
  Tensor queryTile(const Item& it) const {
    const std::int64_t g0 = it.q0 / kChunk * kChunk;
    return qT_.at(it.head * s_.s + g0)(all, ds(it.q0 - g0, it.rows));
  }

  /// Accounts for an instruction over n elements per partition on the scalar or vector engine
  /// in the load estimates: max(64, n) cycles (nki-reference §6.1) at 1.2 GHz or 0.96 GHz.
  void charge(Engine engine, std::int64_t n) {
    const auto cycles = static_cast<double>(std::max<std::int64_t>(64, n));
    (engine == Engine::kAct ? actLoad_ : dveLoad_) +=
        cycles / (engine == Engine::kAct ? 1.2 : 0.96);
  }

  /// The engine for a PSUM-to-SBUF copy of n elements per partition of `dtype` (the input dtype
  /// by default): the scalar or the vector engine (2x faster on 16-bit data), whichever would
  /// finish it first given the work already issued to both. Charges the copy to it.
  Engine pickCopyEngine(std::int64_t n, std::optional<DType> dtype = std::nullopt) {
    const bool halfWidth = dtype.value_or(dt_) == DType::kBf16;
    const double act = actLoad_ + static_cast<double>(std::max<std::int64_t>(64, n)) / 1.2;
    const double dve =
        dveLoad_ + static_cast<double>(std::max<std::int64_t>(64, halfWidth ? n / 2 : n)) / 0.96;
    if (act <= dve) {
      actLoad_ = act;
      return Engine::kAct;
    }
    dveLoad_ = dve;
    return Engine::kDve;
  }

  /// Stage A1: scores and the running max.
  void stageScores(std::int64_t i) {
    // Loads run ahead of the compute: this item's and the next ones' operands.
    const auto n = static_cast<std::int64_t>(items_.size());
    for (std::int64_t j = i; j < std::min(n, i + kLookahead); ++j) {
      const Item& ahead = items_[static_cast<std::size_t>(j)];
      loadKv(ahead.kvHead, ahead.k0 + ahead.keys);
      loadQuery(j);
    }
    for (std::int64_t j = i; bias_ && j < std::min(n, i + kBiasLookahead); ++j) {
      loadBias(j);
    }
    const Item& it = items_[static_cast<std::size_t>(i)];
    ItemState& st = state_[static_cast<std::size_t>(i)];
    const Tensor qT = queryTile(it);
    const Tensor kT = kT_.at(it.kvHead);
    const std::int64_t chunks = (it.keys + kChunk - 1) / kChunk;

    // s = q k^T per chunk into PSUM; the max of each chunk from PSUM (the diagonal chunk is
    // masked on the way, into SBUF).
    // Tiles are declared at their full size and used through views, so each declaration is one
    // ring of buffers whatever the ragged sizes.
    Tensor chunkMax =
        k_.sbuf({kTile, kBlockChunks}, DType::kFp32, "chunk_max")(ds(0, it.rows), ds(0, chunks));
    std::vector<Tensor>& scores = st.scores;
    for (std::int64_t c = 0; c < chunks; ++c) {
      const std::int64_t c0 = it.k0 + c * kChunk;
      const std::int64_t ck = std::min(kChunk, it.k0 + it.keys - c0);
      // Two rings (even and odd items), so the next item's scores never wait for this one's exp.
      Tensor sPsum = i % 2 == 0 ? k_.psum({kTile, kChunk}, DType::kFp32, "scores_even")
                                : k_.psum({kTile, kChunk}, DType::kFp32, "scores_odd");
      sPsum = sPsum(ds(0, it.rows), ds(0, ck));
      nisa::ncMatmul(sPsum, qT, kT(all, ds(c0, ck)));
      if (bias_) {
        // scale * s + bias, out of PSUM into SBUF; the exp then applies no scale.
        Tensor sBiased =
            k_.sbuf({kTile, kChunk}, DType::kFp32, "scores_biased")(ds(0, it.rows), ds(0, ck));
        charge(Engine::kDve, ck);
        nisa::scalarTensorTensor(sBiased, sPsum, AluOp::kMultiply, scale_, AluOp::kAdd,
                                 st.bias[static_cast<std::size_t>(c)]);
        sPsum = sBiased;
      }
      if (it.masked && c == chunks - 1) {
        Tensor sMasked =
            k_.sbuf({kTile, kChunk}, DType::kFp32, "scores_masked")(ds(0, it.rows), ds(0, ck));
        const Tensor bound = rowIndex_(ds(0, it.rows));
        charge(Engine::kDve, ck);
        nisa::rangeSelect(sMasked, sPsum, bound, bound, AluOp::kLessEqual, AluOp::kLessEqual,
                          isa::ReduceCmd::kResetReduce, chunkMax(all, ds(c, 1)), AluOp::kMax,
                          c0 - it.q0);
        scores.push_back(sMasked);
      } else {
        charge(Engine::kDve, ck);
        nisa::tensorReduce(chunkMax(all, ds(c, 1)), sPsum, AluOp::kMax, 1);
        scores.push_back(sPsum);
      }
    }
    st.bias.clear();
    Tensor blockMax = chunkMax;
    if (chunks > 1) {
      blockMax = k_.sbuf({kTile, 1}, DType::kFp32, "block_max")(ds(0, it.rows));
      charge(Engine::kDve, chunks);
      nisa::tensorReduce(blockMax, chunkMax, AluOp::kMax, 1);
    }
    // -scale * running max: min(-scale * block max, previous value). With a bias a row may see
    // only -inf in its first block: the minimum with FLT_MAX keeps the value finite, so that
    // block's exp gives 0 rather than exp(-inf + inf), and the next block's rescale factor 0.
    st.negScaledMax = k_.sbuf({kTile, 1}, DType::kFp32, "neg_scaled_max")(ds(0, it.rows));
    charge(Engine::kDve, 1);
    if (it.first && bias_) {
      nisa::tensorScalar(st.negScaledMax, blockMax, AluOp::kMultiply, -expScale_, false,
                         AluOp::kMin, FLT_MAX);
    } else if (it.first) {
      nisa::tensorScalar(st.negScaledMax, blockMax, AluOp::kMultiply, -expScale_);
    } else {
      const Tensor previous = state_[static_cast<std::size_t>(i - 1)].negScaledMax;
      nisa::tensorScalar(st.negScaledMax, blockMax, AluOp::kMultiply, -expScale_, false,
                         AluOp::kMin, previous);
    }
  }

  /// Item i's bias tiles, one per 512-key chunk: bias[queries of the tile, keys of the chunk],
  /// loaded once for the query heads of a kv head that run the tile one after another (items in
  /// tilesOverHeads order), kept until the next query tile's are loaded.
  void loadBias(std::int64_t i) {
    const Item& it = items_[static_cast<std::size_t>(i)];
    ItemState& st = state_[static_cast<std::size_t>(i)];
    if (!st.bias.empty()) {
      return;
    }
    const std::pair<std::int64_t, std::int64_t> block{it.q0, it.k0};
    if (auto loaded = biasTiles_.find(block); loaded != biasTiles_.end()) {
      st.bias = loaded->second;
      return;
    }
    std::erase_if(biasTiles_, [&](const auto& entry) { return entry.first.first != it.q0; });
    for (std::int64_t c0 = it.k0; c0 < it.k0 + it.keys; c0 += kChunk) {
      const std::int64_t ck = std::min(kChunk, it.k0 + it.keys - c0);
      Tensor tile = k_.sbuf({kTile, kChunk}, bias_->dtype(), "bias")(ds(0, it.rows), ds(0, ck));
      nisa::dmaCopy(tile, (*bias_)(ds(it.q0, it.rows), ds(c0, ck)));
      st.bias.push_back(tile);
    }
    biasTiles_[block] = st.bias;
  }

  /// Stage A2: the rescale factor of the accumulator and p = exp(scale * s - scale * max),
  /// rounded to the input dtype for the P @ v matmul.
  void stageExp(std::int64_t i) {
    const Item& it = items_[static_cast<std::size_t>(i)];
    ItemState& st = state_[static_cast<std::size_t>(i)];
    if (!it.first) {
      const Tensor previous = state_[static_cast<std::size_t>(i - 1)].negScaledMax;
      Tensor alpha = k_.sbuf({kTile, 1}, DType::kFp32, "alpha")(ds(0, it.rows));
      charge(Engine::kAct, 1);
      nisa::activation(alpha, previous, ActivationFunction::kExp, st.negScaledMax, -1.0f);
      st.alpha = alpha;
    }
    for (const Tensor& sc : st.scores) {
      Tensor p = k_.sbuf({kTile, kChunk}, dt_, "p")(ds(0, it.rows), ds(0, sc.shape(1)));
      charge(Engine::kAct, sc.shape(1));
      nisa::activation(p, sc, ActivationFunction::kExp, st.negScaledMax, expScale_);
      st.p.push_back(p);
    }
    st.scores.clear();
  }

  /// Stage B: P^T (keys onto the partitions) on the tensor engine, copied back to SBUF.
  void stageTranspose(std::int64_t i) {
    const Item& it = items_[static_cast<std::size_t>(i)];
    ItemState& st = state_[static_cast<std::size_t>(i)];
    for (const Tensor& p : st.p) {
      const std::int64_t ck = p.shape(1);
      const std::int64_t sub = (ck + kTile - 1) / kTile;
      Tensor pTPsum = k_.psum({kTile, kChunk}, dt_, "pT_psum")(all, ds(0, sub * it.rows));
      Tensor pT = k_.sbuf({kTile, kChunk}, dt_, "pT")(all, ds(0, sub * it.rows));
      for (std::int64_t t = 0; t < sub; ++t) {
        const std::int64_t kk = std::min(kTile, ck - t * kTile);
        nisa::ncTranspose(pTPsum(ds(0, kk), ds(t * it.rows, it.rows)), p(all, ds(t * kTile, kk)));
      }
      // The full subtiles in one copy, a ragged last one on its own partitions.
      const std::int64_t full = ck / kTile;
      const Engine engine = pickCopyEngine(sub * it.rows);
      if (full > 0) {
        nisa::tensorCopy(pT(all, ds(0, full * it.rows)), pTPsum(all, ds(0, full * it.rows)),
                         engine);
      }
      if (full < sub) {
        const std::int64_t kk = ck - full * kTile;
        nisa::tensorCopy(pT(ds(0, kk), ds(full * it.rows, it.rows)),
                         pTPsum(ds(0, kk), ds(full * it.rows, it.rows)), engine);
      }
      st.pT.push_back(pT);
    }
    st.p.clear();
  }

  /// Stores the output rows [g0, g0 + n) of head h from their group tile: the full 128-row tiles
  /// in one DMA, a ragged last tile in another. `engine` is the last writer, which triggers it.
  void storeGroup(const Tensor& group, std::int64_t h, std::int64_t g0, std::int64_t n,
                  Engine engine) {
    const std::int64_t full = n / kTile;
    if (full > 0) {
      nisa::dmaCopy(out_(h, ds(g0, full * kTile)).reshape({full, kTile, s_.d}).permute({1, 0, 2}),
                    group(all, ds(0, full), all), std::nullopt, std::nullopt,
                    isa::DmaOobMode::kError, engine);
    }
    if (full * kTile < n) {
      const std::int64_t rest = n - full * kTile;
      nisa::dmaCopy(out_(h, ds(g0 + full * kTile, rest)).reshape({rest, s_.d}),
                    group(ds(0, rest), full, all), std::nullopt, std::nullopt,
                    isa::DmaOobMode::kError, engine);
    }
  }

  /// Stage C2, first half (at the start of its step): the accumulator of a later block rescaled
  /// by alpha, on the scalar engine.
  void stageRescale(std::int64_t i) {
    const Item& it = items_[static_cast<std::size_t>(i)];
    if (!it.first) {
      const Tensor& acc = acc_.at(it.head * s_.s + it.q0);
      charge(Engine::kAct, s_.d + 1);
      nisa::activation(acc, acc, ActivationFunction::kCopy, 0.0f,
                       *state_[static_cast<std::size_t>(i)].alpha);
    }
  }

  /// Stage C1: [o | l] = P @ [v | 1] in PSUM.
  void stageValues(std::int64_t i) {
    const Item& it = items_[static_cast<std::size_t>(i)];
    ItemState& st = state_[static_cast<std::size_t>(i)];
    const Tensor v = v_.at(it.kvHead);
    Tensor pv = k_.psum({kTile, s_.d + 1}, DType::kFp32, "pv")(ds(0, it.rows));
    bool started = false;
    for (std::size_t c = 0; c < st.pT.size(); ++c) {
      const std::int64_t c0 = it.k0 + static_cast<std::int64_t>(c) * kChunk;
      const std::int64_t ck = std::min(kChunk, it.k0 + it.keys - c0);
      for (std::int64_t t = 0; t * kTile < ck; ++t) {
        const std::int64_t kk = std::min(kTile, ck - t * kTile);
        nisa::ncMatmul(pv, st.pT[c](ds(0, kk), ds(t * it.rows, it.rows)),
                       v(ds(0, kk), (c0 + t * kTile) / kTile, all), started);
        started = true;
      }
    }
    st.pT.clear();
    st.pv = pv;
  }

  /// Stage C2, a step later so the vector engine never waits for this step's P @ v: [o | l]
  /// added to the (rescaled) accumulator; the last block divides by l and stores the tile.
  void stageAccumulate(std::int64_t i) {
    const Item& it = items_[static_cast<std::size_t>(i)];
    const Tensor pv = state_[static_cast<std::size_t>(i)].pv;
    const std::int64_t tileKey = it.head * s_.s + it.q0;
    // The tile's [o | l] to divide, and the engine that divides.
    std::optional<Tensor> sums;
    Engine divider = Engine::kPool;
    if (it.first && it.last) {
      // One block: divide straight from PSUM on the vector engine, or copy it out on the scalar
      // engine and divide on the otherwise idle GpSimd engine, whichever is less loaded.
      if (pickCopyEngine(s_.d + 1, DType::kFp32) == Engine::kDve) {
        sums = pv;
        divider = Engine::kDve;
      } else {
        sums = k_.sbuf({kTile, s_.d + 1}, DType::kFp32, "pv_copy")(ds(0, it.rows));
        nisa::tensorCopy(*sums, pv, Engine::kAct);
      }
    } else if (it.first) {
      acc_[tileKey] = k_.sbuf({kTile, s_.d + 1}, DType::kFp32, "acc")(ds(0, it.rows));
      nisa::tensorCopy(acc_.at(tileKey), pv, pickCopyEngine(s_.d + 1, DType::kFp32));
    } else {
      const Tensor& acc = acc_.at(tileKey);
      charge(Engine::kDve, s_.d + 1);
      nisa::tensorTensor(acc, acc, pv, AluOp::kAdd);
      if (it.last) {
        sums = acc;
      }
    }
    if (it.last) {
      // The output tiles of a 512-query group gather in one SBUF tile and leave in one DMA, so
      // a tile's buffer is not reused while the (1.3 us) store of the one before is in flight.
      const std::int64_t g0 = it.q0 / kChunk * kChunk;
      const std::int64_t groupKey = it.head * s_.s + g0;
      if (!out_tiles_.contains(groupKey)) {
        out_tiles_[groupKey] = k_.sbuf({kTile, kChunk / kTile, s_.d}, dt_, "o_group");
      }
      const Tensor group = out_tiles_.at(groupKey);
      const std::int64_t t = (it.q0 - g0) / kTile;
      nisa::tensorScalar(group(ds(0, it.rows), t, all), (*sums)(all, ds(0, s_.d)), AluOp::kDivide,
                         (*sums)(all, ds(s_.d, 1)), false, AluOp::kBypass, 0.0f, false, divider);
      const std::int64_t groupEnd = std::min(g0 + kChunk, s_.s);
      if (it.q0 + it.rows == groupEnd) {
        storeGroup(group, it.head, g0, groupEnd - g0, divider);
        out_tiles_.erase(groupKey);
      }
      acc_.erase(tileKey);
    }
  }

  /// Items whose loads are issued ahead of their compute.
  static constexpr std::int64_t kLookahead = 12;
  /// Items whose bias tiles are loaded ahead of their scores (each holds up to 4 KiB of fp32
  /// per partition).
  static constexpr std::int64_t kBiasLookahead = 4;
  /// Pipeline skew: the steps between an item's scores and its exp, its transposes, its P @ v.
  static constexpr std::int64_t kExpLag = 1;
  static constexpr std::int64_t kTransposeLag = 3;
  static constexpr std::int64_t kValuesLag = 5;
  static constexpr std::int64_t kAccumulateLag = kValuesLag + 1;

  Kernel& k_;
  Tensor q_;
  Tensor key_;
  Tensor value_;
  std::optional<Tensor> bias_;
  Shapes s_;
  DType dt_;
  float scale_;     ///< the factor of q k^T
  float expScale_;  ///< the factor the exp applies to the scores it reads (1 once biased)
  std::vector<Item> items_;
  std::vector<ItemState> state_;
  Tensor out_;
  Tensor rowIndex_;
  std::map<std::int64_t, Tensor> kT_;
  std::map<std::int64_t, Tensor> v_;
  std::map<std::int64_t, std::int64_t> loadedKeys_;  ///< per kv head: keys loaded so far
  std::map<std::int64_t, Tensor> qT_;
  std::map<std::int64_t, Tensor> acc_;
  std::map<std::int64_t, Tensor> out_tiles_;
  /// The bias tiles of the current query tile's key blocks, by (first query, first key).
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<Tensor>> biasTiles_;
  /// Estimated busy time issued so far on the scalar and vector engines, in ns.
  double actLoad_ = 0;
  double dveLoad_ = 0;
};

}  // namespace

Tensor flashAttention(Kernel& k, Tensor q, Tensor key, Tensor value, AttentionOptions options,
                      const AttentionScores& scores) {
  const Shapes s = checkInputs(k, q, key, value);
  if (scores.bias) {
    checkBias(k, *scores.bias, s);
  }
  // SPMD: each program instance takes a contiguous block of query heads. Heads are independent,
  // and contiguous blocks keep the query heads of one kv head together, so an instance loads
  // only the k and v heads its query heads read (a kv head is loaded twice only when a block
  // boundary falls inside its group).
  const detail::ProgramShare heads = detail::programShare(k, s.hq);
  return FlashAttention(k, q, key, value, s, options.causal, scores, heads).run();
}

std::vector<HostTensor> attentionReference(std::span<const HostTensor> in, bool causal,
                                           std::optional<double> scaleFactor) {
  const HostTensor& q = in[0];
  const HostTensor& key = in[1];
  const HostTensor& value = in[2];
  const std::int64_t hq = q.dim(0);
  const std::int64_t s = q.dim(1);
  const std::int64_t d = q.dim(2);
  const std::int64_t group = hq / key.dim(0);
  const double scale = scaleFactor.value_or(1.0 / std::sqrt(static_cast<double>(d)));
  const HostTensor* bias = in.size() > 3 ? &in[3] : nullptr;
  HostTensor out = HostTensor::zeros(q.shape);
  // A block of query rows at a time: their logits against every key they may see, one softmax
  // per row, then the weighted sum of values, both products through BLAS.
  constexpr std::int64_t kRows = 128;
  std::vector<double> weights(static_cast<std::size_t>(std::min(kRows, s) * s));
  for (std::int64_t h = 0; h < hq; ++h) {
    const double* qh = &q.values[static_cast<std::size_t>(h * s * d)];
    const double* kg = &key.values[static_cast<std::size_t>(h / group * s * d)];
    const double* vg = &value.values[static_cast<std::size_t>(h / group * s * d)];
    for (std::int64_t i0 = 0; i0 < s; i0 += kRows) {
      const std::int64_t rows = std::min(kRows, s - i0);
      const std::int64_t keys = causal ? i0 + rows : s;
      gemm({.m = rows, .n = keys, .k = d, .transposeB = true}, qh + i0 * d, kg, weights.data());
      for (std::int64_t r = 0; r < rows; ++r) {
        double* w = &weights[static_cast<std::size_t>(r * keys)];
        const std::int64_t allowed = causal ? i0 + r + 1 : s;
        double maxLogit = -INFINITY;
        for (std::int64_t j = 0; j < allowed; ++j) {
          w[j] *= scale;
          if (bias != nullptr) {
            w[j] += bias->values[static_cast<std::size_t>((i0 + r) * s + j)];
          }
          maxLogit = std::max(maxLogit, w[j]);
        }
        double sum = 0.0;
        for (std::int64_t j = 0; j < allowed; ++j) {
          w[j] = std::exp(w[j] - maxLogit);
          sum += w[j];
        }
        for (std::int64_t j = 0; j < keys; ++j) {
          w[j] = j < allowed ? w[j] / sum : 0.0;
        }
      }
      gemm({.m = rows, .n = d, .k = keys}, weights.data(), vg,
           &out.values[static_cast<std::size_t>((h * s + i0) * d)]);
    }
  }
  return {out};
}

double attentionFlops(std::span<const kernel::TensorSpec> in, bool causal) {
  const auto hq = static_cast<double>(in[0].shape.at(0));
  const auto s = static_cast<double>(in[0].shape.at(1));
  const auto d = static_cast<double>(in[0].shape.at(2));
  const double pairs = causal ? s * (s + 1) / 2 : s * s;
  return 4.0 * hq * d * pairs;
}

}  // namespace trn::kernels
