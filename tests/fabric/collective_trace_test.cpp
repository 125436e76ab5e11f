// The collective trace: hand-derived times of a transfer on its link's track, and overlapping
// transfers on one link going to separate lanes.
#include "trn/fabric/collective_trace.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "fabric_fixture.h"

namespace trn::fabric {
namespace {

using testing::grid;
using testing::ring;
using testing::topologyOf;

nlohmann::json traceOf(const Plan& plan, const CollectiveRequest& request) {
  const Result<PlanTiming> timing = simulate(plan);
  EXPECT_TRUE(timing.ok()) << timing.status().toString();
  std::ostringstream out;
  const Status s = writeCollectiveTrace(out, plan, *timing, request, Algorithm::kMesh);
  EXPECT_TRUE(s.ok()) << s.toString();
  return nlohmann::json::parse(out.str());
}

/// The X events on the track named `track` of chip `pid`.
std::vector<nlohmann::json> eventsOn(const nlohmann::json& trace, int pid,
                                     const std::string& track) {
  int tid = -1;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == pid &&
        e["args"]["name"] == track) {
      tid = e["tid"];
    }
  }
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["pid"] == pid && e["tid"] == tid) {
      out.push_back(e);
    }
  }
  return out;
}

CollectiveRequest pairOf(std::int64_t bytes) {
  CollectiveRequest r;
  r.op = CollectiveOp::kPermute;
  r.group = {0, 1};
  r.bytes = bytes;
  r.elementBytes = 1;
  return r;
}

// 1 MB over a 100 GB/s link: 10 us of bytes, then 1 us of hop latency.
TEST(CollectiveTrace, ATransferSitsOnItsLinkFromFirstByteToEnd) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  Plan plan(t, 1);
  plan.copy(0, 1, bufferRange(0, 1'000'000), bufferRange(0, 1'000'000), {});
  const nlohmann::json trace = traceOf(plan, pairOf(1'000'000));
  const auto onLink = eventsOn(trace, 0, "x+");
  ASSERT_EQ(onLink.size(), 1U);
  EXPECT_EQ(onLink[0]["ts"].get<double>(), 0.0);
  EXPECT_EQ(onLink[0]["dur"].get<double>(), 11.0);
  EXPECT_EQ(onLink[0]["name"], "chip 0 -> chip 1");
  EXPECT_EQ(eventsOn(trace, 1, "HBM").size(), 1U);
  EXPECT_EQ(trace["otherData"]["makespan_ps"], 11'000'000);
}

// Chip 0 sends to 1 and 2 (through 1) at once: both hold link 0 x+ and share it, so the second
// goes to a second lane of that link.
TEST(CollectiveTrace, TransfersSharingALinkGoToSeparateLanes) {
  const Topology t = topologyOf(grid({ring("x", 4)}));
  Plan plan(t, 1);
  plan.copy(0, 1, bufferRange(0, 1'000'000), bufferRange(0, 1'000'000), {});
  plan.copy(0, 2, bufferRange(0, 1'000'000), bufferRange(0, 1'000'000), {}, 1);
  const nlohmann::json trace = traceOf(plan, pairOf(1'000'000));
  EXPECT_EQ(eventsOn(trace, 0, "x+").size(), 1U);
  EXPECT_EQ(eventsOn(trace, 0, "x+ #2").size(), 1U);
  EXPECT_EQ(eventsOn(trace, 1, "x+").size(), 1U);  // the second hop of the message to chip 2
  // Sharing the first link halves both rates: 20 us of bytes, plus one or two hops.
  EXPECT_EQ(eventsOn(trace, 0, "x+")[0]["dur"].get<double>(), 21.0);
  EXPECT_EQ(eventsOn(trace, 0, "x+ #2")[0]["dur"].get<double>(), 22.0);
}

// Chip 0 sends 1 MB to each of its 4 neighbours with 2 collective cores of 0.05 byte/ps each
// (concurrent_test's hand-derived case): two streams hold the cores from 0 to 20 us (their last
// byte), the other two from 20 to 40 us; two core tracks of two events each, and no third.
TEST(CollectiveTrace, EachCollectiveCoreIsATrackOfTheStreamsItIssued) {
  const Topology t = topologyOf(grid({ring("x", 4), ring("y", 4)}),
                                testing::chipWithCollectiveCores(2, 2, 50'000'000'000));
  Plan plan(t);
  for (const std::int64_t to : {1, 3, 4, 12}) {
    plan.transfer(0, to, 1e6, {});
  }
  const nlohmann::json trace = traceOf(plan, pairOf(1'000'000));
  for (const char* track : {"collective core 1", "collective core 2"}) {
    const auto held = eventsOn(trace, 0, track);
    ASSERT_EQ(held.size(), 2U) << track;
    EXPECT_EQ(held[0]["ts"].get<double>(), 0.0) << track;
    EXPECT_EQ(held[0]["dur"].get<double>(), 20.0) << track;
    EXPECT_EQ(held[1]["ts"].get<double>(), 20.0) << track;
    EXPECT_EQ(held[1]["dur"].get<double>(), 20.0) << track;
  }
  EXPECT_TRUE(eventsOn(trace, 0, "collective core 3").empty());
  EXPECT_TRUE(eventsOn(trace, 1, "collective core 1").empty());  // chip 1 issues nothing
}

}  // namespace
}  // namespace trn::fabric
