// Tests of spilling (src/kernel/passes/spilling.h): what a spill moves (a clean tile is reloaded
// from its HBM source with no store, a dirty one stored to scratch and reloaded, a reloaded tile
// not written since reloaded from where it came), checked as bytes of spill traffic against the
// figure derived by hand, and the values through the spills against float references.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "kernel_test_util.h"
#include "trn/kernel/compiler.h"
#include "trn/kernel/nisa.h"
#include "trn/runtime/host_io.h"
#include "trn/runtime/session.h"

namespace trn::kernel {
namespace {

using testutil::limits;
using testutil::randomValues;

using isa::AluOp;

/// A [128, 16384] fp32 tile: 64 KiB per partition, 8 MiB in all. Four are more than trn2's
/// 224 KiB per partition; three fit.
constexpr std::int64_t kCols = 16384;
constexpr std::int64_t kTileBytes = 128 * kCols * 4;

/// How the kept tile `x` comes to be.
enum class Kept {
  kLoaded,    ///< loaded from x and only read: clean
  kComputed,  ///< x + x, computed on chip: dirty until stored
};

/// x (kept) stays live across `phases` phases, each of which sums y and z into a fresh tile
/// while x is unused (x, y, z and the sum are four tiles: one must go), and x is stored after
/// each phase. Returns {y + z, the kept tile once per phase}.
KernelDef keptAcrossPhases(Kept kept, int phases) {
  return makeKernel("kept_across", [kept, phases](Kernel& k, Tensor x, Tensor y, Tensor z) {
    Tensor sum = k.output("sum", y.shape(), DType::kFp32);
    Tensor copies = k.output("copies", {phases * 128, kCols}, DType::kFp32);
    Tensor xt = k.sbuf({128, kCols}, DType::kFp32, "x_tile");
    nisa::dmaCopy(xt, x);
    if (kept == Kept::kComputed) {
      nisa::tensorTensor(xt, xt, xt, AluOp::kAdd);
    }
    for (int p = 0; p < phases; ++p) {
      Tensor yt = k.sbuf({128, kCols}, DType::kFp32, "y_tile");
      Tensor zt = k.sbuf({128, kCols}, DType::kFp32, "z_tile");
      Tensor st = k.sbuf({128, kCols}, DType::kFp32, "sum_tile");
      nisa::dmaCopy(yt, y);
      nisa::dmaCopy(zt, z);
      // Cleared first, so that the sum is not computed in place over y.
      nisa::memset(st, 0.0f);
      nisa::tensorTensor(st, yt, zt, AluOp::kAdd);
      nisa::dmaCopy(sum, st);
      nisa::dmaCopy(copies(ds(p * 128, 128), all), xt);
    }
    return std::vector<Tensor>{sum, copies};
  });
}

const std::vector<TensorSpec> kSpecs = {{"x", {128, kCols}, DType::kFp32},
                                        {"y", {128, kCols}, DType::kFp32},
                                        {"z", {128, kCols}, DType::kFp32}};

/// Compiles keptAcrossPhases, runs it functionally with race detection and checks both outputs
/// exactly against the same float operations on the host.
CompileSummary compileAndCheck(Kept what, int phases) {
  auto compiled = compile(keptAcrossPhases(what, phases), kSpecs, limits());
  EXPECT_TRUE(compiled.ok()) << compiled.status().toString();
  if (!compiled.ok()) {
    return {};
  }
  EXPECT_LE(compiled->summary.sbufPeakBytes, limits().sbufPartitionBytes);
  const std::size_t n = 128 * kCols;
  const std::vector<float> x = randomValues(n, 1);
  const std::vector<float> y = randomValues(n, 2);
  const std::vector<float> z = randomValues(n, 3);
  runtime::RunOptions options;
  options.mode = core::RunMode::kFunctionalTiming;
  const std::vector<runtime::NpyArray> inputs = {runtime::floatArray({128, kCols}, x),
                                                 runtime::floatArray({128, kCols}, y),
                                                 runtime::floatArray({128, kCols}, z)};
  auto run = testutil::trn2Session().runKernel(*compiled, inputs, options);
  EXPECT_TRUE(run.ok()) << run.status().toString();
  if (!run.ok()) {
    return compiled->summary;
  }
  const std::vector<float> sum = runtime::floatValues(run->outputs[0]);
  const std::vector<float> copies = runtime::floatValues(run->outputs[1]);
  for (std::size_t i = 0; i < n && !::testing::Test::HasFailure(); ++i) {
    EXPECT_EQ(sum[i], y[i] + z[i]) << i;
    const float kept = what == Kept::kComputed ? x[i] + x[i] : x[i];
    for (std::size_t p = 0; p < static_cast<std::size_t>(phases); ++p) {
      EXPECT_EQ(copies[p * n + i], kept) << p << ", " << i;
    }
  }
  return compiled->summary;
}

/// The tiles of each name in `compiled`.
std::map<std::string, int> tileCounts(const CompiledKernel& compiled) {
  std::map<std::string, int> tiles;
  for (const CompiledTile& tile : compiled.tiles) {
    ++tiles[tile.name];
  }
  return tiles;
}

TEST(AllocationSpill, ALoadedTileIsReloadedFromItsSourceWithNoStore) {
  // x's only write is the load of all of it from the input x, which the kernel never writes:
  // one reload from x (8 MiB), no store, no scratch tensor.
  const CompileSummary summary = compileAndCheck(Kept::kLoaded, 1);
  EXPECT_EQ(summary.spills, 1);
  EXPECT_EQ(summary.spillBytes, kTileBytes);
  auto compiled = compile(keptAcrossPhases(Kept::kLoaded, 1), kSpecs, limits());
  ASSERT_TRUE(compiled.ok());
  for (const isa::TensorDecl& tensor : compiled->program.tensors) {
    EXPECT_EQ(tensor.name.find("_spilled"), std::string::npos) << tensor.name;
  }
  EXPECT_EQ(tileCounts(*compiled)["x_tile_reloaded"], 1);
}

TEST(AllocationSpill, AComputedTileIsStoredAndReloaded) {
  // x + x is written on chip: a store to scratch and a reload, 2 x 8 MiB.
  const CompileSummary summary = compileAndCheck(Kept::kComputed, 1);
  EXPECT_EQ(summary.spills, 1);
  EXPECT_EQ(summary.spillBytes, 2 * kTileBytes);
}

TEST(AllocationSpill, AReloadedTileIsSplitAgainAcrossItsNextGap) {
  // Three phases: x leaves before each and comes back after it. Loaded: three reloads from x.
  // Computed: the first spill stores and reloads; the reloaded tile is only read afterwards, so
  // the next two reload it from the scratch tensor with no store: 2 + 1 + 1 tiles.
  const CompileSummary loaded = compileAndCheck(Kept::kLoaded, 3);
  EXPECT_EQ(loaded.spills, 3);
  EXPECT_EQ(loaded.spillBytes, 3 * kTileBytes);
  const CompileSummary computed = compileAndCheck(Kept::kComputed, 3);
  EXPECT_EQ(computed.spills, 3);
  EXPECT_EQ(computed.spillBytes, 4 * kTileBytes);
}

TEST(AllocationSpill, ACheapTileNeededSoonLeavesRatherThanADirtyOneNeededLater) {
  // Tiles of 64 KiB per partition; trn2 holds three and a half. x and y + y (dirty) are live
  // across the whole kernel, the row r ([1, kCols], 64 KiB of traffic but 64 KiB per partition
  // of SBUF like a full tile) is loaded before t = x * x starts and added to t's first row
  // after. Four tiles at t's start: one must go.
  // - Tiles unused over all of t's lifetime: only y + y, stored and reloaded: 2 x 8 MiB.
  // - Tiles unused where t starts: r too, reloaded from its source before it is added (64 KiB);
  //   that reload finds four tiles live again (x, y + y, t, r), and x, unused until the last
  //   sum, is reloaded from its source (8 MiB, no store) rather than y + y stored and reloaded:
  //   8 MiB + 64 KiB in all, the plan the allocator keeps.
  auto kernel = makeKernel("row_needed_soon", [](Kernel& k, Tensor x, Tensor y, Tensor r) {
    Tensor square = k.output("square", x.shape(), DType::kFp32);
    Tensor sum = k.output("sum", x.shape(), DType::kFp32);
    Tensor xt = k.sbuf({128, kCols}, DType::kFp32, "x_tile");
    Tensor yt = k.sbuf({128, kCols}, DType::kFp32, "y_tile");
    Tensor rt = k.sbuf({1, kCols}, DType::kFp32, "r_row");
    Tensor tt = k.sbuf({128, kCols}, DType::kFp32, "square_tile");
    nisa::dmaCopy(xt, x);
    nisa::dmaCopy(yt, y);
    nisa::tensorTensor(yt, yt, yt, AluOp::kAdd);
    nisa::dmaCopy(rt, r);
    nisa::tensorTensor(tt, xt, xt, AluOp::kMultiply);
    nisa::tensorTensor(tt(ds(0, 1), all), tt(ds(0, 1), all), rt, AluOp::kAdd);
    nisa::dmaCopy(square, tt);
    nisa::tensorTensor(yt, yt, xt, AluOp::kAdd);
    nisa::dmaCopy(sum, yt);
    return std::vector<Tensor>{square, sum};
  });
  const std::vector<TensorSpec> specs = {{"x", {128, kCols}, DType::kFp32},
                                         {"y", {128, kCols}, DType::kFp32},
                                         {"r", {1, kCols}, DType::kFp32}};
  auto compiled = compile(kernel, specs, limits());
  ASSERT_TRUE(compiled.ok()) << compiled.status().toString();
  EXPECT_LE(compiled->summary.sbufPeakBytes, limits().sbufPartitionBytes);
  EXPECT_EQ(compiled->summary.spills, 2);
  EXPECT_EQ(compiled->summary.spillBytes, kTileBytes + kCols * 4);
  EXPECT_EQ(tileCounts(*compiled)["r_row_reloaded"], 1);
  EXPECT_EQ(tileCounts(*compiled)["x_tile_reloaded"], 1);
  for (const isa::TensorDecl& tensor : compiled->program.tensors) {
    EXPECT_EQ(tensor.name.find("_spilled"), std::string::npos) << tensor.name;
  }
  const std::size_t n = 128 * kCols;
  const std::vector<float> x = randomValues(n, 4);
  const std::vector<float> y = randomValues(n, 5);
  const std::vector<float> r = randomValues(kCols, 6);
  runtime::RunOptions options;
  options.mode = core::RunMode::kFunctionalTiming;
  const std::vector<runtime::NpyArray> inputs = {runtime::floatArray({128, kCols}, x),
                                                 runtime::floatArray({128, kCols}, y),
                                                 runtime::floatArray({1, kCols}, r)};
  auto run = testutil::trn2Session().runKernel(*compiled, inputs, options);
  ASSERT_TRUE(run.ok()) << run.status().toString();
  const std::vector<float> square = runtime::floatValues(run->outputs[0]);
  const std::vector<float> sum = runtime::floatValues(run->outputs[1]);
  for (std::size_t i = 0; i < n && !::testing::Test::HasFailure(); ++i) {
    const float xx = x[i] * x[i];
    EXPECT_EQ(square[i], i < static_cast<std::size_t>(kCols) ? xx + r[i] : xx) << i;
    EXPECT_EQ(sum[i], (y[i] + y[i]) + x[i]) << i;
  }
}

TEST(AllocationSpill, AKernelThatFitsSpillsNothing) {
  // Three 64 KiB tiles fit trn2's 224 KiB: nothing moves, and the program has the five
  // instructions the kernel wrote.
  auto fits = makeKernel("fits", [](Kernel& k, Tensor x, Tensor y) {
    Tensor out = k.output("out", x.shape(), DType::kFp32);
    Tensor xt = k.sbuf({128, kCols}, DType::kFp32, "x_tile");
    Tensor yt = k.sbuf({128, kCols}, DType::kFp32, "y_tile");
    Tensor st = k.sbuf({128, kCols}, DType::kFp32, "sum_tile");
    nisa::dmaCopy(xt, x);
    nisa::dmaCopy(yt, y);
    nisa::memset(st, 0.0f);
    nisa::tensorTensor(st, xt, yt, AluOp::kAdd);
    nisa::dmaCopy(out, st);
    return out;
  });
  const std::vector<TensorSpec> specs = {{"x", {128, kCols}, DType::kFp32},
                                         {"y", {128, kCols}, DType::kFp32}};
  auto compiled = compile(fits, specs, limits());
  ASSERT_TRUE(compiled.ok()) << compiled.status().toString();
  EXPECT_EQ(compiled->summary.spills, 0);
  EXPECT_EQ(compiled->summary.spillBytes, 0);
  EXPECT_EQ(compiled->summary.instructions, 5);
}

}  // namespace
}  // namespace trn::kernel
