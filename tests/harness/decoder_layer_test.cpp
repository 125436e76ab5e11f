// Tests of the decoder-layer driver: at small shapes every kernel of the layer passes its float64
// check, the layer's time and FLOPs are the sums over its kernels (FLOPs derived by hand), and
// timing-only mode gives the same simulated times as functional+timing.
#include "trn/harness/decoder_layer.h"

#include <gtest/gtest.h>

#include "../kernel/kernel_test_util.h"

namespace trn::harness {
namespace {

using kernel::testutil::trn2;

TEST(DecoderLayer, EveryKernelPassesAndTheTotalIsTheSumOfTheSteps) {
  CheckOptions options;
  auto run = runDecoderLayer(kernel::testutil::trn2Session(), DecoderLayerConfig::small(), options);
  ASSERT_TRUE(run.ok()) << run.status().toString();
  ASSERT_EQ(run->steps.size(), 8u);
  EXPECT_TRUE(run->pass);
  Picoseconds sum;
  double flops = 0;
  for (const LayerStep& step : run->steps) {
    SCOPED_TRACE(step.name);
    EXPECT_TRUE(step.result.pass);
    EXPECT_FALSE(step.result.comparisons.empty());
    EXPECT_GT(step.result.report.total.count(), 0);
    sum += step.result.report.total;
    flops += step.result.usefulFlops;
  }
  EXPECT_EQ(run->total, sum);
  EXPECT_DOUBLE_EQ(run->usefulFlops, flops);
  // Matrix products of the layer: QKV 2*S*H*(Hq+2Hkv)*D, attention 4*Hq*D*S*(S+1)/2 (causal),
  // output projection 2*S*Hq*D*H, MLP 3 * 2*S*H*F.
  const DecoderLayerConfig c = DecoderLayerConfig::small();
  const double s = static_cast<double>(c.tokens);
  const double h = static_cast<double>(c.hidden);
  const double d = static_cast<double>(c.headDim);
  const double expected = 2 * s * h * static_cast<double>(c.heads + 2 * c.kvHeads) * d +
                          4 * static_cast<double>(c.heads) * d * s * (s + 1) / 2 +
                          2 * s * static_cast<double>(c.heads) * d * h +
                          3 * 2 * s * h * static_cast<double>(c.intermediate);
  EXPECT_DOUBLE_EQ(run->usefulFlops, expected);
  EXPECT_EQ(run->output.shape, (std::vector<std::int64_t>{c.tokens, c.hidden}));
}

TEST(DecoderLayer, TimingOnlyGivesTheSameTimesWithoutData) {
  CheckOptions options;
  auto full = runDecoderLayer(kernel::testutil::trn2Session(), DecoderLayerConfig::small(), options);
  options.run.mode = core::RunMode::kTimingOnly;
  auto timed = runDecoderLayer(kernel::testutil::trn2Session(), DecoderLayerConfig::small(), options);
  ASSERT_TRUE(full.ok()) << full.status().toString();
  ASSERT_TRUE(timed.ok()) << timed.status().toString();
  ASSERT_EQ(timed->steps.size(), full->steps.size());
  for (std::size_t i = 0; i < full->steps.size(); ++i) {
    EXPECT_EQ(timed->steps[i].result.report.total, full->steps[i].result.report.total)
        << full->steps[i].name;
    EXPECT_TRUE(timed->steps[i].result.comparisons.empty());
  }
  EXPECT_TRUE(timed->output.values.empty());
}

TEST(DecoderLayer, BadConfigIsRejected) {
  DecoderLayerConfig c = DecoderLayerConfig::small();
  c.kvHeads = 3;
  CheckOptions options;
  auto run = runDecoderLayer(kernel::testutil::trn2Session(), c, options);
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("multiple of the kv heads"), std::string::npos);
}

}  // namespace
}  // namespace trn::harness
