// End-to-end tests of the kernel backend: kernels written with the isa-level API are compiled,
// run on the core model (race detection on, poison on) and checked against float64 references;
// the passes' guarantees (synchronisation, multi-buffering, allocation errors, IR dumps, the
// cache) are checked on the compiled Program.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "kernel_test_util.h"
#include "trn/isa/program_text.h"
#include "trn/kernel/compiler.h"
#include "trn/kernel/nisa.h"
#include "trn/runtime/host_io.h"
#include "trn/runtime/session.h"
#include "trn/spec/loader.h"

namespace trn::kernel {
namespace {

using testutil::limits;
using testutil::randomValues;
using testutil::trn2;

using isa::AluOp;
using isa::Engine;

/// out = a + b for [rows, cols] fp32, in 128-row tiles (the last one ragged).
Tensor addKernel(Kernel& k, Tensor a, Tensor b) {
  Tensor out = k.output("out", a.shape(), a.dtype());
  for (std::int64_t r = 0; r < a.shape(0); r += 128) {
    const std::int64_t rows = std::min<std::int64_t>(128, a.shape(0) - r);
    Tensor x = k.sbuf({rows, a.shape(1)}, a.dtype(), "x");
    Tensor y = k.sbuf({rows, a.shape(1)}, a.dtype(), "y");
    nisa::dmaCopy(x, a(ds(r, rows)));
    nisa::dmaCopy(y, b(ds(r, rows)));
    Tensor z = k.sbuf({rows, a.shape(1)}, a.dtype(), "z");
    nisa::tensorTensor(z, x, y, AluOp::kAdd);
    nisa::dmaCopy(out(ds(r, rows)), z);
  }
  return out;
}

runtime::RunResult runOrFail(const CompiledKernel& compiled,
                             const std::vector<runtime::NpyArray>& inputs,
                             core::RunMode mode = core::RunMode::kFunctionalTiming) {
  runtime::RunOptions options;
  options.mode = mode;
  auto run = kernel::testutil::trn2Session().runKernel(compiled, inputs, options);
  EXPECT_TRUE(run.ok()) << run.status().toString();
  return run.ok() ? std::move(run).value() : runtime::RunResult{};
}

TEST(KernelCompile, TensorAddWithRaggedTilesMatchesReference) {
  const std::int64_t rows = 300;
  const std::int64_t cols = 700;
  const auto a = randomValues(rows * cols, 1);
  const auto b = randomValues(rows * cols, 2);
  const std::vector<TensorSpec> specs = {{"a", {rows, cols}, DType::kFp32},
                                         {"b", {rows, cols}, DType::kFp32}};
  auto compiled = compile(makeKernel("add", addKernel), specs, limits());
  ASSERT_TRUE(compiled.ok()) << compiled.status().toString();
  const auto run = runOrFail(
      *compiled, {runtime::floatArray({rows, cols}, a), runtime::floatArray({rows, cols}, b)});
  ASSERT_EQ(run.outputs.size(), 1u);
  const std::vector<float> out = runtime::floatValues(run.outputs[0]);
  ASSERT_EQ(out.size(), a.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    // One fp32 rounding of the exact sum.
    ASSERT_EQ(out[i], static_cast<float>(static_cast<double>(a[i]) + b[i])) << "element " << i;
  }
}

/// Writes a to an HBM scratch tensor, reads it back four times, overwrites it with 2a and reads
/// it once more: out = 4a + 2a only if every read of a precedes the overwrite.
Tensor rereadScratchKernel(Kernel& k, Tensor a) {
  Tensor scratch = k.hbmScratch("scratch", a.shape(), a.dtype());
  Tensor first = k.sbuf(a.shape(), a.dtype(), "first");
  nisa::dmaCopy(first, a);
  nisa::dmaCopy(scratch, first);
  Tensor acc = k.sbuf(a.shape(), a.dtype(), "acc");
  for (int i = 0; i < 4; ++i) {
    Tensor copy = k.sbuf(a.shape(), a.dtype(), "copy");
    nisa::dmaCopy(copy, scratch);
    if (i == 0) {
      nisa::tensorCopy(acc, copy);
    } else {
      nisa::tensorTensor(acc, acc, copy, AluOp::kAdd);
    }
  }
  Tensor twice = k.sbuf(a.shape(), a.dtype(), "twice");
  nisa::tensorTensor(twice, first, first, AluOp::kAdd);
  nisa::dmaCopy(scratch, twice);
  Tensor last = k.sbuf(a.shape(), a.dtype(), "last");
  nisa::dmaCopy(last, scratch);
  Tensor sum = k.sbuf(a.shape(), a.dtype(), "sum");
  nisa::tensorTensor(sum, acc, last, AluOp::kAdd);
  Tensor out = k.output("out", a.shape(), a.dtype());
  nisa::dmaCopy(out, sum);
  return out;
}

TEST(KernelCompile, ScratchRereadByDmaIsOverwrittenOnlyAfterEveryRead) {
  const std::vector<TensorSpec> specs = {{"a", {128, 64}, DType::kFp32}};
  auto compiled = compile(makeKernel("reread", rereadScratchKernel), specs, limits());
  ASSERT_TRUE(compiled.ok()) << compiled.status().toString();
  std::vector<float> a(128 * 64);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(static_cast<int>(i % 17) - 8);  // small integers: sums are exact
  }
  const auto run = runOrFail(*compiled, {runtime::floatArray({128, 64}, a)});
  ASSERT_EQ(run.outputs.size(), 1u);
  const std::vector<float> out = runtime::floatValues(run.outputs[0]);
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(out[i], 6 * a[i]) << "element " << i;
  }
}

