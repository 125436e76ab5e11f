// The collective report: its critical path, verdict and page data on small fabrics built in
// code (tests/fabric/fabric_fixture.h: 100 GB/s links, 1 us per hop, 10 TB/s HBM), against
// times and loads derived by hand.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "../fabric/fabric_fixture.h"
#include "trn/profile/collective_page.h"
#include "trn/profile/collective_path.h"
#include "trn/profile/collective_verdict.h"
#include "trn/profile/html_report.h"

namespace trn::profile {
namespace {

using fabric::Plan;
using fabric::PlanTiming;
using fabric::Topology;
using fabric::testing::grid;
using fabric::testing::kMicrosecond;
using fabric::testing::ring;
using fabric::testing::topologyOf;

fabric::ResourceId resourceNamed(const Topology& t, const std::string& name) {
  for (fabric::ResourceId r = 0; r < t.resourceCount(); ++r) {
    if (t.resourceName(r) == name) {
      return r;
    }
  }
  ADD_FAILURE() << "no resource " << name;
  return 0;
}

PlanTiming timed(const Plan& plan) {
  Result<PlanTiming> timing = fabric::simulate(plan);
  EXPECT_TRUE(timing.ok()) << timing.status().toString();
  return std::move(*timing);
}

CollectiveFigures figuresOf(const Plan& plan, const PlanTiming& timing) {
  Result<CollectiveFigures> f = collectiveFigures(plan, timing);
  EXPECT_TRUE(f.ok()) << f.status().toString();
  return std::move(*f);
}

/// Transfers of `bytes` from chip i to chip i + 1, each after the previous one.
Plan chain(const Topology& t, int hops, double bytes) {
  Plan plan(t, 1);
  std::vector<fabric::OpId> last;
  for (int i = 0; i < hops; ++i) {
    last = {plan.transfer(i, i + 1, bytes, std::span<const fabric::OpId>(last))};
  }
  return plan;
}

// 1 MB over one 100 GB/s link: 10 us streaming then 1 us of hop latency; the link carried
// 1 MB / (0.1 B/ps x 11 us) = 90.9 % of what it could, over kSaturated.
TEST(CollectiveVerdict, OneSaturatedLinkIsBandwidthBound) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  const Plan plan = chain(t, 1, 1e6);
  const PlanTiming timing = timed(plan);
  const CollectiveFigures f = figuresOf(plan, timing);
  EXPECT_EQ(f.makespan, 11 * kMicrosecond);
  EXPECT_EQ(f.path.data, 10 * kMicrosecond);
  EXPECT_EQ(f.path.latency, 1 * kMicrosecond);
  EXPECT_EQ(f.path.messages, 1);
  EXPECT_EQ(f.path.hops, 1);
  ASSERT_EQ(f.path.segments.size(), 2U);
  EXPECT_EQ(f.path.segments[0].bottleneck, resourceNamed(t, "chip 0 x+"));
  ASSERT_EQ(f.classes.size(), 2U);  // HBM, then the link class ("link"), in resource order
  const ResourceClassLoad& link = f.classes[0].link ? f.classes[0] : f.classes[1];
  EXPECT_EQ(link.name, "link");
  EXPECT_NEAR(link.busiestLoad, 1e6 / (0.1 * 11e6), 1e-9);
  EXPECT_EQ(link.busiestName, "chip 0 x+");
  const Verdict v = decideCollectiveVerdict(f);
  EXPECT_EQ(v.bound, Bound::kBandwidth);
  EXPECT_EQ(v.subject, "link links");
  EXPECT_NE(v.headline.find("90.9 %"), std::string::npos) << v.headline;
  EXPECT_EQ(v.headline.find("critical path"), std::string::npos) << v.headline;
}

// The same bytes over two links one after the other: each carried 1 MB in 22 us (45.5 %, under
// kSaturated), but 20 of the path's 22 us stream over them: bandwidth-bound by the path.
TEST(CollectiveVerdict, StreamingPathBelowSaturationIsBandwidthBound) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  const Plan plan = chain(t, 2, 1e6);
  const CollectiveFigures f = figuresOf(plan, timed(plan));
  EXPECT_EQ(f.makespan, 22 * kMicrosecond);
  EXPECT_EQ(f.path.data, 20 * kMicrosecond);
  EXPECT_EQ(f.path.ops.size(), 2U);
  const Verdict v = decideCollectiveVerdict(f);
  EXPECT_EQ(v.bound, Bound::kBandwidth);
  EXPECT_NE(v.headline.find("45.5 %"), std::string::npos) << v.headline;
  EXPECT_NE(v.headline.find("90.9 % of the critical path"), std::string::npos) << v.headline;
}

