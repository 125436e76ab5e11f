// Tests of how deep the allocator buffers each declaration site when the whole kernel does not
// fit SBUF multi-buffered (the large tiles go single, the small per-iteration tiles keep their
// second slot and with it the overlap of their transfers with the compute), and of spilling
// more than one tile declared at one line; and the third slot of tiles the tensor engine reads
// one at a time.
#include <gtest/gtest.h>

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

constexpr std::int64_t kIterations = 8;
constexpr std::int64_t kCols = 2048;
/// 120 KiB per partition: one fits trn2's 224 KiB beside the small tiles' rings, two do not.
constexpr std::int64_t kBigCols = 30720;

/// For each of 8 row tiles of x [8 x 128, 2048] fp32: a load into `small`, its square on the
/// vector engine into the first columns of a per-iteration `big` scratch tile, their sum into
/// `sum`, and a store of that.
KernelDef partialKernel() {
  return makeKernel("partial", [](Kernel& k, Tensor x) {
    Tensor out = k.output("out", x.shape(), x.dtype());
    for (std::int64_t i = 0; i < kIterations; ++i) {
      Tensor small = k.sbuf({128, kCols}, DType::kFp32, "small");
      nisa::dmaCopy(small, x(ds(i * 128, 128), all));
      Tensor big = k.sbuf({128, kBigCols}, DType::kFp32, "big");
      const Tensor square = big(all, ds(0, kCols));
      nisa::tensorTensor(square, small, small, AluOp::kMultiply, Engine::kDve);
      Tensor sum = k.sbuf({128, kCols}, DType::kFp32, "sum");
      nisa::tensorTensor(sum, square, small, AluOp::kAdd, Engine::kDve);
      nisa::dmaCopy(out(ds(i * 128, 128), all), sum);
    }
    return out;
  });
}

const std::vector<TensorSpec> kPartialSpecs = {{"x", {kIterations * 128, kCols}, DType::kFp32}};

runtime::RunResult run(const CompiledKernel& compiled, const std::vector<runtime::NpyArray>& inputs,
                       core::RunMode mode) {
  runtime::RunOptions options;
  options.mode = mode;
  auto result = testutil::trn2Session().runKernel(compiled, inputs, options);
  EXPECT_TRUE(result.ok()) << result.status().toString();
  return result.ok() ? std::move(result).value() : runtime::RunResult{};
}

TEST(AllocationDepth, TheLargeTileGoesSingleAndTheSmallTilesKeepTwoSlots) {
  auto compiled = compile(partialKernel(), kPartialSpecs, limits());
  ASSERT_TRUE(compiled.ok()) << compiled.status().toString();
  EXPECT_EQ(compiled->summary.bufs, 2);
  EXPECT_EQ(compiled->summary.singleSites, 1);
  EXPECT_EQ(compiled->summary.spills, 0);
  auto offsets = offsetsByName(*compiled);
  EXPECT_EQ(offsets["big"].size(), 1u);
  EXPECT_EQ(offsets["small"].size(), 2u);
  EXPECT_EQ(offsets["sum"].size(), 2u);
  // One big tile and two slots of the small ones: 120 + 2 x 8 KiB (`sum` is computed in place
  // in `small`'s slot, which dies at that step).
  EXPECT_EQ(offsets["sum"], offsets["small"]);
  EXPECT_EQ(compiled->summary.sbufPeakBytes, (kBigCols + 2 * kCols) * 4);

  const std::vector<float> x = randomValues(kIterations * 128 * kCols, 7);
  const auto functional = run(*compiled, {runtime::floatArray({kIterations * 128, kCols}, x)},
                              core::RunMode::kFunctionalTiming);
  ASSERT_EQ(functional.outputs.size(), 1u);
  const std::vector<float> y = runtime::floatValues(functional.outputs[0]);
  for (std::size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(y[i], x[i] * x[i] + x[i]) << i;
  }
}