TEST(KernelCompile, SynchronisationIsMinimalAndRaceFree) {
  const std::vector<TensorSpec> specs = {{"a", {512, 256}, DType::kFp32},
                                         {"b", {512, 256}, DType::kFp32}};
  auto compiled = compile(makeKernel("add", addKernel), specs, limits());
  ASSERT_TRUE(compiled.ok()) << compiled.status().toString();
  const isa::Program& p = compiled->program;
  // 4 tiles: 8 loads on the sync engine, 4 adds and the 4 stores they trigger on the vector
  // engine (a store needs no semaphore for the add it follows).
  EXPECT_EQ(p.stream(Engine::kSp).size(), 8u);
  EXPECT_EQ(p.stream(Engine::kDve).size(), 8u);
  // Double buffering: tile k reuses the slots of tile k-2, and each sum is computed in place in
  // x's slot (x dies at the add). Each add waits for its two loads (two queues). The loads of
  // tile k >= 2 wait for the store of tile k-2, which read the sum from x's slot after the add
  // that read y's: the load of x waits and the load of y, behind it on the sync engine, already
  // knows. Stores wait for nothing.
  std::vector<std::size_t> addWaits;
  for (const isa::Instruction& instr : p.stream(Engine::kDve)) {
    if (std::holds_alternative<isa::TensorTensor>(instr.body)) {
      addWaits.push_back(instr.sync.waits.size());
    } else {
      EXPECT_TRUE(instr.sync.waits.empty());
    }
  }
  EXPECT_EQ(addWaits, (std::vector<std::size_t>{2, 2, 2, 2}));
  std::vector<std::size_t> loadWaits;
  for (const isa::Instruction& instr : p.stream(Engine::kSp)) {
    loadWaits.push_back(instr.sync.waits.size());
  }
  EXPECT_EQ(loadWaits, (std::vector<std::size_t>{0, 0, 0, 0, 1, 0, 1, 0}));
  EXPECT_EQ(compiled->summary.semaphoreWaits, 10);
  // Timing-only run: the detector would report a race as an error.
  const auto run = runOrFail(*compiled, {}, core::RunMode::kTimingOnly);
  EXPECT_GT(run.stats.total.count(), 0);
}

