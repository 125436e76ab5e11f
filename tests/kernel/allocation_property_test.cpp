// Property test of the kernel backend over random tile programs (fixed seeds, deterministic):
// tiles declared in unrolled loops (multi-buffering rings) and outside them, kept live across
// iterations or not, random shapes and dtypes, loads, element-wise ops, matmuls into PSUM and
// stores, compiled with bufs 1..3. For every kernel:
//  (a) no two on-chip tiles live at the same time share a byte, but for a result computed in
//      place over an input that dies at the instruction that writes it first: placements come
//      from the IR dump after the 'allocate' pass (and agree with CompiledKernel::tiles), live
//      ranges from the generated program itself;
//  (b) the run (functional, race detection and poison on) is race-free and its output equals a
//      CPU interpretation of the same program with the simulator's roundings (fp32 ops rounded
//      once, bf16 stores rounded to nearest even; matmul inputs are small dyadic values, so every
//      fp32 accumulation order gives the same exact sum);
//  (c) compiling twice gives the same program text.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "trn/isa/program_text.h"
#include "trn/kernel/compiler.h"
#include "trn/kernel/nisa.h"
#include "trn/runtime/host_io.h"
#include "trn/runtime/session.h"
#include "trn/spec/loader.h"

namespace trn::kernel {
namespace {

using testutil::trn2;

using isa::ActivationFunction;
using isa::AluOp;
using isa::Memory;

constexpr std::int64_t kHbmRows = 128;
constexpr std::int64_t kHbmCols = 1024;

float roundBf16(float x) {
  std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return std::bit_cast<float>(u & 0xFFFF0000u);
}

float storeAs(DType dtype, float x) { return dtype == DType::kBf16 ? roundBf16(x) : x; }

/// A rectangle of a tile or an HBM tensor: rows/partitions [p0, p0 + p), columns [c0, c0 + f).
struct Rect {
  std::int64_t p0 = 0;
  std::int64_t p = 1;
  std::int64_t c0 = 0;
  std::int64_t f = 1;
};

enum class Kind {
  kLoad,
  kStore,
  kMemset,
  kTensorTensor,
  kTensorScalar,
  kCopy,
  kActivation,
  kMatmul
};

/// One instruction of a generated program. Tile operands are tile ids; `hbm` is 0/1 for the
/// inputs and 2 for the output.
struct Step {
  Kind kind = Kind::kLoad;
  int dst = -1;
  int a = -1;
  int b = -1;
  Rect rd, ra, rb;
  int hbm = 0;
  AluOp op0 = AluOp::kAdd;
  AluOp op1 = AluOp::kBypass;
  float imm0 = 0;
  float imm1 = 0;
  bool reverse0 = false;
  ActivationFunction act = ActivationFunction::kCopy;
  bool accumulate = false;
};

Step makeStep(Kind kind) {
  Step s;
  s.kind = kind;
  return s;
}

/// An on-chip tile: where it is declared, its shape, its live range and its CPU-side values.
struct Tile {
  int site = 0;
  Memory memory = Memory::kSbuf;
  DType dtype = DType::kFp32;
  std::int64_t p = 1;
  std::int64_t f = 1;
  std::int64_t first = -1;  ///< first and last step using it
  std::int64_t last = -1;
  std::vector<float> values;
  bool exact = false;  ///< every value is a small dyadic (matmul inputs, exact accumulation)
  int accumulations = 0;
  float& at(std::int64_t r, std::int64_t c) { return values[static_cast<std::size_t>(r * f + c)]; }
  [[nodiscard]] std::int64_t bytes() const { return f * byteSize(dtype); }
};

struct Program {
  std::vector<Tile> tiles;
  std::vector<Step> steps;
  std::vector<std::vector<float>> hbm;  ///< in0, in1 (bf16 values), out
  std::vector<bool> outWritten;
  int bufs = 2;
};

/// Declares a tile at one of several source lines, so tiles of different sites get different
/// declaration lines (the allocator's ring key).
Tensor declareAt(Kernel& k, int site, const Tile& t, const std::string& name) {
  auto make = [&](Kernel::Loc loc) {
    return t.memory == Memory::kSbuf ? k.sbuf({t.p, t.f}, t.dtype, name, std::nullopt, loc)
                                     : k.psum({t.p, t.f}, t.dtype, name, std::nullopt, loc);
  };
  switch (site) {
    case 0:
      return make(Kernel::Loc::current());
    case 1:
      return make(Kernel::Loc::current());
    case 2:
      return make(Kernel::Loc::current());
    case 3:
      return make(Kernel::Loc::current());
    case 4:
      return make(Kernel::Loc::current());
    case 5:
      return make(Kernel::Loc::current());
    case 6:
      return make(Kernel::Loc::current());
    default:
      return make(Kernel::Loc::current());
  }
}

constexpr int kSites = 8;

Tensor view(const Tensor& t, const Rect& r) { return t(ds(r.p0, r.p), ds(r.c0, r.f)); }

/// Traces `prog` in `k`.
Tensor traceProgram(Kernel& k, const Program& prog, Tensor in0, Tensor in1) {
  Tensor out = k.output("out", {kHbmRows, kHbmCols}, DType::kFp32);
  const Tensor hbm[3] = {in0, in1, out};
  std::vector<Tensor> tiles(prog.tiles.size());
  auto tile = [&](int id) -> Tensor& {
    Tensor& t = tiles[static_cast<std::size_t>(id)];
    if (!t.valid()) {
      const Tile& spec = prog.tiles[static_cast<std::size_t>(id)];
      t = declareAt(k, spec.site, spec, "t" + std::to_string(id));
    }
    return t;
  };
  for (const Step& s : prog.steps) {
    switch (s.kind) {
      case Kind::kLoad:
        nisa::dmaCopy(view(tile(s.dst), s.rd), view(hbm[s.hbm], s.ra));
        break;
      case Kind::kStore:
        nisa::dmaCopy(view(out, s.rd), view(tile(s.a), s.ra));
        break;
      case Kind::kMemset:
        nisa::memset(view(tile(s.dst), s.rd), s.imm0);
        break;
      case Kind::kTensorTensor:
        nisa::tensorTensor(view(tile(s.dst), s.rd), view(tile(s.a), s.ra), view(tile(s.b), s.rb),
                           s.op0);
        break;
      case Kind::kTensorScalar:
        nisa::tensorScalar(view(tile(s.dst), s.rd), view(tile(s.a), s.ra), s.op0, s.imm0,
                           s.reverse0, s.op1, s.imm1);
        break;
      case Kind::kCopy:
        nisa::tensorCopy(view(tile(s.dst), s.rd), view(tile(s.a), s.ra));
        break;
      case Kind::kActivation:
        nisa::activation(view(tile(s.dst), s.rd), view(tile(s.a), s.ra), s.act, s.imm1, s.imm0);
        break;
      case Kind::kMatmul:
        nisa::ncMatmul(view(tile(s.dst), s.rd), view(tile(s.a), s.ra), view(tile(s.b), s.rb),
                       s.accumulate);
        break;
    }
  }
  return out;
}

float alu(AluOp op, float a, float b) {
  switch (op) {
    case AluOp::kAdd:
      return a + b;
    case AluOp::kSubtract:
      return a - b;
    case AluOp::kMultiply:
      return a * b;
    case AluOp::kMax:
      return std::fmax(a, b);
    case AluOp::kMin:
      return std::fmin(a, b);
    default:
      return a;
  }
}

float activate(ActivationFunction f, float x) {
  switch (f) {
    case ActivationFunction::kRelu:
      return x > 0.0f ? x : 0.0f;
    case ActivationFunction::kAbs:
      return std::fabs(x);
    case ActivationFunction::kSquare:
      return static_cast<float>(static_cast<double>(x) * static_cast<double>(x));
    default:
      return x;
  }
}

/// Generates a random program and interprets it on the CPU as it goes.
class Generator {
 public:
  explicit Generator(std::uint32_t seed) : rng_(seed) {}