TEST(AllocationDepth, TheSmallTilesSecondSlotsLetTheTransfersOverlapTheVectorEngine) {
  CompileOptions single;
  single.bufs = 1;
  auto one = compile(partialKernel(), kPartialSpecs, limits(), single);
  auto partial = compile(partialKernel(), kPartialSpecs, limits());
  ASSERT_TRUE(one.ok() && partial.ok());
  const auto serial = run(*one, {}, core::RunMode::kTimingOnly).stats;
  const auto overlapped = run(*partial, {}, core::RunMode::kTimingOnly).stats;
  auto engineAndDmaBusy = [](const core::RunStats& s) {
    return s.engines[static_cast<std::size_t>(Engine::kDve)].busy.count() + s.dma.busy.count();
  };
  // Single buffered, every load waits for the vector engine to finish with the slot it reuses,
  // and the vector engine for that load: the two never work at once, so the run takes at least
  // the sum of their busy times. With the small tiles' second slots the next load runs while the
  // vector engine works, so the run is shorter than that sum.
  EXPECT_GE(serial.total.count(), engineAndDmaBusy(serial));
  EXPECT_LT(overlapped.total.count(), engineAndDmaBusy(overlapped));
  EXPECT_LT(overlapped.total.count(), serial.total.count());
}

/// Two [128, 8192] fp32 tiles declared at one line stay live while three [128, 16896] fp32 tiles
/// are used: 64 + 198 KiB of trn2's 224. Both are doubled on chip (so they are not reloaded from
/// x) and must go to HBM scratch and back; returns {(2 x0 + 2 x0) + 2 x1, y + z}.
KernelDef twoSpillsOfOneLine() {
  return makeKernel("spill_two", [](Kernel& k, Tensor x, Tensor y, Tensor z) {
    Tensor kept = k.output("kept", {128, 8192}, DType::kFp32);
    Tensor sum = k.output("sum", y.shape(), DType::kFp32);
    std::vector<Tensor> held;
    for (std::int64_t i = 0; i < 2; ++i) {
      held.push_back(k.sbuf({128, 8192}, DType::kFp32, "x_tile"));
      nisa::dmaCopy(held.back(), x(ds(i * 128, 128), all));
      nisa::tensorTensor(held.back(), held.back(), held.back(), AluOp::kAdd);
    }
    Tensor yt = k.sbuf({128, 16896}, DType::kFp32, "y_tile");
    Tensor zt = k.sbuf({128, 16896}, DType::kFp32, "z_tile");
    Tensor st = k.sbuf({128, 16896}, DType::kFp32, "sum_tile");
    nisa::dmaCopy(yt, y);
    nisa::dmaCopy(zt, z);
    // Cleared first, so that the sum is not computed in place over y (the allocator's in-place
    // rule takes only a result first written by an element-wise instruction).
    nisa::memset(st, 0.0f);
    nisa::tensorTensor(st, yt, zt, AluOp::kAdd);
    nisa::dmaCopy(sum, st);
    Tensor kt = k.sbuf({128, 8192}, DType::kFp32, "kept_tile");
    nisa::tensorTensor(kt, held[0], held[0], AluOp::kAdd);
    nisa::tensorTensor(kt, kt, held[1], AluOp::kAdd);
    nisa::dmaCopy(kept, kt);
    return std::vector<Tensor>{kept, sum};
  });
}

TEST(AllocationDepth, TwoTilesOfOneLineSpillToDistinctScratchTensors) {
  const std::vector<TensorSpec> specs = {{"x", {256, 8192}, DType::kFp32},
                                         {"y", {128, 16896}, DType::kFp32},
                                         {"z", {128, 16896}, DType::kFp32}};
  auto compiled = compile(twoSpillsOfOneLine(), specs, limits());
  ASSERT_TRUE(compiled.ok()) << compiled.status().toString();
  EXPECT_EQ(compiled->summary.spills, 2);
  std::set<std::string> hbmNames;
  for (const isa::TensorDecl& tensor : compiled->program.tensors) {
    EXPECT_TRUE(hbmNames.insert(tensor.name).second) << "two program tensors named " << tensor.name;
  }
  EXPECT_EQ(hbmNames.count("x_tile_spilled"), 1u);
  EXPECT_EQ(hbmNames.count("x_tile_spilled2"), 1u);

  const std::vector<float> x = randomValues(256 * 8192, 1);
  const std::vector<float> y = randomValues(128 * 16896, 2);
  const std::vector<float> z = randomValues(128 * 16896, 3);
  const auto result =
      run(*compiled,
          {runtime::floatArray({256, 8192}, x), runtime::floatArray({128, 16896}, y),
           runtime::floatArray({128, 16896}, z)},
          core::RunMode::kFunctionalTiming);
  ASSERT_EQ(result.outputs.size(), 2u);
  const std::vector<float> kept = runtime::floatValues(result.outputs[0]);
  const std::vector<float> sum = runtime::floatValues(result.outputs[1]);
  for (std::size_t i = 0; i < kept.size(); ++i) {
    const float x0 = x[i] + x[i];
    const float x1 = x[i + 128 * 8192] + x[i + 128 * 8192];
    ASSERT_EQ(kept[i], (x0 + x0) + x1) << i;
  }
  for (std::size_t i = 0; i < sum.size(); ++i) {
    ASSERT_EQ(sum[i], y[i] + z[i]) << i;
  }
}