TEST(KernelCompile, EveryDmaQueueHasOneIssuer) {
  // A queue runs transfers in the order they are triggered; with one issuer that is trace
  // order, which the semaphore counts of the synchronisation pass rely on.
  const std::vector<TensorSpec> specs = {{"a", {1000, 64}, DType::kFp32},
                                         {"b", {1000, 64}, DType::kFp32}};
  auto compiled = compile(makeKernel("add", addKernel), specs, limits());
  ASSERT_TRUE(compiled.ok());
  std::map<std::int64_t, Engine> issuer;
  for (const Engine e : isa::kAllEngines) {
    for (const isa::Instruction& instr : compiled->program.stream(e)) {
      if (const auto* dma = std::get_if<isa::DmaCopy>(&instr.body)) {
        const auto [it, inserted] = issuer.emplace(dma->queue, e);
        EXPECT_EQ(it->second, e) << "queue " << dma->queue << " has two issuers";
      }
    }
  }
  EXPECT_GE(issuer.size(), 4u);  // a queue per load site, stores spread over DVE's
}

TEST(KernelCompile, TheLoadsOfOneDeclarationSiteShareAQueue) {
  // A ring's tiles are used in the order they are loaded: its loads run one after another on
  // one queue (dma_placement.h). addKernel loads x and y, declared at two lines, alternately on
  // the sync engine, 8 row tiles each (the last one clipped, still the same line).
  const std::vector<TensorSpec> specs = {{"a", {1000, 64}, DType::kFp32},
                                         {"b", {1000, 64}, DType::kFp32}};
  auto compiled = compile(makeKernel("add", addKernel), specs, limits());
  ASSERT_TRUE(compiled.ok());
  std::vector<std::int64_t> loadQueues;
  for (const isa::Instruction& instr : compiled->program.stream(Engine::kSp)) {
    if (const auto* dma = std::get_if<isa::DmaCopy>(&instr.body)) {
      loadQueues.push_back(dma->queue);
    }
  }
  ASSERT_EQ(loadQueues.size(), 16u);
  for (std::size_t i = 2; i < loadQueues.size(); ++i) {
    EXPECT_EQ(loadQueues[i], loadQueues[i % 2]) << "load " << i;
  }
  EXPECT_NE(loadQueues[0], loadQueues[1]);
  std::set<std::int64_t> storeQueues;
  for (const isa::Instruction& instr : compiled->program.stream(Engine::kDve)) {
    if (const auto* dma = std::get_if<isa::DmaCopy>(&instr.body)) {
      storeQueues.insert(dma->queue);
    }
  }
  EXPECT_GT(storeQueues.size(), 1u);  // stores are dealt round-robin over DVE's queues
}

TEST(KernelCompile, DoubleBufferingLetsLoadsOverlapCompute) {
  const std::vector<TensorSpec> specs = {{"a", {1024, 2048}, DType::kFp32},
                                         {"b", {1024, 2048}, DType::kFp32}};
  CompileOptions single;
  single.bufs = 1;
  auto one = compile(makeKernel("add", addKernel), specs, limits(), single);
  auto two = compile(makeKernel("add", addKernel), specs, limits());
  ASSERT_TRUE(one.ok() && two.ok());
  // Single buffering: x and y of one tile (z is computed in place in x's slot). Double
  // buffering: two slots for each.
  EXPECT_EQ(one->summary.sbufPeakBytes, 2 * 2048 * 4);
  EXPECT_EQ(two->summary.sbufPeakBytes, 4 * 2048 * 4);
  const auto slow = runOrFail(*one, {}, core::RunMode::kTimingOnly);
  const auto fast = runOrFail(*two, {}, core::RunMode::kTimingOnly);
  EXPECT_LT(fast.stats.total.count(), slow.stats.total.count());
}