  Program run() {
    prog_.bufs = uniform(1, 3);
    prog_.hbm.resize(3);
    for (int i = 0; i < 2; ++i) {
      auto& v = prog_.hbm[static_cast<std::size_t>(i)];
      v.resize(static_cast<std::size_t>(kHbmRows * kHbmCols));
      for (float& x : v) {
        x = static_cast<float>(uniform(-16, 16)) / 8.0f;
      }
    }
    prog_.hbm[2].assign(static_cast<std::size_t>(kHbmRows * kHbmCols), 0.0f);
    prog_.outWritten.assign(prog_.hbm[2].size(), false);

    std::vector<int> outer;
    for (int i = uniform(0, 3); i > 0; --i) {
      outer.push_back(newTile(randomTemplate(i == 1 && chance(0.3))));
    }
    const int loops = uniform(1, 2);
    for (int l = 0; l < loops; ++l) {
      std::vector<Tile> templates;
      int psumTemplates = 0;
      for (int t = uniform(1, 3); t > 0; --t) {
        const bool psum = psumTemplates < 1 && chance(0.35);
        psumTemplates += psum ? 1 : 0;
        templates.push_back(randomTemplate(psum));
      }
      std::vector<int> previous;
      const bool keep = chance(0.4);
      for (int it = uniform(2, 5); it > 0; --it) {
        std::vector<int> current;
        for (const Tile& t : templates) {
          current.push_back(newTile(t));
        }
        std::vector<int> pool = current;
        pool.insert(pool.end(), outer.begin(), outer.end());
        if (keep) {
          for (const int id : previous) {
            if (tile(id).memory == Memory::kSbuf) {
              pool.push_back(id);
            }
          }
        }
        for (int s = uniform(1, 5); s > 0; --s) {
          randomOp(pool);
        }
        store(pick(current));
        previous = current;
      }
    }
    for (const int id : outer) {
      std::vector<int> pool = outer;
      randomOp(pool);
      store(id);
    }
    return std::move(prog_);
  }