// 1 KB per hop over 3 hops: 10 ns streaming and 1 us of latency each, so hop latency is
// 3 us of the 3.03 us path.
TEST(CollectiveVerdict, SmallMessagesAreLatencyBoundByHops) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  const Plan plan = chain(t, 3, 1000);
  const CollectiveFigures f = figuresOf(plan, timed(plan));
  EXPECT_EQ(f.makespan, 3 * kMicrosecond + 30'000);
  EXPECT_EQ(f.path.latency, 3 * kMicrosecond);
  EXPECT_EQ(f.path.data, 30'000);
  EXPECT_EQ(f.path.hops, 3);
  EXPECT_EQ(f.hopLatency, kMicrosecond);
  const Verdict v = decideCollectiveVerdict(f);
  EXPECT_EQ(v.bound, Bound::kLatency);
  EXPECT_EQ(v.subject, "per-hop latency");
  EXPECT_NE(v.headline.find("3 hops, 1.000 us each"), std::string::npos) << v.headline;
}

// A link class with 2 us per message and 1 us per hop: overheads outweigh the hops.
TEST(CollectiveVerdict, MessageOverheadsCanBound) {
  const spec::LinkSpec slow{"efa", BytesPerSecond(100'000'000'000), Picoseconds(kMicrosecond),
                            Picoseconds(2 * kMicrosecond)};
  const Topology t = topologyOf(grid({ring("node", 4, "efa")}, {slow}));
  const Plan plan = chain(t, 2, 1000);
  const CollectiveFigures f = figuresOf(plan, timed(plan));
  EXPECT_EQ(f.path.overhead, 4 * kMicrosecond);
  EXPECT_EQ(f.messageOverhead, 2 * kMicrosecond);
  EXPECT_EQ(f.makespan, 6 * kMicrosecond + 20'000);
  const Verdict v = decideCollectiveVerdict(f);
  EXPECT_EQ(v.bound, Bound::kLatency);
  EXPECT_EQ(v.subject, "per-message overheads");
}

// Chip 0 sends 1 MB to chip 1 and 1 MB to chip 2 (through 1) at once: they share 0 x+ at
// 0.05 B/ps each, so both stream for 20 us; the second then waits 2 hops. The path is the second
// message, set by the shared link rather than 1 x+, which it has alone.
TEST(CollectivePath, SharedLinkSetsTheRate) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  Plan plan(t, 1);
  plan.transfer(0, 1, 1e6, {});
  plan.transfer(0, 2, 1e6, {}, 1);
  const PlanTiming timing = timed(plan);
  const Result<CollectivePath> path = findCollectivePath(plan, timing);
  ASSERT_TRUE(path.ok()) << path.status().toString();
  EXPECT_EQ(path->length, 22 * kMicrosecond);
  ASSERT_EQ(path->ops, std::vector<fabric::OpId>{1});
  ASSERT_EQ(path->segments.size(), 2U);
  EXPECT_EQ(path->segments[0].cause, CollectiveCause::kData);
  EXPECT_EQ(path->segments[0].end, 20 * kMicrosecond);
  EXPECT_EQ(path->segments[0].bottleneck, resourceNamed(t, "chip 0 x+"));
  EXPECT_EQ(path->segments[1].cause, CollectiveCause::kLatency);
  EXPECT_EQ(path->hops, 2);
}

TEST(CollectivePath, RejectsATimingOfAnotherPlan) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  const Plan one = chain(t, 1, 1e6);
  const Plan two = chain(t, 2, 1e6);
  const Result<CollectivePath> path = findCollectivePath(two, timed(one));
  ASSERT_FALSE(path.ok());
  EXPECT_EQ(path.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(path.status().message().find("1 operations but the plan 2"), std::string::npos);
}

fabric::CollectiveResult resultOf(const Plan& plan, const PlanTiming& timing) {
  fabric::CollectiveResult result;
  result.algorithm = fabric::Algorithm::kMesh;
  result.picoseconds = timing.makespan;
  result.messages = plan.messages();
  result.candidates.push_back({fabric::Algorithm::kRing, std::nullopt, "not asked for", 0});
  result.candidates.push_back({fabric::Algorithm::kMesh, timing.makespan, "", plan.messages()});
  return result;
}

nlohmann::ordered_json pageOf(const Plan& plan, const PlanTiming& timing,
                              const CollectivePageOptions& options, PageSummary* summary) {
  fabric::CollectiveRequest request;
  request.op = fabric::CollectiveOp::kPermute;
  request.group = {0, 1, 2};
  request.bytes = 1'000'000;
  const fabric::CollectiveResult result = resultOf(plan, timing);
  CollectiveRun run{"test", &request, &result, &plan, &timing};
  Result<nlohmann::ordered_json> page = makeCollectivePageData(run, options, summary);
  EXPECT_TRUE(page.ok()) << page.status().toString();
  return std::move(*page);
}

// The two messages sharing 0 x+: on the page, 0 x+ has two lanes, each message sits on each
// resource it holds (2 HBMs + 1 link, 2 HBMs + 2 links: 7 slices), with its bytes, route and
// times; the link's load is 2 MB / (0.1 B/ps x 22 us).
TEST(CollectivePage, MessagesSitOnEveryResourceTheyHold) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  Plan plan(t, 1);
  plan.transfer(0, 1, 1e6, {});
  plan.transfer(0, 2, 1e6, {}, 1);
  const PlanTiming timing = timed(plan);
  PageSummary summary;
  const nlohmann::ordered_json page = pageOf(plan, timing, {}, &summary);
  EXPECT_EQ(page["kind"], "collective");
  EXPECT_EQ(summary.slices, 7U);
  EXPECT_EQ(summary.aggregated, 0U);
  EXPECT_EQ(page["slices"]["track"].size(), 7U);
  std::set<std::string> tracks;
  for (const auto& track : page["tracks"]) {
    tracks.insert(track["name"].get<std::string>());
  }
  EXPECT_EQ(tracks, (std::set<std::string>{"chip 0 \u00b7 x+", "chip 0 \u00b7 x+ #2",
                                           "chip 0 \u00b7 HBM", "chip 0 \u00b7 HBM #2",
                                           "chip 1 \u00b7 x+", "chip 1 \u00b7 HBM",
                                           "chip 2 \u00b7 HBM"}));
  ASSERT_EQ(page["ops"].size(), 2U);
  for (const auto& op : page["ops"]) {
    if (op[9] == 1) {
      EXPECT_EQ(op[0], "chip 0 -> chip 2");
      EXPECT_EQ(op[1].get<double>(), 1e6);
      EXPECT_EQ(op[4], "chip 0 x+, chip 1 x+");
      EXPECT_EQ(op[5].get<double>(), 0.0);
      EXPECT_EQ(op[6].get<double>(), 20'000.0);  // ns
      EXPECT_EQ(op[7].get<double>(), 22'000.0);
    }
  }
  const auto& rows = page["resources"]["rows"];
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0]["name"], "chip 0 x+");
  EXPECT_NEAR(rows[0]["load"].get<double>(), 2e6 / (0.1 * 22e6), 1e-4);
  EXPECT_NEAR(rows[0]["busy"].get<double>(), 20.0 / 22.0, 1e-4);
  // The load over time of the busiest link averages to its load.
  const auto& series = page["utilisation"]["series"][0];
  EXPECT_EQ(series["name"], "chip 0 x+");
  double sum = 0;
  for (const auto& v : series["load"]) {
    sum += v.get<double>();
  }
  EXPECT_NEAR(sum / static_cast<double>(series["load"].size()), 2e6 / (0.1 * 22e6), 1e-3);
  EXPECT_EQ(page["runs"][0]["verdict"]["bound"], "bandwidth-bound");
  EXPECT_EQ(page["collective"]["candidates"][1]["chosen"], true);
}

// A ring of 64 chips, every chip sending to the next at once: with 4 chips allowed, the
// timeline has those 4 chips' resources only, and with 10 slices allowed, merges; the table
// and figures still count all 64 chips.
TEST(CollectivePage, BigFabricsAreAggregated) {
  const Topology t = topologyOf(grid({ring("x", 64)}));
  Plan plan(t, 1);
  for (int c = 0; c < 64; ++c) {
    for (int k = 0; k < 4; ++k) {
      plan.transfer(c, (c + 1) % 64, 1e5, {});
    }
  }
  const PlanTiming timing = timed(plan);
  CollectivePageOptions options;
  options.maxChips = 4;
  options.maxSlices = 10;
  PageSummary summary;
  const nlohmann::ordered_json page = pageOf(plan, timing, options, &summary);
  EXPECT_EQ(summary.chipsShown, 4U);
  EXPECT_EQ(summary.chipsUsed, 64U);
  std::set<std::int64_t> chips;
  for (const auto& track : page["tracks"]) {
    chips.insert(track["chip"].get<std::int64_t>());
  }
  EXPECT_EQ(chips.size(), 4U);
  EXPECT_GT(summary.aggregated, 0U);
  EXPECT_LT(summary.slices, page["slices"]["total_records"].get<std::size_t>());
  EXPECT_EQ(page["resources"]["used"], 128);  // 64 links and 64 HBMs
  double merged = 0;
  for (const auto& c : page["slices"]["count"]) {
    merged += c.get<double>();
  }
  EXPECT_EQ(merged, page["slices"]["total_records"].get<double>());
}

TEST(CollectivePage, SameInputsSameBytes) {
  const Topology t = topologyOf(grid({ring("x", 4), ring("y", 4)}));
  Plan plan(t, 1);
  for (int c = 0; c < 16; ++c) {
    plan.transfer(c, (c + 5) % 16, 3e5, {});
  }
  const PlanTiming timing = timed(plan);
  EXPECT_EQ(pageOf(plan, timing, {}, nullptr).dump(), pageOf(plan, timing, {}, nullptr).dump());
}

TEST(CollectivePage, MissingPartsAreReported) {
  CollectiveRun run;
  const Result<nlohmann::ordered_json> page = makeCollectivePageData(run);
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(page.status().code(), ErrorCode::kInvalidArgument);
}

TEST(CollectiveReport, WritesOneSelfContainedPage) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  const Plan plan = chain(t, 2, 1e6);
  const PlanTiming timing = timed(plan);
  fabric::CollectiveRequest request;
  request.group = {0, 1, 2};
  request.bytes = 1'000'000;
  const fabric::CollectiveResult result = resultOf(plan, timing);
  std::ostringstream out;
  const Status s = writeCollectiveReport(out, {"test", &request, &result, &plan, &timing});
  ASSERT_TRUE(s.ok()) << s.toString();
  const std::string html = out.str();
  EXPECT_NE(html.find("\"kind\":\"collective\""), std::string::npos);
  EXPECT_NE(html.find("<title>trnsim collective report</title>"), std::string::npos);
  EXPECT_NE(html.find("echarts"), std::string::npos);  // the script is inside, not linked
  EXPECT_EQ(html.find("<script src"), std::string::npos);
}

}  // namespace
}  // namespace trn::profile