/// Four blocks of four [128, 512] bf16 tiles, declared at one line and live a block at a time,
/// read by the tensor engine (`matmul`) or by the vector engine; returns the distinct offsets
/// the allocator gave those tiles.
std::set<std::int64_t> blockSlots(bool matmul) {
  auto kernel = makeKernel("blocks", [matmul](Kernel& k, Tensor a, Tensor w) {
    Tensor out = k.output("out", {4 * 128, 512}, DType::kFp32);
    Tensor stationary = k.sbuf({128, 128}, DType::kBf16, "stationary");
    nisa::dmaCopy(stationary, w);
    for (std::int64_t b = 0; b < 4; ++b) {
      std::vector<Tensor> block;
      for (std::int64_t t = 0; t < 4; ++t) {
        block.push_back(k.sbuf({128, 512}, DType::kBf16, "block"));
        nisa::dmaCopy(block.back(), a(ds((4 * b + t) * 128, 128), all));
      }
      Tensor result = k.sbuf({128, 512}, DType::kFp32, "result");
      if (matmul) {
        Tensor acc = k.psum({128, 512}, DType::kFp32, "acc");
        for (std::int64_t t = 0; t < 4; ++t) {
          nisa::ncMatmul(acc, stationary, block[static_cast<std::size_t>(t)], t > 0);
        }
        nisa::tensorCopy(result, acc, Engine::kDve);
      } else {
        nisa::tensorTensor(result, block[0], block[1], AluOp::kAdd, Engine::kDve);
        nisa::tensorTensor(result, result, block[2], AluOp::kAdd, Engine::kDve);
        nisa::tensorTensor(result, result, block[3], AluOp::kAdd, Engine::kDve);
      }
      nisa::dmaCopy(out(ds(b * 128, 128), all), result);
    }
    return out;
  });
  const std::vector<TensorSpec> specs = {{"a", {16 * 128, 512}, DType::kBf16},
                                         {"w", {128, 128}, DType::kBf16}};
  auto compiled = compile(kernel, specs, limits());
  EXPECT_TRUE(compiled.ok()) << compiled.status().toString();
  std::set<std::int64_t> offsets;
  for (const CompiledTile& tile : compiled.ok() ? compiled->tiles : LargeVector<CompiledTile>{}) {
    if (tile.name == "block") {
      offsets.insert(tile.byte);
    }
  }
  return offsets;
}

TEST(KernelCompile, ABlockTheTensorEngineReadsIsDoubleBufferedAgainstTheNext) {
  // Four tiles live at once: the tensor engine's blocks get 2 x 4 slots (the next block loads
  // while this one is multiplied), the vector engine's keep 4.
  EXPECT_EQ(blockSlots(true).size(), 8u);
  EXPECT_EQ(blockSlots(false).size(), 4u);
}

TEST(KernelCompile, SbufExhaustionNamesTheLineAndTheLiveTiles) {
  // Each tile is loaded in two halves: no one instruction writes all of it, so none is stored to
  // HBM or reloaded from its source to make room (spilling.h), and the eighth does not fit.
  const int line = __LINE__ + 4;
  auto kernel = makeKernel("hog", [](Kernel& k, Tensor a) {
    std::vector<Tensor> held;
    for (int i = 0; i < 8; ++i) {
      held.push_back(k.sbuf({128, 8192}, DType::kFp32, "big"));
      nisa::dmaCopy(held.back()(all, ds(0, 4096)), a(all, ds(0, 4096)));
      nisa::dmaCopy(held.back()(all, ds(4096, 4096)), a(all, ds(4096, 4096)));
    }
    Tensor out = k.output("out", a.shape(), a.dtype());
    for (const Tensor& t : held) {
      nisa::dmaCopy(out, t);
    }
    return out;
  });
  const std::vector<TensorSpec> specs = {{"a", {128, 8192}, DType::kFp32}};
  auto compiled = compile(kernel, specs, limits());
  ASSERT_FALSE(compiled.ok());
  const std::string message = compiled.status().message();
  EXPECT_EQ(message.rfind("compile_test.cpp:" + std::to_string(line) + ": sbuf is full", 0), 0u)
      << message;
  EXPECT_NE(message.find("needs 32768 bytes per partition"), std::string::npos) << message;
  EXPECT_NE(message.find("7 live tiles"), std::string::npos) << message;
}

/// How spillPhases builds its kernel.
enum class SpillCase { kPlain, kSumInDynamicLoop, kHalfLoaded };