 private:
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  int pick(const std::vector<int>& v) {
    return v[static_cast<std::size_t>(uniform(0, static_cast<int>(v.size()) - 1))];
  }
  Tile& tile(int id) { return prog_.tiles[static_cast<std::size_t>(id)]; }

  std::int64_t randomPartitions() {
    static constexpr std::int64_t kCommon[] = {1, 32, 64, 128, 128};
    return chance(0.5) ? kCommon[uniform(0, 4)] : uniform(1, 128);
  }
  std::int64_t randomFree(std::int64_t max) {
    static constexpr std::int64_t kSizes[] = {1, 2, 7, 16, 33, 64, 100, 128, 256, 512};
    std::int64_t f = kSizes[uniform(0, 9)];
    return std::min(f, max);
  }

  Tile randomTemplate(bool psum) {
    Tile t;
    t.site = uniform(0, kSites - 1);
    t.memory = psum ? Memory::kPsum : Memory::kSbuf;
    t.dtype = psum || chance(0.5) ? DType::kFp32 : DType::kBf16;
    t.p = randomPartitions();
    t.f = randomFree(512);
    return t;
  }

  /// Declares a tile from a template and initialises all of it.
  int newTile(const Tile& from) {
    const int id = static_cast<int>(prog_.tiles.size());
    Tile t = from;
    t.values.assign(static_cast<std::size_t>(t.p * t.f), 0.0f);
    prog_.tiles.push_back(std::move(t));
    const Rect whole{0, tile(id).p, 0, tile(id).f};
    if (tile(id).memory == Memory::kSbuf && chance(0.7)) {
      load(id, whole);
    } else {
      Step s = makeStep(Kind::kMemset);
      s.dst = id;
      s.rd = whole;
      s.imm0 = static_cast<float>(uniform(-8, 8)) / 4.0f;
      emit(s);
    }
    return id;
  }

  void load(int id, const Rect& rd) {
    Step s = makeStep(Kind::kLoad);
    s.dst = id;
    s.rd = rd;
    std::vector<int> sources = {0, 1};
    // Reading back a fully written region of the output orders the load after its stores.
    Rect fromOut{uniform(0, static_cast<int>(kHbmRows - rd.p)), rd.p,
                 uniform(0, static_cast<int>(kHbmCols - rd.f)), rd.f};
    if (chance(0.3) && written(fromOut)) {
      sources.push_back(2);
    }
    s.hbm = pick(sources);
    s.ra = s.hbm == 2 ? fromOut
                      : Rect{uniform(0, static_cast<int>(kHbmRows - rd.p)), rd.p,
                             uniform(0, static_cast<int>(kHbmCols - rd.f)), rd.f};
    emit(s);
  }

