// The verdict on real runs of small programs, one per bound, on trn2 in timing-only mode: the
// class and subject, and the figures that decide them, derived by hand from the program.
#include "trn/profile/verdict.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "trn/isa/program_text.h"
#include "trn/profile/critical_path.h"
#include "trn/runtime/session.h"

namespace trn::profile {
namespace {

struct Analysed {
  core::RunStats stats;
  CriticalPath path;
  Verdict verdict;
};

Analysed analyse(const std::string& text) {
  Result<isa::Program> program = isa::parseProgramText(text, "verdict_test.tasm");
  TRN_CHECK(program.ok()) << program.status().toString();
  Result<runtime::Session> session = runtime::Session::open("trn2");
  TRN_CHECK(session.ok()) << session.status().toString();
  runtime::RunOptions options;
  options.mode = core::RunMode::kTimingOnly;
  options.record = true;
  const auto shared = std::make_shared<const isa::Program>(std::move(program).value());
  Result<runtime::RunResult> run = session->run(shared, {}, {}, options);
  TRN_CHECK(run.ok()) << run.status().toString();
  Analysed a;
  a.stats = run->cores.front();
  Result<CriticalPath> path = findCriticalPath(*shared, a.stats);
  TRN_CHECK(path.ok()) << path.status().toString();
  a.path = std::move(path).value();
  const Report report = makeReport(a.stats, session->chip());
  a.verdict = decideVerdict(verdictFigures(report, a.stats, session->chip(), &a.path));
  return a;
}

/// The path's segments tile [0, total] without gaps or overlaps.
void expectTiles(const CriticalPath& path, Picoseconds total) {
  ASSERT_FALSE(path.segments.empty());
  EXPECT_EQ(path.length, total);
  EXPECT_EQ(path.segments.front().start, Picoseconds(0));
  EXPECT_EQ(path.segments.back().end, total);
  for (std::size_t i = 1; i < path.segments.size(); ++i) {
    EXPECT_EQ(path.segments[i].start, path.segments[i - 1].end) << "segment " << i;
  }
  EXPECT_EQ(path.totalCompute() + path.completion + path.semaphore + path.dmaIssue +
                path.dmaData + path.dispatch,
            total);
}

// 200 independent bf16 matmuls (128 rows, 512 moving columns): TensorE never rests after the
// throttle ramp, so it is busy nearly all the run and the path is PE compute.
TEST(Verdict, MatmulStreamIsComputeBoundOnPe) {
  std::string text =
      ".tensor x input bf16 [128, 128]\n";
  for (int i = 0; i < 200; ++i) {
    text +=
        "pe: nc_matmul dst=psum[0:128]:fp32[[1,512]] stationary=sbuf[0:128]:bf16[[1,128]] "
        "moving=sbuf[0:128]+256:bf16[[1,512]]\n";
  }
  const Analysed a = analyse(text);
  expectTiles(a.path, a.stats.total);
  EXPECT_EQ(a.verdict.bound, Bound::kCompute) << a.verdict.headline;
  EXPECT_EQ(a.verdict.subject, "pe");
  EXPECT_GT(a.verdict.figures.busy[0], 0.95);
  // Program order only: no semaphore hand-off or transfer on the path.
  EXPECT_EQ(a.path.handoffs, 0);
  EXPECT_EQ(a.path.transfers, 0);
  EXPECT_GT(a.verdict.figures.pathCompute[0], 0.95);
}

// 32 loads of 128 x 32 KiB over 4 queues keep the 16 DMA engines at 98.9 % (docs/timing.md);
// 32 KiB rows cost almost nothing in descriptors.
TEST(Verdict, LargeCopiesAreBandwidthBoundOnTheDmaEngines) {
  std::string text = ".tensor x input bf16 [128, 16384]\n";
  for (int i = 0; i < 32; ++i) {
    text += fmt::format(
        "sp: dma_copy dst=sbuf[0:128]+{}:bf16[[1,16384]] src=hbm:x:bf16[[16384,128],[1,16384]] "
        "queue={}\n",
        (i % 4) * 32768, i % 4);
  }
  const Analysed a = analyse(text);
  expectTiles(a.path, a.stats.total);
  EXPECT_EQ(a.verdict.bound, Bound::kBandwidth) << a.verdict.headline;
  EXPECT_EQ(a.verdict.subject, "DMA engines");
  EXPECT_GT(a.verdict.figures.dmaLoad, 0.95);
  EXPECT_DOUBLE_EQ(a.verdict.figures.averageTransferBytes, 128.0 * 32768);
  EXPECT_DOUBLE_EQ(a.verdict.figures.averageDescriptorBytes, 32768.0);
}

// 20 loads of 128 x 64 B, each issued only after the previous one landed: one transfer in
// flight, and each pays the 1.3 us fixed cost for 8 KiB of data.
TEST(Verdict, SerialSmallLoadsAreLatencyBoundOnDma) {
  constexpr int kLoads = 20;
  std::string text = ".tensor x input bf16 [128, 32]\n";
  for (int i = 0; i < kLoads; ++i) {
    text += fmt::format(
        "sp: dma_copy dst=sbuf[0:128]:bf16[[1,32]] src=hbm:x:bf16[[32,128],[1,32]] queue=0{} "
        "signal(s0+=1)\n",
        i == 0 ? "" : fmt::format(" wait(s0>={})", i));
  }
  const Analysed a = analyse(text);
  expectTiles(a.path, a.stats.total);
  EXPECT_EQ(a.verdict.bound, Bound::kLatency) << a.verdict.headline;
  EXPECT_EQ(a.verdict.subject, "DMA latency");
  // Every load is on the path, each released by the one before it.
  EXPECT_EQ(a.path.transfers, kLoads);
  EXPECT_EQ(a.path.handoffs, kLoads - 1);
  EXPECT_GE(a.verdict.figures.averageIssue, Picoseconds(1'300'000));
  EXPECT_LT(a.verdict.figures.outstanding, 1.0);
  EXPECT_DOUBLE_EQ(a.verdict.figures.averageDescriptorBytes, 64.0);
  // Little's law with 8 KiB transfers, 1.3 us fixed cost and 368 GB/s: each is outstanding
  // 1.3 us + 22.3 ns, so 0.75 x 368e9 x 1.3223e-6 / 8192 = 44.55 must be in flight.
  EXPECT_NEAR(a.verdict.figures.inFlightNeeded, 0.75 * (368e9 * 1.3e-6 + 8192) / 8192, 1e-9);
  EXPECT_NE(a.verdict.headline.find("too few transfers in flight"), std::string::npos);
  EXPECT_LT(a.verdict.figures.dmaLoad, 0.1);
  EXPECT_GT(a.verdict.figures.pathDmaIssue, 0.8);
}

// ScalarE and VectorE take turns on 2048-element rows, each waiting for the other: the path
// alternates between them, neither is busy much more than half the run.
TEST(Verdict, PingPongChainIsDependencyBound) {
  constexpr int kRounds = 10;
  std::string text = ".tensor x input fp32 [128, 4]\n";
  for (int k = 0; k < kRounds; ++k) {
    text += fmt::format(
        "act: activation dst=sbuf[0:128]:fp32[[1,2048]] data=sbuf[0:128]+16384:fp32[[1,2048]] "
        "op=gelu{} signal(s0+=1)\n",
        k == 0 ? "" : fmt::format(" wait(s1>={})", k));
    text += fmt::format(
        "dve: tensor_copy dst=sbuf[0:128]+16384:fp32[[1,2048]] src=sbuf[0:128]:fp32[[1,2048]] "
        "wait(s0>={}) signal(s1+=1)\n",
        k + 1);
  }
  const Analysed a = analyse(text);
  expectTiles(a.path, a.stats.total);
  EXPECT_EQ(a.verdict.bound, Bound::kDependency) << a.verdict.headline;
  // Every instruction but the first is released by the other engine.
  EXPECT_EQ(a.path.handoffs, 2 * kRounds - 1);
  EXPECT_LT(a.verdict.figures.busy[1], kSaturated);
  EXPECT_LT(a.verdict.figures.busy[2], kSaturated);
  EXPECT_GT(a.verdict.figures.pathCompute[1], 0.3);
  EXPECT_GT(a.verdict.figures.pathCompute[2], 0.3);
}

// The rules themselves, on figures written by hand.
TEST(Verdict, SaturationComesBeforeThePath) {
  VerdictFigures f;
  f.total = Picoseconds(1'000'000);
  f.busy[2] = 0.8;
  f.dmaLoad = 0.9;
  f.hasPath = true;
  f.pathSemaphore = 0.9;
  EXPECT_EQ(decideVerdict(f).bound, Bound::kBandwidth);
  f.dmaLoad = 0.5;
  const Verdict v = decideVerdict(f);
  EXPECT_EQ(v.bound, Bound::kCompute);
  EXPECT_EQ(v.subject, "dve");
  f.busy[2] = 0.5;
  EXPECT_EQ(decideVerdict(f).bound, Bound::kLatency);
  EXPECT_EQ(decideVerdict(f).subject, "semaphore round trips");
}

// Unsaturated, with the path mostly DMA: bandwidth when data dominates and the engines are at
// least half loaded, latency otherwise; a path of compute spread over engines is a chain.
TEST(Verdict, ThePathDecidesWhenNothingIsSaturated) {
  VerdictFigures f;
  f.total = Picoseconds(1'000'000);
  f.hasPath = true;
  f.busy = {0.2, 0.3, 0.0, 0.0, 0.0};
  f.pathCompute = {0.2, 0.1, 0.0, 0.0, 0.0};
  f.pathDmaIssue = 0.1;
  f.pathDmaData = 0.5;
  f.dmaLoad = 0.6;
  EXPECT_EQ(decideVerdict(f).bound, Bound::kBandwidth);
  EXPECT_NE(decideVerdict(f).headline.find("50.0 % of the critical path is data moving"),
            std::string::npos);
  f.dmaLoad = 0.3;
  EXPECT_EQ(decideVerdict(f).bound, Bound::kLatency);
  EXPECT_EQ(decideVerdict(f).subject, "DMA latency");
  f.pathDmaData = 0.1;
  f.pathCompute = {0.35, 0.4, 0.0, 0.0, 0.0};
  EXPECT_EQ(decideVerdict(f).bound, Bound::kDependency);
  f.pathCompute = {0.7, 0.1, 0.0, 0.0, 0.0};
  EXPECT_EQ(decideVerdict(f).bound, Bound::kCompute);
  EXPECT_EQ(decideVerdict(f).subject, "pe");
}

// Each threshold, just below and just above: kSaturated for an engine and for the DMA load,
// kHalfLoaded between bandwidth and latency on a path of data moving, and the transfers in
// flight Little's law asks for.
TEST(Verdict, EachThresholdDecidesAtItsValue) {
  VerdictFigures f;
  f.total = Picoseconds(1'000'000);
  f.hasPath = true;
  f.pathDmaIssue = 0.2;
  f.pathDmaData = 0.6;
  f.pathCompute = {0.2, 0.0, 0.0, 0.0, 0.0};
  f.busy[0] = kSaturated - 0.01;
  EXPECT_NE(decideVerdict(f).bound, Bound::kCompute);
  f.busy[0] = kSaturated;
  EXPECT_EQ(decideVerdict(f).bound, Bound::kCompute);
  f.busy[0] = 0.2;
  f.dmaLoad = kSaturated;
  EXPECT_EQ(decideVerdict(f).bound, Bound::kBandwidth);
  EXPECT_EQ(decideVerdict(f).headline.find("critical path"), std::string::npos);
  f.dmaLoad = kHalfLoaded;
  EXPECT_EQ(decideVerdict(f).bound, Bound::kBandwidth);
  EXPECT_NE(decideVerdict(f).headline.find("critical path"), std::string::npos);
  f.dmaLoad = kHalfLoaded - 0.01;
  EXPECT_EQ(decideVerdict(f).bound, Bound::kLatency);
  f.inFlightNeeded = 12.0;
  f.outstanding = 11.9;
  EXPECT_NE(decideVerdict(f).headline.find("too few transfers in flight (11.90 of the 12.0"),
            std::string::npos)
      << decideVerdict(f).headline;
  f.outstanding = 12.0;
  EXPECT_EQ(decideVerdict(f).headline.find("too few transfers"), std::string::npos);
}

TEST(Verdict, UntimedRunHasNoVerdict) {
  const Verdict v = decideVerdict(VerdictFigures{});
  EXPECT_EQ(v.bound, Bound::kNone);
  EXPECT_FALSE(v.headline.empty());
}

}  // namespace
}  // namespace trn::profile