/// x stays live while y, z and their sum take three more 64 KiB tiles: 256 KiB of trn2's 224.
/// x is unused meanwhile, so it can go to HBM after its load and come back before 2x. Returns
/// {y + z, 2x}.
KernelDef spillPhases(SpillCase variant) {
  return makeKernel("spill", [variant](Kernel& k, Tensor x, Tensor y, Tensor z) {
    const bool half = variant == SpillCase::kHalfLoaded;
    const std::int64_t rows = half ? 64 : 128;
    Tensor sum = k.output("sum", y.shape(), DType::kFp32);
    Tensor twice = k.output("twice", {rows, 16384}, DType::kFp32);
    Tensor xt = k.sbuf({128, 16384}, DType::kFp32, "x_tile");
    nisa::dmaCopy(xt(ds(0, rows), all), x(ds(0, rows), all));
    Tensor yt = k.sbuf({128, 16384}, DType::kFp32, "y_tile");
    Tensor zt = k.sbuf({128, 16384}, DType::kFp32, "z_tile");
    Tensor st = k.sbuf({128, 16384}, DType::kFp32, "sum_tile");
    nisa::dmaCopy(yt, y);
    nisa::dmaCopy(zt, z);
    if (variant == SpillCase::kSumInDynamicLoop) {
      // Three trips on the vector engine, the same result each time.
      k.dynamicLoop(3, [&] { nisa::tensorTensor(st, yt, zt, AluOp::kAdd, Engine::kDve); });
    } else {
      // Cleared first, so that the sum is not computed in place over y (the allocator's in-place
      // rule takes only a result first written by an element-wise instruction).
      nisa::memset(st, 0.0f);
      nisa::tensorTensor(st, yt, zt, AluOp::kAdd);
    }
    nisa::dmaCopy(sum, st);
    Tensor tt = k.sbuf({rows, 16384}, DType::kFp32, "twice_tile");
    nisa::tensorTensor(tt, xt(ds(0, rows), all), xt(ds(0, rows), all), AluOp::kAdd);
    nisa::dmaCopy(twice, tt);
    return std::vector<Tensor>{sum, twice};
  });
}

const std::vector<TensorSpec> kSpillSpecs = {{"x", {128, 16384}, DType::kFp32},
                                             {"y", {128, 16384}, DType::kFp32},
                                             {"z", {128, 16384}, DType::kFp32}};

/// Runs a compiled spillPhases kernel in `mode` (race detection on) and checks both outputs
/// exactly.
void expectSpillValues(const CompiledKernel& compiled, core::RunMode mode) {
  const std::size_t n = 128 * 16384;
  const std::vector<float> x = randomValues(n, 1);
  const std::vector<float> y = randomValues(n, 2);
  const std::vector<float> z = randomValues(n, 3);
  const auto run =
      runOrFail(compiled,
                {runtime::floatArray({128, 16384}, x), runtime::floatArray({128, 16384}, y),
                 runtime::floatArray({128, 16384}, z)},
                mode);
  ASSERT_EQ(run.outputs.size(), 2u);
  const std::vector<float> sum = runtime::floatValues(run.outputs[0]);
  const std::vector<float> twice = runtime::floatValues(run.outputs[1]);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(sum[i], y[i] + z[i]) << i;
    ASSERT_EQ(twice[i], x[i] + x[i]) << i;
  }
}

TEST(KernelCompile, ATileLiveAcrossAPhaseThatNeedsItsRoomIsSpilledToHbmAndBack) {
  auto compiled = compile(spillPhases(SpillCase::kPlain), kSpillSpecs, limits());
  ASSERT_TRUE(compiled.ok()) << compiled.status().toString();
  EXPECT_EQ(compiled->summary.spills, 1);
  EXPECT_LE(compiled->summary.sbufPeakBytes, limits().sbufPartitionBytes);
  std::map<std::string, int> tiles;
  for (const CompiledTile& tile : compiled->tiles) {
    ++tiles[tile.name];
  }
  EXPECT_EQ(tiles["x_tile"], 1);
  EXPECT_EQ(tiles["x_tile_reloaded"], 1);
  expectSpillValues(*compiled, core::RunMode::kFunctionalTiming);
}