  bool written(const Rect& r) const {
    for (std::int64_t i = 0; i < r.p; ++i) {
      for (std::int64_t j = 0; j < r.f; ++j) {
        if (!prog_.outWritten[static_cast<std::size_t>((r.p0 + i) * kHbmCols + r.c0 + j)]) {
          return false;
        }
      }
    }
    return true;
  }

  void store(int id) {
    if (tile(id).memory != Memory::kSbuf) {
      return;
    }
    const Rect ra = subRect(tile(id).p, tile(id).f, 0, 0);
    Step s = makeStep(Kind::kStore);
    s.a = id;
    s.ra = ra;
    s.rd = Rect{uniform(0, static_cast<int>(kHbmRows - ra.p)), ra.p,
                uniform(0, static_cast<int>(kHbmCols - ra.f)), ra.f};
    emit(s);
  }

  /// A random rectangle of at most p x f with a legal compute start partition.
  Rect subRect(std::int64_t p, std::int64_t f, std::int64_t minP, std::int64_t minF) {
    Rect r;
    r.p = chance(0.6) ? p : std::max<std::int64_t>(minP, uniform(1, static_cast<int>(p)));
    r.f = chance(0.6) ? f : std::max<std::int64_t>(minF, uniform(1, static_cast<int>(f)));
    r.p = std::max<std::int64_t>(r.p, 1);
    r.f = std::max<std::int64_t>(r.f, 1);
    if (r.p <= 32 && p >= 64 && chance(0.3)) {
      r.p0 = 32 * uniform(0, static_cast<int>((p - r.p) / 32));
    }
    return r;
  }

  /// Places a p x f rectangle at a random column of a tile, at partition `p0`.
  Rect placeIn(const Tile& t, std::int64_t p0, std::int64_t p, std::int64_t f) {
    return Rect{p0, p, uniform(0, static_cast<int>(t.f - f)), f};
  }

  float maxAbs(int id, const Rect& r) {
    float m = 0;
    for (std::int64_t i = 0; i < r.p; ++i) {
      for (std::int64_t j = 0; j < r.f; ++j) {
        m = std::max(m, std::fabs(tile(id).at(r.p0 + i, r.c0 + j)));
      }
    }
    return m;
  }

  void randomOp(const std::vector<int>& pool) {
    const int choice = uniform(0, 9);
    if (choice <= 1 && matmul(pool)) {
      return;
    }
    if (choice == 2) {
      const int id = pick(pool);
      if (tile(id).memory == Memory::kSbuf) {
        load(id, subRect(tile(id).p, tile(id).f, 0, 0));
        return;
      }
    }
    if (choice == 3) {
      store(pick(pool));
      return;
    }
    elementwise(pool, choice);
  }

