// Tests of selective_scan: single-tile, ragged (channels and sequence not multiples of the
// tiles, several sequence tiles carrying the state), bf16 inputs and a large state count (short
// sequence tiles) in functional+timing mode with race detection, every element within a
// rounding-error bound of the fp32 recurrence derived below; clear errors for bad shapes; and in
// timing-only mode the simulated time of a long sequence is the GpSimd work the cost model
// gives (the engine the kernel is balanced to be bound by) plus its start-up and drain.
#include "trn/kernels/selective_scan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "../kernel/kernel_test_util.h"
#include "registered_kernel_util.h"
#include "trn/harness/check.h"
#include "trn/kernels/registry.h"

namespace trn::kernels {
namespace {

using kernel::TensorSpec;
using kernel::testutil::trn2;

const KernelEntry& entry() { return testutil::entryNamed("selective_scan"); }

std::vector<TensorSpec> specs(std::int64_t channels, std::int64_t length, std::int64_t states,
                              DType dtype = DType::kFp32) {
  return {{"delta", {channels, length}, dtype},
          {"u", {channels, length}, dtype},
          {"A", {channels, states}, dtype},
          {"B", {states, length}, dtype},
          {"C", {states, length}, dtype}};
}

/// Per element of y, a bound on |kernel - exact| for the kernel's fp32 arithmetic (u = 2^-24):
///  - a = exp(fl(delta A)) rounded once: relative error (1 + |delta A|) u;
///  - b = fl(fl(delta u) B): relative error 2u;
///  - the scan's h = fl(fl(a h) + b): with g the recurrence on magnitudes (g_t = a g_{t-1} +
///    |b_t| >= |h_t|), the error E_t <= a (1 + 4u) E_{t-1} + 1.01 u ((3 + |delta A|) a g_{t-1}
///    + 3 |b_t|) (1.01 covers the second-order terms);
///  - y = the fp32 sum over n of fl(C h): |err| <= sum |C| E (1 + N u) + 1.01 N u sum |C| g.
HostTensor errorBound(std::span<const HostTensor> in) {
  const HostTensor& delta = in[0];
  const HostTensor& uIn = in[1];
  const HostTensor& a = in[2];
  const HostTensor& b = in[3];
  const HostTensor& c = in[4];
  const std::int64_t channels = delta.dim(0);
  const std::int64_t length = delta.dim(1);
  const std::int64_t states = a.dim(1);
  const double u = std::ldexp(1.0, -24);
  const double n = static_cast<double>(states);
  HostTensor bound = HostTensor::zeros({channels, length});
  for (std::int64_t ch = 0; ch < channels; ++ch) {
    for (std::int64_t s = 0; s < states; ++s) {
      double g = 0.0;
      double e = 0.0;
      for (std::int64_t t = 0; t < length; ++t) {
        const double x = std::abs(delta[ch * length + t] * a[ch * states + s]);
        const double decay = std::exp(-x);
        const double input =
            std::abs(delta[ch * length + t] * b[s * length + t] * uIn[ch * length + t]);
        e = decay * (1 + 4 * u) * e + 1.01 * u * ((3 + x) * decay * g + 3 * input);
        g = decay * g + input;
        const double cw = std::abs(c[s * length + t]);
        bound[ch * length + t] += cw * e * (1 + n * u) + 1.01 * n * u * cw * g;
      }
    }
  }
  return bound;
}

/// Runs the kernel at `s`: it must pass the registry tolerance and stay within errorBound.
void checkShape(const std::vector<TensorSpec>& s, std::uint64_t seed) {
  SCOPED_TRACE("C=" + std::to_string(s[0].shape[0]) + " L=" + std::to_string(s[0].shape[1]) +
               " N=" + std::to_string(s[2].shape[1]));
  harness::CheckOptions options;
  options.run.seed = seed;
  auto result = harness::checkKernel(kernel::testutil::trn2Session(), entry(), s, options);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  ASSERT_EQ(result->comparisons.size(), 1u);
  EXPECT_TRUE(result->pass) << "max abs error " << result->comparisons[0].maxAbsError;
  const HostTensor exact = selectiveScanReference(result->inputs)[0];
  const HostTensor bound = errorBound(result->inputs);
  const HostTensor& out = result->outputs[0];
  for (std::int64_t i = 0; i < exact.size(); ++i) {
    ASSERT_LE(std::abs(out[i] - exact[i]), bound[i])
        << "y[" << i / exact.dim(1) << ", " << i % exact.dim(1) << "] = " << out[i]
        << ", reference " << exact[i];
  }
}

TEST(SelectiveScanKernel, OneTileMatchesReference) { checkShape(specs(128, 256, 16), 1); }

TEST(SelectiveScanKernel, RaggedTilesCarryTheState) {
  // 200 channels: a full and a 72-channel tile; L = 700: sequence tiles 256, 256, 188.
  checkShape(specs(200, 700, 16), 2);
  // One channel tile of 5, three sequence tiles: the state carries tile to tile on one item.
  checkShape(specs(5, 600, 4), 3);
}

TEST(SelectiveScanKernel, Bf16InputsMatchReference) {
  checkShape(specs(130, 300, 8, DType::kBf16), 4);
}

TEST(SelectiveScanKernel, ManyStatesShortenTheSequenceTile) {
  // N = 64 states: the sequence tile shrinks to 76 steps so the tiles fit SBUF.
  checkShape(specs(64, 200, 64), 5);
}

/// The compile error for `s`, or "" if it compiled.
std::string compileError(const std::vector<TensorSpec>& s) {
  auto compiled = kernel::compile(entry().def, s, kernel::testutil::limits());
  return compiled.ok() ? std::string() : compiled.status().toString();
}

TEST(SelectiveScanKernel, BadShapesGiveClearErrors) {
  struct Bad {
    std::vector<TensorSpec> specs;
    std::string message;
  };
  std::vector<Bad> cases;
  {
    std::vector<TensorSpec> s = specs(128, 256, 16);
    s[0].shape = {128, 256, 1};
    cases.push_back({s, "selective_scan takes 2-D delta [C, L]"});
  }
  {
    std::vector<TensorSpec> s = specs(128, 256, 16);
    s[1].shape = {128, 255};
    cases.push_back({s, "u is [128, 255] but delta is [128, 256]"});
  }
  {
    std::vector<TensorSpec> s = specs(128, 256, 16);
    s[2].shape = {100, 16};
    cases.push_back({s, "A is [100, 16] but there are 128 channels"});
  }
  {
    std::vector<TensorSpec> s = specs(128, 256, 16);
    s[4].shape = {16, 200};
    cases.push_back({s, "C is [16, 200] but must be [N, L] = [16, 256]"});
  }
  {
    std::vector<TensorSpec> s = specs(128, 256, 16);
    s[3].dtype = DType::kInt32;
    cases.push_back({s, "inputs must be fp32 or bf16"});
  }
  for (const Bad& bad : cases) {
    const std::string error = compileError(bad.specs);
    EXPECT_NE(error.find(bad.message), std::string::npos) << error;
    EXPECT_NE(error.find("selective_scan.cpp:"), std::string::npos) << error;
  }
}

TEST(SelectiveScanKernel, RegisteredDefaultRunsRaceFree) {
  harness::CheckOptions options;
  options.run.mode = core::RunMode::kTimingOnly;
  auto result = harness::checkKernel(kernel::testutil::trn2Session(), entry(), entry().defaultInputs, options);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_GT(result->report.total.count(), 0);
}

// A long sequence, timing-only: C = 256 channels (two tiles), L = 4096 (16 sequence tiles of 256),
// N = 16, so 32 items. The kernel is balanced to be bound by GpSimd, whose work per item is
// fixed by the cost model (trn2.yaml, N7 formulas): delta*u max(64, 2 Ls) = 512 cycles and two
// tensor_tensor over [128, N, Ls] of max(64, 2 N Ls) = 8192 cycles each, 16896 cycles at 1.2 GHz
// = 14.08 us; GpSimd also triggers the prefetch of the next B and C for 15 sequence tiles, 64
// cycles (MIN_II) per DMA trigger: 452.16 us in all. The vector engine's share is less (scan
// 2 N (Ls + 1) = 8224 and reduce N Ls = 4096 cycles, plus two 64-cycle state copies, at 0.96 GHz
// = 12.97 us per item). Around the GpSimd work come a start-up and a drain: GpSimd's first
// multiply needs the first B broadcast, which loads together with the first C (2 x 128 x 16 x
// 256 x 4 B = 4 MiB at the 368 GB/s DMA peak, 1 KiB descriptors at 80 %: 14.2 us), and after
// GpSimd's last multiply come the vector engine's last reduction (4.27 us) and store. We allow
// 3 % over that sum (first loads of delta, u and A, DMA fixed costs, semaphore latencies).
TEST(SelectiveScanKernel, LongSequenceIsBoundByGpSimd) {
  harness::CheckOptions options;
  options.run.mode = core::RunMode::kTimingOnly;
  auto result = harness::checkKernel(kernel::testutil::trn2Session(), entry(), specs(256, 4096, 16), options);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  const profile::Report& report = result->report;
  const auto& pool = report.engines[static_cast<std::size_t>(isa::Engine::kPool)];
  const auto& dve = report.engines[static_cast<std::size_t>(isa::Engine::kDve)];
  const double poolSeconds = (32 * (512 + 2 * 8192) + 15 * 2 * 64) / 1.2e9;
  const double poolBusy = static_cast<double>(pool.busy.count()) * 1e-12;
  EXPECT_NEAR(poolBusy, poolSeconds, 1e-3 * poolSeconds);
  EXPECT_LT(dve.busy.count(), pool.busy.count());
  EXPECT_EQ(report.criticalEngine, "pool");
  const double startup = 2.0 * 128 * 16 * 256 * 4 / (368e9 * 1024.0 / (1024 + 256));
  const double drain = 16 * 256 / 0.96e9;
  const double total = static_cast<double>(report.total.count()) * 1e-12;
  EXPECT_GE(total, poolSeconds);
  EXPECT_LE(total, 1.03 * (poolSeconds + startup + drain));
}

}  // namespace
}  // namespace trn::kernels