TEST(KernelCompile, ATileIsSpilledAroundADynamicLoopThatNeedsItsRoom) {
  // x's store goes before the loop and its reload after it, never inside, where they would
  // repeat (and a loop may not start DMA transfers).
  auto compiled = compile(spillPhases(SpillCase::kSumInDynamicLoop), kSpillSpecs, limits());
  ASSERT_TRUE(compiled.ok()) << compiled.status().toString();
  EXPECT_EQ(compiled->summary.spills, 1);
  expectSpillValues(*compiled, core::RunMode::kFunctionalOnly);
}

TEST(KernelCompile, ATilePartlyWrittenBeforeTheGapIsNotSpilled) {
  // Only half of x's partitions are loaded: a store of the whole tile would read never-written
  // bytes, so x stays, and the error says SBUF is full.
  auto compiled = compile(spillPhases(SpillCase::kHalfLoaded), kSpillSpecs, limits());
  ASSERT_FALSE(compiled.ok());
  EXPECT_NE(compiled.status().message().find("sbuf is full: tile 'sum_tile'"), std::string::npos)
      << compiled.status().message();
}

TEST(KernelCompile, TraceErrorsPointAtTheKernelLine) {
  int line = 0;
  auto kernel = makeKernel("bad", [&line](Kernel& k, Tensor a) {
    Tensor x = k.sbuf({128, 64}, DType::kFp32);
    line = __LINE__ + 1;
    Tensor wrong = a(ds(0, 200));
    nisa::dmaCopy(x, wrong);
    return k.output("out", {1, 1}, DType::kFp32);
  });
  const std::vector<TensorSpec> specs = {{"a", {128, 64}, DType::kFp32}};
  auto compiled = compile(kernel, specs, limits());
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().message().rfind("compile_test.cpp:" + std::to_string(line) + ":", 0),
            0u)
      << compiled.status().message();
}

TEST(KernelCompile, DumpAfterPrintsTheIR) {
  std::ostringstream dump;
  CompileOptions options;
  options.dumpAfter = "synchronise";
  options.dumpStream = &dump;
  const std::vector<TensorSpec> specs = {{"a", {128, 64}, DType::kFp32},
                                         {"b", {128, 64}, DType::kFp32}};
  ASSERT_TRUE(compile(makeKernel("add", addKernel), specs, limits(), options).ok());
  const std::string text = dump.str();
  EXPECT_NE(text.find("after pass 'synchronise'"), std::string::npos);
  EXPECT_NE(text.find("tensor_tensor"), std::string::npos) << text;
  EXPECT_NE(text.find("compile_test.cpp:"), std::string::npos) << text;
  options.dumpAfter = "no-such-pass";
  EXPECT_FALSE(compile(makeKernel("add", addKernel), specs, limits(), options).ok());
}

TEST(KernelCompile, CacheReturnsTheSameProgramForTheSameShapes) {
  KernelCache cache;
  const KernelDef add = makeKernel("add", addKernel);
  const std::vector<TensorSpec> small = {{"a", {128, 64}, DType::kFp32},
                                         {"b", {128, 64}, DType::kFp32}};
  const std::vector<TensorSpec> large = {{"a", {256, 64}, DType::kFp32},
                                         {"b", {256, 64}, DType::kFp32}};
  auto first = cache.get(add, small, limits());
  auto again = cache.get(add, small, limits());
  auto other = cache.get(add, large, limits());
  ASSERT_TRUE(first.ok() && again.ok() && other.ok());
  EXPECT_EQ(first->get(), again->get());
  EXPECT_NE(first->get(), other->get());
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.hits(), 1);
}

TEST(KernelCompile, OneCallCompilesThroughTheCacheAndRuns) {
  KernelCache cache;
  const KernelDef add = makeKernel("add", addKernel);
  const std::vector<TensorSpec> specs = {{"a", {130, 20}, DType::kFp32},
                                         {"b", {130, 20}, DType::kFp32}};
  const auto a = randomValues(130 * 20, 5);
  const auto b = randomValues(130 * 20, 6);
  const std::vector<runtime::NpyArray> inputs = {runtime::floatArray({130, 20}, a),
                                                 runtime::floatArray({130, 20}, b)};
  runtime::RunOptions options;
  for (int call = 0; call < 2; ++call) {
    auto run = kernel::testutil::trn2Session().runKernel(add, specs, inputs, options, &cache);
    ASSERT_TRUE(run.ok()) << run.status().toString();
    EXPECT_EQ(runtime::floatValues(run->outputs[0])[7], a[7] + b[7]);
  }
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.hits(), 1);
  options.mode = core::RunMode::kTimingOnly;
  auto timed = kernel::testutil::trn2Session().runKernel(add, specs, {}, options, &cache);
  ASSERT_TRUE(timed.ok()) << timed.status().toString();
  EXPECT_TRUE(timed->outputs.empty());
  EXPECT_GT(timed->stats.total.count(), 0);
}