  void elementwise(const std::vector<int>& pool, int choice) {
    Step s =
        makeStep(choice <= 5 ? Kind::kTensorTensor
                             : (choice == 6 ? Kind::kTensorScalar
                                            : (choice == 7 ? Kind::kCopy : Kind::kActivation)));
    s.dst = pick(pool);
    s.a = pick(pool);
    s.b = pick(pool);
    if (s.kind == Kind::kTensorTensor && tile(s.a).memory == Memory::kPsum &&
        tile(s.b).memory == Memory::kPsum) {
      s.kind = Kind::kTensorScalar;
    }
    std::int64_t p = std::min(tile(s.dst).p, tile(s.a).p);
    std::int64_t f = std::min(tile(s.dst).f, tile(s.a).f);
    if (s.kind == Kind::kTensorTensor) {
      p = std::min(p, tile(s.b).p);
      f = std::min(f, tile(s.b).f);
    }
    const Rect shape = subRect(p, f, 1, 1);
    s.rd = placeIn(tile(s.dst), shape.p0, shape.p, shape.f);
    s.ra = placeIn(tile(s.a), shape.p0, shape.p, shape.f);
    if (s.kind == Kind::kTensorTensor) {
      s.rb = placeIn(tile(s.b), shape.p0, shape.p, shape.f);
    } else {
      s.b = -1;
    }
    const float big = maxAbs(s.a, s.ra);
    static constexpr AluOp kOps[] = {AluOp::kAdd, AluOp::kSubtract, AluOp::kMultiply, AluOp::kMax,
                                     AluOp::kMin};
    s.op0 = kOps[uniform(0, 4)];
    if (s.kind == Kind::kTensorTensor && s.op0 == AluOp::kMultiply &&
        big * maxAbs(s.b, s.rb) > 1e4f) {
      s.op0 = AluOp::kAdd;
    }
    if (s.kind == Kind::kTensorScalar) {
      s.imm0 = static_cast<float>(uniform(-12, 12)) / 8.0f;
      s.reverse0 = chance(0.3);
      s.op1 = chance(0.5) ? AluOp::kBypass : kOps[uniform(0, 4)];
      s.imm1 = static_cast<float>(uniform(-12, 12)) / 4.0f;
    }
    if (s.kind == Kind::kActivation) {
      static constexpr ActivationFunction kActs[] = {
          ActivationFunction::kCopy, ActivationFunction::kRelu, ActivationFunction::kAbs,
          ActivationFunction::kSquare};
      s.act = kActs[uniform(0, big > 100.0f ? 2 : 3)];
      s.imm0 = chance(0.5) ? 1.0f : 0.5f * static_cast<float>(uniform(1, 4));  // scale
      s.imm1 = static_cast<float>(uniform(-4, 4)) / 16.0f;                     // bias
    }
    emit(s);
  }

  /// dst[M, N] (+)= stationary[K, M]^T @ moving[K, N] from exact SBUF tiles of one dtype class.
  bool matmul(const std::vector<int>& pool) {
    std::vector<int> psum;
    std::vector<int> inputs;
    for (const int id : pool) {
      (tile(id).memory == Memory::kPsum ? psum : inputs).push_back(id);
    }
    std::erase_if(inputs, [&](int id) { return !tile(id).exact; });
    if (psum.empty() || inputs.empty()) {
      return false;
    }
    Step s = makeStep(Kind::kMatmul);
    s.dst = pick(psum);
    s.a = pick(inputs);
    std::vector<int> partners;
    for (const int id : inputs) {
      if ((tile(id).dtype == DType::kFp32) == (tile(s.a).dtype == DType::kFp32)) {
        partners.push_back(id);
      }
    }
    s.b = pick(partners);
    const Tile& d = tile(s.dst);
    const std::int64_t k = std::min(tile(s.a).p, tile(s.b).p);
    const std::int64_t m = std::min({tile(s.a).f, d.p, std::int64_t{128}});
    const std::int64_t n = std::min(tile(s.b).f, d.f);
    s.accumulate = d.exact && d.accumulations < 6 && chance(0.5);
    s.rd = Rect{0, m, 0, n};
    s.ra = placeIn(tile(s.a), 0, k, m);
    s.rb = placeIn(tile(s.b), 0, k, n);
    emit(s);
    return true;
  }

  /// Records `s` and applies it to the CPU state.
  void emit(const Step& s) {
    const auto index = static_cast<std::int64_t>(prog_.steps.size());
    for (const int id : {s.dst, s.a, s.b}) {
      if (id >= 0) {
        Tile& t = tile(id);
        t.first = t.first < 0 ? index : t.first;
        t.last = index;
      }
    }
    prog_.steps.push_back(s);
    apply(s);
  }