/// result[128, 512] = sum over 8 K steps of lhsT_k^T @ rhs_k, each K step's two tiles loaded in
/// the loop (the NKI matmul tutorial's tiled step, one output tile).
KernelDef kStepMatmulKernel() {
  return makeKernel("k_steps", [](Kernel& k, Tensor lhsT, Tensor rhs) {
    Tensor out = k.output("out", {128, 512}, DType::kFp32);
    Tensor psum = k.psum({128, 512}, DType::kFp32, "acc");
    for (std::int64_t s = 0; s < 8; ++s) {
      Tensor lhsTile = k.sbuf({128, 128}, DType::kBf16, "lhsT_tile");
      nisa::dmaCopy(lhsTile, lhsT(ds(s * 128, 128), all));
      Tensor rhsTile = k.sbuf({128, 512}, DType::kBf16, "rhs_tile");
      nisa::dmaCopy(rhsTile, rhs(ds(s * 128, 128), all));
      nisa::ncMatmul(psum, lhsTile, rhsTile, /*accumulate=*/s > 0);
    }
    Tensor res = k.sbuf({128, 512}, DType::kFp32, "res");
    nisa::tensorCopy(res, psum);
    nisa::dmaCopy(out, res);
    return out;
  });
}

TEST(AllocationDepth, TilesTheTensorEngineReadsOneAtATimeGetAThirdSlot) {
  // Each K step's loads pay the DMA's fixed cost (~1.3 us) against a 512-column matmul
  // (~0.2 us): with two slots the load into the slot one matmul frees would wait for the next
  // matmul too. So the two rings get three slots; single buffering keeps one.
  const std::vector<TensorSpec> specs = {{"lhsT", {1024, 128}, DType::kBf16},
                                         {"rhs", {1024, 512}, DType::kBf16}};
  auto compiled = compile(kStepMatmulKernel(), specs, limits());
  ASSERT_TRUE(compiled.ok()) << compiled.status().toString();
  auto offsets = offsetsByName(*compiled);
  EXPECT_EQ(offsets["lhsT_tile"].size(), 3u);
  EXPECT_EQ(offsets["rhs_tile"].size(), 3u);
  CompileOptions single;
  single.bufs = 1;
  auto singleCompiled = compile(kStepMatmulKernel(), specs, limits(), single);
  ASSERT_TRUE(singleCompiled.ok()) << singleCompiled.status().toString();
  offsets = offsetsByName(*singleCompiled);
  EXPECT_EQ(offsets["lhsT_tile"].size(), 1u);
  EXPECT_EQ(offsets["rhs_tile"].size(), 1u);

  // Small integers: the bf16 inputs and the fp32 sums are exact.
  std::vector<float> a(1024 * 128);
  std::vector<float> b(1024 * 512);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  }
  for (std::size_t i = 0; i < b.size(); ++i) {
    b[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
  }
  const auto result =
      run(*compiled, {runtime::floatArray({1024, 128}, a), runtime::floatArray({1024, 512}, b)},
          core::RunMode::kFunctionalTiming);
  ASSERT_EQ(result.outputs.size(), 1u);
  const std::vector<float> out = runtime::floatValues(result.outputs[0]);
  for (std::size_t m = 0; m < 128; ++m) {
    for (std::size_t n = 0; n < 512; ++n) {
      double want = 0;
      for (std::size_t kk = 0; kk < 1024; ++kk) {
        want += static_cast<double>(a[kk * 128 + m]) * b[kk * 512 + n];
      }
      ASSERT_EQ(out[m * 512 + n], want) << m << ", " << n;
    }
  }
}

}  // namespace
}  // namespace trn::kernel