TEST(KernelCompile, SavedProgramLoadsBackIdentical) {
  const std::vector<TensorSpec> specs = {{"a", {200, 96}, DType::kFp32},
                                         {"b", {200, 96}, DType::kFp32}};
  auto compiled = compile(makeKernel("add", addKernel), specs, limits());
  ASSERT_TRUE(compiled.ok());
  const std::string path = ::testing::TempDir() + "/add_kernel.trnb";
  isa::ChipProgram chip;
  chip.cores.push_back({0, compiled->program});
  ASSERT_TRUE(runtime::saveChipProgram(chip, path).ok());
  auto loaded = runtime::loadProgram(path);  // one core at LNC 1: the single-program form
  ASSERT_TRUE(loaded.ok()) << loaded.status().toString();
  EXPECT_EQ(isa::formatProgramText(*loaded), isa::formatProgramText(compiled->program));
  EXPECT_FALSE(runtime::saveChipProgram(chip, "/nonexistent-dir/x.trnb").ok());
}

TEST(KernelCompile, SpmdGridRunsEveryProgramOnItsSlice) {
  // Program (i, j) of a 2 x 3 grid adds 10 * i + j to its 64 x 32 block of the input.
  auto kernel = makeKernel("blocks", [](Kernel& k, Tensor a) {
    const std::int64_t i = k.programId(0);
    const std::int64_t j = k.programId(1);
    EXPECT_EQ(k.numPrograms(0), 2);
    EXPECT_EQ(k.numPrograms(1), 3);
    Tensor out = k.output("out", a.shape(), DType::kFp32);
    Tensor x = k.sbuf({64, 32}, DType::kFp32, "x");
    nisa::dmaCopy(x, a(ds(i * 64, 64), ds(j * 32, 32)));
    nisa::tensorScalar(x, x, AluOp::kAdd, static_cast<float>(10 * i + j));
    nisa::dmaCopy(out(ds(i * 64, 64), ds(j * 32, 32)), x);
    return out;
  });
  const std::vector<TensorSpec> specs = {{"a", {128, 96}, DType::kFp32}};
  auto compiled = compile(kernel, specs, limits(), {}, Grid{{2, 3}});
  ASSERT_TRUE(compiled.ok()) << compiled.status().toString();
  EXPECT_EQ(compiled->program.tensors.size(), 2u);
  const auto input = randomValues(128 * 96, 4);
  const auto run = runOrFail(*compiled, {runtime::floatArray({128, 96}, input)});
  const std::vector<float> out = runtime::floatValues(run.outputs[0]);
  for (std::int64_t r = 0; r < 128; ++r) {
    for (std::int64_t c = 0; c < 96; ++c) {
      const auto at = static_cast<std::size_t>(r * 96 + c);
      const double add = 10.0 * static_cast<double>(r / 64) + static_cast<double>(c / 32);
      ASSERT_EQ(out[at], static_cast<float>(input[at] + add)) << r << "," << c;
    }
  }
  EXPECT_FALSE(compile(kernel, specs, limits(), {}, Grid{{0}}).ok());
}

/// x <- x * 0.5 + 1 repeated `trips` times in a hardware loop on the vector engine.
Tensor halvingLoop(Kernel& k, Tensor a, std::int64_t trips) {
  Tensor x = k.sbuf({a.shape(0), a.shape(1)}, DType::kFp32, "x");
  nisa::dmaCopy(x, a);
  k.dynamicLoop(
      trips, [&] { nisa::tensorScalar(x, x, AluOp::kMultiply, 0.5f, false, AluOp::kAdd, 1.0f); });
  Tensor out = k.output("out", a.shape(), DType::kFp32);
  nisa::dmaCopy(out, x);
  return out;
}