  void apply(const Step& s) {
    auto forEach = [](const Rect& r, auto&& fn) {
      for (std::int64_t i = 0; i < r.p; ++i) {
        for (std::int64_t j = 0; j < r.f; ++j) {
          fn(i, j);
        }
      }
    };
    Tile* d = s.dst >= 0 ? &tile(s.dst) : nullptr;
    std::vector<float> result(static_cast<std::size_t>(s.rd.p * s.rd.f));
    auto res = [&](std::int64_t i, std::int64_t j) -> float& {
      return result[static_cast<std::size_t>(i * s.rd.f + j)];
    };
    auto a = [&](std::int64_t i, std::int64_t j) { return tile(s.a).at(s.ra.p0 + i, s.ra.c0 + j); };
    auto b = [&](std::int64_t i, std::int64_t j) { return tile(s.b).at(s.rb.p0 + i, s.rb.c0 + j); };
    bool exact = false;
    switch (s.kind) {
      case Kind::kLoad: {
        const auto& src = prog_.hbm[static_cast<std::size_t>(s.hbm)];
        forEach(s.rd, [&](auto i, auto j) {
          res(i, j) = src[static_cast<std::size_t>((s.ra.p0 + i) * kHbmCols + s.ra.c0 + j)];
        });
        exact = s.hbm != 2 && s.rd.p == d->p && s.rd.f == d->f;
        break;
      }
      case Kind::kStore:
        forEach(s.rd, [&](auto i, auto j) {
          const auto at = static_cast<std::size_t>((s.rd.p0 + i) * kHbmCols + s.rd.c0 + j);
          prog_.hbm[2][at] = a(i, j);
          prog_.outWritten[at] = true;
        });
        return;
      case Kind::kMemset:
        forEach(s.rd, [&](auto i, auto j) { res(i, j) = s.imm0; });
        exact = s.rd.p == d->p && s.rd.f == d->f;
        break;
      case Kind::kTensorTensor:
        forEach(s.rd, [&](auto i, auto j) { res(i, j) = alu(s.op0, a(i, j), b(i, j)); });
        break;
      case Kind::kTensorScalar:
        forEach(s.rd, [&](auto i, auto j) {
          const float x = s.reverse0 ? alu(s.op0, s.imm0, a(i, j)) : alu(s.op0, a(i, j), s.imm0);
          res(i, j) = s.op1 == AluOp::kBypass ? x : alu(s.op1, x, s.imm1);
        });
        break;
      case Kind::kCopy:
        forEach(s.rd, [&](auto i, auto j) { res(i, j) = a(i, j); });
        break;
      case Kind::kActivation:
        forEach(s.rd, [&](auto i, auto j) {
          const float scaled = a(i, j) * s.imm0;
          res(i, j) = activate(s.act, scaled + s.imm1);
        });
        break;
      case Kind::kMatmul:
        forEach(s.rd, [&](auto i, auto j) {
          double sum = s.accumulate ? d->at(i, j) : 0.0;
          for (std::int64_t kk = 0; kk < s.ra.p; ++kk) {
            sum += static_cast<double>(a(kk, i)) * b(kk, j);
          }
          res(i, j) = static_cast<float>(sum);
        });
        d->accumulations = s.accumulate ? d->accumulations + 1 : 0;
        exact = d->exact || (s.rd.p == d->p && s.rd.f == d->f);
        break;
    }
    forEach(s.rd, [&](auto i, auto j) {
      d->at(s.rd.p0 + i, s.rd.c0 + j) = storeAs(d->dtype, res(i, j));
    });
    d->exact = exact;
  }

