// Tests of the allocator's in-place rule: an element-wise instruction's result takes the space
// of an input tile that dies there when the two have one size, dtype and pattern (or the result
// is written in pieces that way), so that a chain of element-wise steps holds one tile instead of
// one per step; and the cases the rule must leave alone (the input still read later, read between
// the pieces, or read in another order). Each kernel's
// output is checked against a float64 CPU reference and run with race detection on.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>

#include "kernel_test_util.h"
#include "trn/kernel/compiler.h"
#include "trn/kernel/nisa.h"
#include "trn/runtime/host_io.h"
#include "trn/runtime/session.h"

namespace trn::kernel {
namespace {

using testutil::limits;
using testutil::offsetsByName;
using testutil::randomValues;

using isa::AluOp;
using isa::Engine;

constexpr std::int64_t kIterations = 4;
/// 48 KiB of fp32 per partition: trn2's 224 KiB holds four of them beside nothing else.
constexpr std::int64_t kCols = 12288;
constexpr std::int64_t kTileBytes = kCols * 4;

/// For each of 4 row tiles of x [4 x 128, 12288] fp32: a load, then three element-wise steps,
/// each into a new tile declared at its own line, s = x * 2 + 1 (two steps) and y = s * s, then a
/// store. With `keepInput` the last step is y = s * x: the loaded tile is read again there, so it
/// does not die at the first step.
KernelDef chainKernel(bool keepInput) {
  return makeKernel("chain", [keepInput](Kernel& k, Tensor x) {
    Tensor out = k.output("out", x.shape(), x.dtype());
    for (std::int64_t i = 0; i < kIterations; ++i) {
      Tensor loaded = k.sbuf({128, kCols}, DType::kFp32, "loaded");
      nisa::dmaCopy(loaded, x(ds(i * 128, 128), all));
      Tensor doubled = k.sbuf({128, kCols}, DType::kFp32, "doubled");
      nisa::tensorScalar(doubled, loaded, AluOp::kMultiply, 2.0f);
      Tensor shifted = k.sbuf({128, kCols}, DType::kFp32, "shifted");
      nisa::tensorScalar(shifted, doubled, AluOp::kAdd, 1.0f, false, AluOp::kBypass, 0.0f, false,
                         Engine::kAct);
      Tensor result = k.sbuf({128, kCols}, DType::kFp32, "result");
      nisa::tensorTensor(result, shifted, keepInput ? loaded : shifted, AluOp::kMultiply);
      nisa::dmaCopy(out(ds(i * 128, 128), all), result);
    }
    return out;
  });
}

const std::vector<TensorSpec> kSpecs = {{"x", {kIterations * 128, kCols}, DType::kFp32}};

/// Runs `compiled` functionally with race detection and returns its one output.
std::vector<float> runOutput(const CompiledKernel& compiled, const std::vector<float>& x,
                             std::int64_t rows, std::int64_t cols) {
  runtime::RunOptions options;
  options.mode = core::RunMode::kFunctionalTiming;
  options.detectRaces = true;
  const std::vector<runtime::NpyArray> inputs = {runtime::floatArray({rows, cols}, x)};
  auto result = testutil::trn2Session().runKernel(compiled, inputs, options);
  EXPECT_TRUE(result.ok()) << result.status().toString();
  if (!result.ok() || result->outputs.size() != 1) {
    return {};
  }
  return runtime::floatValues(result->outputs[0]);
}

void checkChain(const CompiledKernel& compiled, bool keepInput) {
  const std::vector<float> x = randomValues(kIterations * 128 * kCols, 11);
  const std::vector<float> y = runOutput(compiled, x, kIterations * 128, kCols);
  ASSERT_EQ(y.size(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double shifted = static_cast<double>(x[i]) * 2.0 + 1.0;
    const double expected = shifted * (keepInput ? static_cast<double>(x[i]) : shifted);
    // Each step rounds to fp32 once: three roundings of relative size 2^-24.
    ASSERT_NEAR(y[i], expected, 4e-7 * std::abs(expected) + 1e-30) << i;
  }
}

TEST(AllocationInPlace, AChainOfElementWiseStepsHoldsOneTileAndStaysDoubleBuffered) {
  auto compiled = compile(chainKernel(false), kSpecs, limits());
  ASSERT_TRUE(compiled.ok()) << compiled.status().toString();
  // Without the rule the four sites need 2 x 4 x 48 KiB, more than trn2's 224 KiB, and would go
  // single. With it every step is computed in the loaded tile's two slots.
  EXPECT_EQ(compiled->summary.bufs, 2);
  EXPECT_EQ(compiled->summary.singleSites, 0);
  EXPECT_EQ(compiled->summary.spills, 0);
  EXPECT_EQ(compiled->summary.sbufPeakBytes, 2 * kTileBytes);
  auto offsets = offsetsByName(*compiled);
  EXPECT_EQ(offsets["loaded"].size(), 2u);
  EXPECT_EQ(offsets["doubled"], offsets["loaded"]);
  EXPECT_EQ(offsets["shifted"], offsets["loaded"]);
  EXPECT_EQ(offsets["result"], offsets["loaded"]);
  // Each tile is reported with its own live range: the result of a step starts where its input
  // ends.
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> firstTile;
  for (const CompiledTile& tile : compiled->tiles) {
    firstTile.emplace(tile.name, std::pair{tile.firstOp, tile.lastOp});
  }
  EXPECT_EQ(firstTile["doubled"].first, firstTile["loaded"].second);
  EXPECT_EQ(firstTile["shifted"].first, firstTile["doubled"].second);
  EXPECT_EQ(firstTile["result"].first, firstTile["shifted"].second);
  checkChain(*compiled, false);
}

TEST(AllocationInPlace, AnInputReadAfterTheStepKeepsItsOwnSpace) {
  auto compiled = compile(chainKernel(true), kSpecs, limits());
  ASSERT_TRUE(compiled.ok()) << compiled.status().toString();
  auto offsets = offsetsByName(*compiled);
  // `loaded` is read by the last step, so neither `doubled` nor anything after it may take its
  // space; `shifted` still takes `doubled`'s, and `result` (which reads `loaded` too) takes
  // `shifted`'s.
  for (const std::int64_t at : offsets["doubled"]) {
    EXPECT_EQ(offsets["loaded"].count(at), 0u) << at;
  }
  EXPECT_EQ(offsets["shifted"], offsets["doubled"]);
  EXPECT_EQ(offsets["result"], offsets["doubled"]);
  checkChain(*compiled, true);
}

/// x [128, 4096] fp32 loaded, y = x * 3 written in two halves of 2048 columns (as a kernel does
/// that multiplies by a PSUM broadcast of a bounded width), stored. With `readBetween`, a copy of
/// the input's last column is taken between the halves, so the input is read by an instruction
/// that writes no piece of the result.
KernelDef halvesKernel(bool readBetween) {
  return makeKernel("halves", [readBetween](Kernel& k, Tensor x) {
    Tensor out = k.output("out", x.shape(), x.dtype());
    Tensor loaded = k.sbuf({128, 4096}, DType::kFp32, "loaded");
    nisa::dmaCopy(loaded, x);
    Tensor tripled = k.sbuf({128, 4096}, DType::kFp32, "tripled");
    Tensor lastColumn = k.sbuf({128, 1}, DType::kFp32, "last_column");
    for (std::int64_t c = 0; c < 4096; c += 2048) {
      nisa::tensorScalar(tripled(all, ds(c, 2048)), loaded(all, ds(c, 2048)), AluOp::kMultiply,
                         3.0f);
      if (readBetween && c == 0) {
        nisa::tensorCopy(lastColumn, loaded(all, ds(4095, 1)));
      }
    }
    if (readBetween) {
      nisa::tensorScalar(tripled(all, ds(4095, 1)), lastColumn, AluOp::kMultiply, 3.0f);
    }
    nisa::dmaCopy(out, tripled);
    return out;
  });
}

TEST(AllocationInPlace, AResultWrittenInPiecesOverItsInputTakesItsSpace) {
  const std::vector<TensorSpec> specs = {{"x", {128, 4096}, DType::kFp32}};
  const std::vector<float> x = randomValues(128 * 4096, 3);
  for (const bool readBetween : {false, true}) {
    SCOPED_TRACE(readBetween ? "input read between the pieces" : "pieces only");
    auto compiled = compile(halvesKernel(readBetween), specs, limits());
    ASSERT_TRUE(compiled.ok()) << compiled.status().toString();
    auto offsets = offsetsByName(*compiled);
    EXPECT_EQ(offsets["tripled"] == offsets["loaded"], !readBetween);
    const std::vector<float> y = runOutput(*compiled, x, 128, 4096);
    ASSERT_EQ(y.size(), x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      ASSERT_EQ(y[i], x[i] * 3.0f) << i;
    }
  }
}

TEST(AllocationInPlace, AStepThatReadsItsInputInAnotherOrderIsNotComputedInPlace) {
  constexpr std::int64_t kRows = 16;
  constexpr std::int64_t kRowLength = 32;
  // A transpose of each partition's [16, 32] block into a [32, 16] tile: same size and dtype,
  // the input dies there and the result is written whole, but element k of the result is not
  // element k of the input. Computed in place, the copy would overwrite input elements it still
  // has to read.
  const KernelDef def = makeKernel("transposed", [](Kernel& k, Tensor x) {
    Tensor out = k.output("out", {128, kRows * kRowLength}, DType::kFp32);
    Tensor loaded = k.sbuf({128, kRows, kRowLength}, DType::kFp32, "loaded");
    nisa::dmaCopy(loaded, x.reshape({128, kRows, kRowLength}));
    Tensor transposed = k.sbuf({128, kRowLength, kRows}, DType::kFp32, "transposed");
    nisa::tensorCopy(transposed, loaded.permute({0, 2, 1}));
    Tensor doubled = k.sbuf({128, kRowLength, kRows}, DType::kFp32, "doubled");
    nisa::tensorScalar(doubled, transposed, AluOp::kMultiply, 2.0f);
    nisa::dmaCopy(out.reshape({128, kRowLength, kRows}), doubled);
    return out;
  });
  const std::vector<TensorSpec> specs = {{"x", {128, kRows * kRowLength}, DType::kFp32}};
  auto compiled = compile(def, specs, limits());
  ASSERT_TRUE(compiled.ok()) << compiled.status().toString();
  auto offsets = offsetsByName(*compiled);
  EXPECT_NE(offsets["transposed"], offsets["loaded"]);
  EXPECT_EQ(offsets["doubled"], offsets["transposed"]);
  const std::vector<float> x = randomValues(128 * kRows * kRowLength, 5);
  const std::vector<float> y = runOutput(*compiled, x, 128, kRows * kRowLength);
  ASSERT_EQ(y.size(), x.size());
  for (std::int64_t p = 0; p < 128; ++p) {
    for (std::int64_t c = 0; c < kRowLength; ++c) {
      for (std::int64_t r = 0; r < kRows; ++r) {
        const auto at = static_cast<std::size_t>((p * kRowLength + c) * kRows + r);
        const auto from = static_cast<std::size_t>((p * kRows + r) * kRowLength + c);
        ASSERT_EQ(y[at], 2.0f * x[from]) << p << ", " << c << ", " << r;
      }
    }
  }
}

}  // namespace
}  // namespace trn::kernel