TEST(KernelCompile, DynamicLoopRunsOnTheSequencerWithoutUnrolling) {
  const std::int64_t trips = 37;
  auto kernel = makeKernel("halve", [&](Kernel& k, Tensor a) { return halvingLoop(k, a, trips); });
  const std::vector<TensorSpec> specs = {{"a", {96, 40}, DType::kFp32}};
  auto compiled = compile(kernel, specs, limits());
  ASSERT_TRUE(compiled.ok()) << compiled.status().toString();
  // reg_set, the body, reg_add, branch_nz, and the store the body's engine triggers.
  const auto& dve = compiled->program.stream(Engine::kDve);
  ASSERT_EQ(dve.size(), 5u);
  EXPECT_TRUE(std::holds_alternative<isa::RegSet>(dve[0].body));
  EXPECT_TRUE(std::holds_alternative<isa::BranchNonZero>(dve[3].body));
  const auto input = randomValues(96 * 40, 3);
  const auto run = runOrFail(*compiled, {runtime::floatArray({96, 40}, input)});
  const std::vector<float> out = runtime::floatValues(run.outputs[0]);
  for (std::size_t i = 0; i < out.size(); ++i) {
    float expected = input[i];
    for (std::int64_t t = 0; t < trips; ++t) {
      // Each stage of tensor_scalar rounds to fp32 (exact here: *0.5 and +1 of such values).
      expected = static_cast<float>(static_cast<double>(expected) * 0.5);
      expected = static_cast<float>(static_cast<double>(expected) + 1.0);
    }
    ASSERT_EQ(out[i], expected) << "element " << i;
  }
  EXPECT_EQ(run.stats.engines[static_cast<std::size_t>(Engine::kDve)].instructions,
            static_cast<std::uint64_t>(trips * 3 + 2));
  // Without data the loop still runs (its control instructions are decoded again at issue):
  // the same instructions in the same time.
  const auto timed = runOrFail(*compiled, {}, core::RunMode::kTimingOnly);
  EXPECT_EQ(timed.stats.engines[static_cast<std::size_t>(Engine::kDve)].instructions,
            static_cast<std::uint64_t>(trips * 3 + 2));
  EXPECT_EQ(timed.stats.total, run.stats.total);
}

TEST(KernelCompile, DynamicLoopRulesAreCheckedAtTheLoopLine) {
  const std::vector<TensorSpec> specs = {{"a", {128, 64}, DType::kFp32}};
  int line = 0;
  auto twoEngines = makeKernel("two", [&](Kernel& k, Tensor a) {
    Tensor x = k.sbuf({128, 64}, DType::kFp32);
    nisa::dmaCopy(x, a);
    line = __LINE__ + 1;
    k.dynamicLoop(4, [&] {
      nisa::tensorCopy(x, x);
      nisa::activation(x, x, isa::ActivationFunction::kExp);
    });
    return k.output("out", {1, 1}, DType::kFp32);
  });
  auto compiled = compile(twoEngines, specs, limits());
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().message().rfind("compile_test.cpp:" + std::to_string(line), 0), 0u)
      << compiled.status().message();
  EXPECT_NE(compiled.status().message().find("two engines"), std::string::npos);

  auto withDma = makeKernel("dma", [&](Kernel& k, Tensor a) {
    Tensor x = k.sbuf({128, 64}, DType::kFp32);
    line = __LINE__ + 1;
    k.dynamicLoop(4, [&] { nisa::dmaCopy(x, a); });
    return k.output("out", {1, 1}, DType::kFp32);
  });
  compiled = compile(withDma, specs, limits());
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().message().rfind("compile_test.cpp:" + std::to_string(line), 0), 0u)
      << compiled.status().message();
  EXPECT_NE(compiled.status().message().find("DMA"), std::string::npos);
}

}  // namespace
}  // namespace trn::kernel