  std::mt19937 rng_;
  Program prog_;
};

/// Placements "t<id>" -> (memory, byte) from the IR dump after allocation.
std::map<int, std::pair<std::string, std::int64_t>> parsePlacements(const std::string& dump) {
  std::map<int, std::pair<std::string, std::int64_t>> out;
  static const std::regex kLine(
      R"(%\d+ (sbuf|psum) 't(\d+)' \[[^\]]*\] \w+ at partition 0 byte (\d+))");
  for (std::sregex_iterator it(dump.begin(), dump.end(), kLine), end; it != end; ++it) {
    out[std::stoi((*it)[2])] = {(*it)[1], std::stoll((*it)[3])};
  }
  return out;
}

Result<CompiledKernel> compileProgram(const Program& prog, std::ostream* dump) {
  const std::vector<TensorSpec> specs = {{"in0", {kHbmRows, kHbmCols}, DType::kFp32},
                                         {"in1", {kHbmRows, kHbmCols}, DType::kBf16}};
  CompileOptions options;
  options.bufs = prog.bufs;
  if (dump != nullptr) {
    options.dumpAfter = "allocate";
    options.dumpStream = dump;
  }
  const KernelDef def = makeKernel("random", [&prog](Kernel& k, Tensor in0, Tensor in1) {
    return traceProgram(k, prog, in0, in1);
  });
  return compile(def, specs, runtime::coreLimits(*trn2()), options);
}

/// Checks (a), (b) and (c) for the program of `seed`.
void checkSeed(std::uint32_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Program prog = Generator(seed).run();
  std::ostringstream dump;
  auto compiled = compileProgram(prog, &dump);
  ASSERT_TRUE(compiled.ok()) << compiled.status().toString();

  // (a) Tiles live at the same time do not share a byte.
  const auto placements = parsePlacements(dump.str());
  ASSERT_EQ(placements.size(), prog.tiles.size()) << dump.str();
  // CompiledKernel::tiles reports the same placements and the generator's live ranges.
  ASSERT_EQ(compiled->tiles.size(), prog.tiles.size());
  for (const CompiledTile& t : compiled->tiles) {
    const int id = std::stoi(t.name.substr(1));
    const Tile& mine = prog.tiles.at(static_cast<std::size_t>(id));
    EXPECT_EQ(t.byte, placements.at(id).second) << t.name;
    EXPECT_EQ(t.bytes, mine.bytes()) << t.name;
    EXPECT_EQ(t.firstOp, mine.first) << t.name;
    EXPECT_EQ(t.lastOp, mine.last) << t.name;
  }
  for (std::size_t i = 0; i < prog.tiles.size(); ++i) {
    for (std::size_t j = i + 1; j < prog.tiles.size(); ++j) {
      const Tile& x = prog.tiles[i];
      const Tile& y = prog.tiles[j];
      const auto& [xm, xb] = placements.at(static_cast<int>(i));
      const auto& [ym, yb] = placements.at(static_cast<int>(j));
      const bool together = x.first <= y.last && y.first <= x.last;
      const bool shareBytes = xm == ym && xb < yb + y.bytes() && yb < xb + x.bytes();
      // The in-place rule: a result may take the exact space of an input that dies at the
      // instruction that writes it first (its numerics are checked in (b)).
      const bool inPlace =
          xb == yb && x.bytes() == y.bytes() && (x.last == y.first || y.last == x.first);
      ASSERT_FALSE(together && shareBytes && !inPlace)
          << "t" << i << " (" << xm << " bytes " << xb << ".." << xb + x.bytes() << ", steps "
          << x.first << ".." << x.last << ") and t" << j << " (" << ym << " bytes " << yb << ".."
          << yb + y.bytes() << ", steps " << y.first << ".." << y.last << ") overlap\n"
          << dump.str();
    }
  }

  // (c) Deterministic.
  auto again = compileProgram(prog, nullptr);
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(isa::formatProgramText(compiled->program), isa::formatProgramText(again->program));

  // (b) Race-free and equal to the CPU interpretation.
  runtime::RunOptions options;
  options.mode = seed % 8 == 0 ? core::RunMode::kFunctionalTiming : core::RunMode::kFunctionalOnly;
  const std::vector<runtime::NpyArray> inputs = {
      runtime::floatArray({kHbmRows, kHbmCols}, prog.hbm[0]),
      runtime::floatArray({kHbmRows, kHbmCols}, prog.hbm[1])};
  auto run = kernel::testutil::trn2Session().runKernel(*compiled, inputs, options);
  ASSERT_TRUE(run.ok()) << run.status().toString() << "\n" << dump.str();
  const std::vector<float> out = runtime::floatValues(run->outputs.at(0));
  ASSERT_EQ(out.size(), prog.hbm[2].size());
  for (std::size_t e = 0; e < out.size(); ++e) {
    if (prog.outWritten[e]) {
      ASSERT_EQ(out[e], prog.hbm[2][e]) << "out[" << e / kHbmCols << ", " << e % kHbmCols << "]\n"
                                        << dump.str();
    }
  }
}

TEST(AllocationProperty, RandomKernelsAreRaceFreeCorrectAndDeterministic) {
  constexpr std::uint32_t kKernels = 160;
  for (std::uint32_t seed = 1; seed <= kKernels; ++seed) {
    checkSeed(seed);
    if (HasFatalFailure()) {
      return;
    }
  }
}

}  // namespace
}  // namespace trn::kernel
