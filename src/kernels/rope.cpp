// Rotary position embedding (see rope.h).
#include "trn/kernels/rope.h"

#include <cmath>
#include <string>

#include "tile_util.h"
#include "trn/kernel/nisa.h"

namespace trn::kernels {

using detail::clip;
using detail::kPartitions;
using isa::AluOp;
using isa::Engine;
using kernel::all;
using kernel::ds;
using kernel::Kernel;
using kernel::Tensor;
namespace nisa = kernel::nisa;

namespace {

using Loc = std::source_location;

/// fp32 elements of one PSUM bank per partition: the longest row a table or product tile has.
constexpr std::int64_t kBankFloats = 512;

/// Tiles out of every kGpSimdPeriod that GpSimd computes: the vector engine does a tile in
/// 3 n cycles at 0.96 GHz (PSUM operands), GpSimd in 6 n at 1.2 GHz, so a 5:3 split evens them.
constexpr std::int64_t kGpSimdPeriod = 8;
constexpr std::int64_t kGpSimdTiles = 3;

/// Tiles loaded ahead of the one computed: a tile's load waits 1.3 us of DMA fixed cost, several
/// times a tile's compute.
constexpr std::int64_t kPrefetch = 4;

/// Checks x [H, S, D] and cos, sin [S, D/2] ([S, D] with `fullTables`).
void checkInputs(Kernel& k, const Tensor& x, const Tensor& cos, const Tensor& sin,
                 bool fullTables, Loc loc = Loc::current()) {
  const std::string tables = fullTables ? "[S, D]" : "[S, D/2]";
  detail::requireRank(k, x, 3, "rope", "x [H, S, D]", loc);
  detail::requireRank(k, cos, 2, "rope", "cos " + tables, loc);
  detail::requireRank(k, sin, 2, "rope", "sin " + tables, loc);
  detail::requireFloat(k, x, "rope", "x", loc);
  detail::requireFloat(k, cos, "rope", "cos", loc);
  detail::requireFloat(k, sin, "rope", "sin", loc);
  const std::int64_t s = x.shape(1);
  const std::int64_t d = x.shape(2);
  if (d % 2 != 0 || d > kBankFloats) {
    k.fail("rope: the head dimension D = " + std::to_string(d) + " must be even and at most " +
               std::to_string(kBankFloats),
           loc);
  }
  const std::int64_t width = fullTables ? d : d / 2;
  if (cos.shape() != sin.shape() || cos.shape(0) != s || cos.shape(1) != width) {
    k.fail("rope: cos " + formatShape(cos.shape()) + " and sin " + formatShape(sin.shape()) +
               " must both be " + tables + " = [" + std::to_string(s) + ", " +
               std::to_string(width) + "] for x " + formatShape(x.shape()),
           loc);
  }
}

/// The largest divisor of s that is at most limit.
std::int64_t largestDivisor(std::int64_t s, std::int64_t limit) {
  for (std::int64_t t = std::min(s, limit); t > 1; --t) {
    if (s % t == 0) {
      return t;
    }
  }
  return 1;
}

/// The cos/sin tables of one chunk of rows, repeated for `group` heads: [c, c] and [-s, s] per
/// token in fp32, in PSUM for the vector engine; GpSimd (no PSUM access) reads [c, c] as a
/// broadcast view of the loaded cos rows and [-s, s] from an SBUF copy.
struct Tables {
  Tensor cosPair;
  Tensor cos2;
  Tensor sin2;
  Tensor sin2Sb;
};

/// Loads cos and sin rows [bc, T * D/2] `group` times onto consecutive partitions and builds the
/// chunk's tables for T = `tokens` tokens per row (the scalar engine, otherwise idle here, does
/// the copies). With `halves` = 2 the rows are [bc, T * D], each token's two halves of its own
/// (the tables as a model computes them, [c, c] and [s, s] in the usual case).
Tables loadTables(Kernel& k, const Tensor& cosRows, const Tensor& sinRows, std::int64_t group,
                  std::int64_t tokens, std::int64_t halves) {
  const std::int64_t bc = cosRows.shape(0);
  const std::int64_t p = group * bc;
  const std::int64_t half = cosRows.shape(1) / tokens / halves;
  Tensor cosSb = k.sbuf({p, tokens, halves, half}, cosRows.dtype(), "cos_rows");
  Tensor sinSb = k.sbuf({p, tokens, halves, half}, sinRows.dtype(), "sin_rows");
  for (std::int64_t g = 0; g < group; ++g) {
    nisa::dmaCopy(cosSb(ds(g * bc, bc)).reshape({bc, tokens * halves * half}), cosRows);
    nisa::dmaCopy(sinSb(ds(g * bc, bc)).reshape({bc, tokens * halves * half}), sinRows);
  }
  Tables tables;
  tables.cosPair = halves == 2 ? cosSb : cosSb.broadcast(2, 2);
  tables.cos2 = k.psum({p, tokens, 2, half}, DType::kFp32, "cos2_psum");
  nisa::tensorCopy(tables.cos2, tables.cosPair, Engine::kAct);
  tables.sin2 = k.psum({p, tokens, 2, half}, DType::kFp32, "sin2_psum");
  tables.sin2Sb = k.sbuf({p, tokens, 2, half}, DType::kFp32, "sin2_sb");
  for (const Tensor& sin2 : {tables.sin2, tables.sin2Sb}) {
    nisa::tensorScalar(sin2(all, all, 0), sinSb(all, all, 0), AluOp::kMultiply, -1.0f, false,
                       AluOp::kBypass, 0.0f, false, Engine::kAct);
    nisa::tensorCopy(sin2(all, all, 1), sinSb(all, all, halves - 1), Engine::kAct);
  }
  return tables;
}

/// rope over x [H, S, D] with cos and sin [S, D/2], or [S, D] with `fullTables`.
Tensor ropeRows(Kernel& k, const Tensor& x, const Tensor& cos, const Tensor& sin,
                bool fullTables) {
  checkInputs(k, x, cos, sin, fullTables);
  const std::int64_t halves = fullTables ? 2 : 1;
  const std::int64_t heads = x.shape(0);
  const std::int64_t seq = x.shape(1);
  const std::int64_t d = x.shape(2);
  const std::int64_t half = d / 2;
  Tensor out = k.output("out", x.shape(), x.dtype());

  // Rows of T tokens of one head; a head has `blocks` of them.
  const std::int64_t t = largestDivisor(seq, kBankFloats / d);
  const std::int64_t blocks = seq / t;
  const Tensor xRows = x.reshape({heads * blocks, t * d});
  const Tensor outRows = out.reshape({heads * blocks, t * d});
  const Tensor cosRows = cos.reshape({blocks, t * halves * half});
  const Tensor sinRows = sin.reshape({blocks, t * halves * half});
  // A tile holds `group` heads' rows when a head's rows fit the partitions (no more heads than
  // there are: the tables are loaded once per head of a group), else a chunk of up to 128 rows
  // of one head.
  const std::int64_t chunk = std::min(blocks, kPartitions);
  const std::int64_t group = blocks <= kPartitions ? std::min(heads, kPartitions / blocks) : 1;

  // The tiles in order: chunk c0 of every head's rows, `group` heads at a time.
  struct Job {
    std::int64_t c0;
    std::int64_t bc;
    std::int64_t r0;
    std::int64_t rows;
  };
  std::vector<Job> jobs;
  for (std::int64_t c0 = 0; c0 < blocks; c0 += chunk) {
    const std::int64_t bc = clip(chunk, c0, blocks);
    for (std::int64_t h0 = 0; h0 < heads; h0 += group) {
      jobs.push_back({c0, bc, h0 * blocks + c0, clip(group, h0, heads) * bc});
    }
  }
  // Each SPMD program instance takes a contiguous block of the tiles (rows of x; the jobs are
  // independent), and loads the tables of the chunks its tiles need.
  const detail::ProgramShare share =
      detail::programShare(k, static_cast<std::int64_t>(jobs.size()));
  if (share.empty()) {
    return out;
  }
  const auto jobAt = [&](std::int64_t i) -> const Job& {
    return jobs[static_cast<std::size_t>(share.begin + i)];
  };
  // The first chunk's tables go first, so the first tiles' loads do not delay them.
  Tables tables = loadTables(k, cosRows(ds(jobAt(0).c0, jobAt(0).bc)),
                             sinRows(ds(jobAt(0).c0, jobAt(0).bc)), group, t, halves);
  detail::TilePrefetcher tiles(share.count, kPrefetch, [&](std::int64_t i, Loc site) {
    const Job& job = jobAt(i);
    Tensor xt = k.sbuf({job.rows, t, 2, half}, x.dtype(), "x_tile", std::nullopt, site);
    nisa::dmaCopy(xt.reshape({job.rows, t * d}, site), xRows(ds(job.r0, job.rows), site),
                  std::nullopt, std::nullopt, isa::DmaOobMode::kError, std::nullopt, site);
    return xt;
  });

  // i counts this instance's tiles, so each instance spreads its own over the two engines.
  for (std::int64_t i = 0; i < share.count; ++i) {
    const Job& job = jobAt(i);
    const Tensor xt = tiles.take();
    if (i > 0 && job.c0 != jobAt(i - 1).c0) {
      tables = loadTables(k, cosRows(ds(job.c0, job.bc)), sinRows(ds(job.c0, job.bc)), group, t,
                          halves);
    }
    const std::int64_t rows = job.rows;
    // rotate_half's operand order: [x2, x1] per token, read with a negative stride.
    const Tensor xSwapped = xt.pattern(rows, {{d, t}, {-half, 2}, {1, half}}, half);
    // Each engine's output tiles have their own ring, so a store still in flight on one does
    // not hold up the other.
    Tensor ot;
    if ((i * kGpSimdTiles) % kGpSimdPeriod < kGpSimdTiles) {
      ot = k.sbuf({rows, t, 2, half}, x.dtype(), "out_tile_pool");
      Tensor a = k.sbuf({rows, t, 2, half}, DType::kFp32, "xcos_sb");
      nisa::tensorTensor(a, xt, tables.cosPair(ds(0, rows)), AluOp::kMultiply, Engine::kPool);
      Tensor b = k.sbuf({rows, t, 2, half}, DType::kFp32, "xsin_sb");
      nisa::tensorTensor(b, xSwapped, tables.sin2Sb(ds(0, rows)), AluOp::kMultiply, Engine::kPool);
      nisa::tensorTensor(ot, a, b, AluOp::kAdd, Engine::kPool);
    } else {
      ot = k.sbuf({rows, t, 2, half}, x.dtype(), "out_tile");
      Tensor a = k.psum({rows, t, 2, half}, DType::kFp32, "xcos_psum");
      nisa::tensorTensor(a, xt, tables.cos2(ds(0, rows)), AluOp::kMultiply, Engine::kDve);
      Tensor b = k.sbuf({rows, t, 2, half}, DType::kFp32, "xsin");
      nisa::tensorTensor(b, xSwapped, tables.sin2(ds(0, rows)), AluOp::kMultiply, Engine::kDve);
      nisa::tensorTensor(ot, a, b, AluOp::kAdd, Engine::kDve);
    }
    nisa::dmaCopy(outRows(ds(job.r0, rows)), ot.reshape({rows, t * d}));
  }
  return out;
}

}  // namespace

Tensor rope(Kernel& k, Tensor x, Tensor cos, Tensor sin) {
  return ropeRows(k, x, cos, sin, false);
}

Tensor ropeFullTables(Kernel& k, Tensor x, Tensor cos, Tensor sin) {
  return ropeRows(k, x, cos, sin, true);
}

std::vector<HostTensor> ropeReference(std::span<const HostTensor> in) {
  const HostTensor& x = in[0];
  const std::int64_t heads = x.dim(0);
  const std::int64_t seq = x.dim(1);
  const std::int64_t d = x.dim(2);
  const std::int64_t half = d / 2;
  HostTensor out = HostTensor::zeros(x.shape);
  for (std::int64_t h = 0; h < heads; ++h) {
    for (std::int64_t s = 0; s < seq; ++s) {
      const std::int64_t row = (h * seq + s) * d;
      for (std::int64_t i = 0; i < half; ++i) {
        const double c = in[1][s * half + i];
        const double sn = in[2][s * half + i];
        const double x1 = x[row + i];
        const double x2 = x[row + half + i];
        out[row + i] = x1 * c - x2 * sn;
        out[row + half + i] = x2 * c + x1 * sn;
      }
    }
  }
  return {out};
}

std::vector<HostTensor> ropeInputs(std::span<const kernel::TensorSpec> specs, std::uint64_t seed) {
  std::vector<HostTensor> inputs = {randomInput(specs[0], seed), HostTensor::zeros(specs[1].shape),
                                    HostTensor::zeros(specs[2].shape)};
  const std::int64_t seq = specs[1].shape.at(0);
  const std::int64_t half = specs[1].shape.at(1);
  for (std::int64_t s = 0; s < seq; ++s) {
    for (std::int64_t i = 0; i < half; ++i) {
      const double theta =
          std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(2 * half));
      const double angle = static_cast<double>(s) * theta;
      inputs[1][s * half + i] = roundTo(std::cos(angle), specs[1].dtype);
      inputs[2][s * half + i] = roundTo(std::sin(angle), specs[2].dtype);
    }
  }
  return inputs;
}

}  // namespace trn::kernels
