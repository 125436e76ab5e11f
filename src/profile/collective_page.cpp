#include "trn/profile/collective_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <unordered_map>

#include "trn/profile/collective_verdict.h"
#include "trn/profile/slice_groups.h"

namespace trn::profile {
namespace {

using fabric::OpId;
using fabric::PlanOp;
using fabric::ResourceId;
using Json = nlohmann::ordered_json;

/// Nanoseconds, with the picoseconds as 3 decimals.
double ns3(std::int64_t ps) { return static_cast<double>(ps) / 1e3; }

/// A fraction with 4 decimals (the page shows 0.1 %).
double rounded(double fraction) { return std::round(fraction * 1e4) / 1e4; }

/// One operation on one lane of one resource.
struct OpSlice {
  std::int32_t track = 0;
  OpId op = 0;
  std::int64_t start = 0;
  std::int64_t end = 0;
};

class CollectiveBuilder {
 public:
  CollectiveBuilder(const CollectiveRun& run, const CollectivePageOptions& options)
      : run_(run), options_(options), plan_(*run.plan), timing_(*run.timing),
        topology_(run.plan->topology()), ops_(run.plan->ops()) {}

  Result<Json> build(PageSummary* summary) {
    TRN_ASSIGN_OR_RETURN(figures_, collectiveFigures(plan_, timing_));
    makespan_ = figures_.makespan;
    const Verdict verdict = decideCollectiveVerdict(figures_);
    summary_.verdicts.emplace_back(runName(), verdict.headline);
    onPath_.insert(figures_.path.ops.begin(), figures_.path.ops.end());
    measureResources();
    Json page{{"kind", "collective"},
              {"title", options_.title},
              {"chip", run_.system},
              {"generator", "trnsim"},
              {"total_ns", ns3(makespan_)}};
    chooseChips();
    page["collective"] = collectiveJson();
    page["runs"] = Json::array({Json{{"name", runName()},
                                     {"total_ns", ns3(makespan_)},
                                     {"verdict", Json{{"bound", boundName(verdict.bound)},
                                                      {"subject", verdict.subject},
                                                      {"headline", verdict.headline},
                                                      {"evidence", verdict.evidence},
                                                      {"remedies", verdict.remedies}}},
                                     {"path", pathJson()}}});
    collectSlices();
    page["tracks"] = tracks_;
    page["slices"] = slicesJson();
    page["ops"] = std::move(opRows_);
    page["arrows"] = Json::array();
    page["utilisation"] = utilisationJson();
    page["resources"] = resourcesJson();
    if (summary != nullptr) {
      *summary = summary_;
    }
    return page;
  }

 private:
  std::string runName() const {
    return fmt::format("{} of {} B over {} ranks ({})", fabric::opName(run_.request->op),
                       run_.request->bytes, run_.request->group.size(),
                       fabric::algorithmName(run_.result->algorithm));
  }

  /// When operation `id`'s last byte left.
  std::int64_t dataEnd(OpId id) const {
    return std::max(timing_.opStart[id], timing_.opEnd[id] - ops_[id].endDelay);
  }

  bool streams(OpId id) const {
    return ops_[id].resourceCount > 0 && ops_[id].bytes > 0;
  }

  /// Each resource's load and the time at least one operation streamed through it.
  void measureResources() {
    const std::size_t n = topology_.resourceCount();
    load_.assign(n, 0.0);
    busy_.assign(n, 0);
    for (ResourceId r = 0; r < n; ++r) {
      load_[r] = guardedRatio(timing_.resourceBytes[r],
                              topology_.bandwidth(r) * static_cast<double>(makespan_));
    }
    order_.resize(ops_.size());
    std::iota(order_.begin(), order_.end(), 0);
    std::stable_sort(order_.begin(), order_.end(), [&](OpId a, OpId b) {
      return timing_.opStart[a] < timing_.opStart[b];
    });
    // Per resource the stretch being merged: intervals arrive in start order.
    std::vector<std::pair<std::int64_t, std::int64_t>> open(n, {-1, -1});
    for (const OpId id : order_) {
      if (!streams(id)) {
        continue;
      }
      const std::int64_t s = timing_.opStart[id];
      const std::int64_t e = dataEnd(id);
      for (const ResourceId r : plan_.resourcesOf(ops_[id])) {
        auto& [from, to] = open[r];
        if (from < 0 || s > to) {
          busy_[r] += from < 0 ? 0 : to - from;
          from = s;
          to = e;
        } else {
          to = std::max(to, e);
        }
      }
    }
    for (ResourceId r = 0; r < n; ++r) {
      if (open[r].first >= 0) {
        busy_[r] += open[r].second - open[r].first;
      }
    }
    for (ResourceId r = 0; r < n; ++r) {
      if (timing_.resourceBytes[r] > 0) {
        used_.push_back(r);
      }
    }
    byLoad_ = used_;
    std::stable_sort(byLoad_.begin(), byLoad_.end(),
                     [&](ResourceId a, ResourceId b) { return load_[a] > load_[b]; });
  }

  Json collectiveJson() const {
    Json candidates = Json::array();
    for (const fabric::Candidate& c : run_.result->candidates) {
      candidates.push_back(
          Json{{"algorithm", fabric::algorithmName(c.algorithm)},
               {"time_ns", c.picoseconds ? Json(ns3(*c.picoseconds)) : Json(nullptr)},
               {"messages", c.messages},
               {"skipped", c.skipped},
               {"chosen", c.algorithm == run_.result->algorithm && c.picoseconds.has_value()}});
    }
    return Json{{"op", fabric::opName(run_.request->op)},
                {"bytes", run_.request->bytes},
                {"ranks", run_.request->group.size()},
                {"chips", topology_.chips()},
                {"algorithm", fabric::algorithmName(run_.result->algorithm)},
                {"operations", ops_.size()},
                {"messages", plan_.messages()},
                {"chips_used", summary_.chipsUsed},
                {"chips_shown", summary_.chipsShown},
                {"candidates", std::move(candidates)}};
  }

  Json pathJson() const {
    const CollectivePath& p = figures_.path;
    return Json{{"length_ns", ns3(p.length)},   {"data_ns", ns3(p.data)},
                {"latency_ns", ns3(p.latency)}, {"overhead_ns", ns3(p.overhead)},
                {"waiting_ns", ns3(p.waiting)}, {"operations", p.ops.size()},
                {"messages", p.messages},       {"hops", p.hops}};
  }

  /// The chips on the timeline: all of them when few, else those of the busiest resources.
  void chooseChips() {
    std::set<std::int64_t> all;
    for (const ResourceId r : used_) {
      all.insert(topology_.chipOf(r));
    }
    if (all.size() <= options_.maxChips) {
      chips_ = all;
    } else {
      for (const ResourceId r : byLoad_) {
        if (chips_.size() >= options_.maxChips) {
          break;
        }
        chips_.insert(topology_.chipOf(r));
      }
    }
    summary_.chipsShown = chips_.size();
    summary_.chipsUsed = all.size();
  }

  /// A resource's track name without its chip ("chip 3 x+" -> "x+").
  std::string shortName(ResourceId r) const {
    const std::string full = topology_.resourceName(r);
    const std::string prefix = fmt::format("chip {} ", topology_.chipOf(r));
    return full.starts_with(prefix) ? full.substr(prefix.size()) : full;
  }

  /// Lanes per resource (overlapping operations on separate lanes, at most maxLanes), then the
  /// tracks: per chip shown, its resources in order, each lane a track.
  void collectSlices() {
    std::map<ResourceId, std::vector<std::int64_t>> laneEnds;
    std::vector<std::tuple<ResourceId, std::size_t, OpId>> placed;
    for (const OpId id : order_) {
      if (!streams(id)) {
        continue;
      }
      for (const ResourceId r : plan_.resourcesOf(ops_[id])) {
        if (!chips_.contains(topology_.chipOf(r))) {
          continue;
        }
        std::vector<std::int64_t>& lanes = laneEnds[r];
        std::size_t lane = 0;
        while (lane < lanes.size() && lanes[lane] > timing_.opStart[id]) {
          ++lane;
        }
        const std::size_t cap = std::max<std::size_t>(1, options_.maxLanes);
        if (lane >= cap) {
          lane = cap - 1;
        }
        if (lane == lanes.size()) {
          lanes.push_back(timing_.opEnd[id]);
        } else {
          lanes[lane] = std::max(lanes[lane], timing_.opEnd[id]);
        }
        placed.emplace_back(r, lane, id);
      }
    }
    std::map<std::pair<ResourceId, std::size_t>, std::int32_t> trackOf;
    std::map<std::pair<std::int64_t, ResourceId>, std::size_t> byChip;
    for (const auto& [r, lanes] : laneEnds) {
      byChip[{topology_.chipOf(r), r}] = lanes.size();
    }
    for (const auto& [key, lanes] : byChip) {
      const auto& [chip, r] = key;
      const std::string cls = resourceClass(topology_, r);
      for (std::size_t lane = 0; lane < lanes; ++lane) {
        trackOf[{r, lane}] = static_cast<std::int32_t>(tracks_.size());
        const bool last = lane + 1 == options_.maxLanes;
        tracks_.push_back(Json{
            {"name", fmt::format("chip {} \u00b7 {}{}", chip, shortName(r),
                                 lane == 0 ? std::string()
                                           : fmt::format(" #{}{}", lane + 1, last ? "+" : ""))},
            {"kind", topology_.isLink(r) ? "link" : "hbm"},
            {"class", cls},
            {"chip", chip}});
      }
    }
    for (const auto& [r, lane, id] : placed) {
      slices_.push_back({trackOf.at({r, lane}), id, timing_.opStart[id], timing_.opEnd[id]});
    }
    std::stable_sort(slices_.begin(), slices_.end(), [](const OpSlice& a, const OpSlice& b) {
      return std::tie(a.track, a.start) < std::tie(b.track, b.start);
    });
  }

  /// "chip 0 -> chip 1", "reduce on chip 2", from the operation's resources (a transfer holds
  /// its sender's HBM first and its receiver's last).
  std::tuple<std::string, std::int64_t, std::int64_t> describe(OpId id) const {
    const std::span<const ResourceId> rs = plan_.resourcesOf(ops_[id]);
    const std::int64_t from = topology_.chipOf(rs.front());
    const std::int64_t to = topology_.chipOf(rs.back());
    bool crosses = false;
    for (const ResourceId r : rs) {
      crosses = crosses || topology_.isLink(r);
    }
    if (crosses) {
      return {fmt::format("chip {} -> chip {}", from, to), from, to};
    }
    if (ops_[id].move != fabric::kNoMove &&
        plan_.moves()[ops_[id].move].kind == fabric::DataMove::Kind::kReduce) {
      return {fmt::format("reduce on chip {}", from), from, to};
    }
    return {fmt::format("on chip {}", from), from, to};
  }

  /// Row of the operation table for `id`.
  std::int64_t opRow(OpId id) {
    const auto found = opRowOf_.find(id);
    if (found != opRowOf_.end()) {
      return found->second;
    }
    const auto [label, from, to] = describe(id);
    std::string route;
    for (const ResourceId r : plan_.resourcesOf(ops_[id])) {
      if (topology_.isLink(r)) {
        route += (route.empty() ? "" : ", ") + topology_.resourceName(r);
      }
    }
    opRows_.push_back(Json::array({label, ops_[id].bytes, from, to, route, ns3(timing_.opStart[id]),
                                   ns3(dataEnd(id)), ns3(timing_.opEnd[id]),
                                   ns3(ops_[id].startDelay), id}));
    const auto row = static_cast<std::int64_t>(opRows_.size() - 1);
    opRowOf_.emplace(id, row);
    return row;
  }

  Json slicesJson() {
    std::vector<TimedSlice> timed;
    timed.reserve(slices_.size());
    for (const OpSlice& s : slices_) {
      timed.push_back({s.track, s.start, s.end});
    }
    std::vector<std::size_t> groups =
        groupSlices(timed, makespan_, tracks_.size(), options_.maxSlices);
    groups.push_back(slices_.size());
    Json track = Json::array(), start = Json::array(), dur = Json::array(), op = Json::array(),
         count = Json::array(), bytes = Json::array(), critical = Json::array();
    for (std::size_t g = 0; g + 1 < groups.size(); ++g) {
      const std::size_t i = groups[g];
      const std::size_t n = groups[g + 1] - i;
      std::int64_t end = slices_[i].end;
      double moved = 0;
      bool onPath = false;
      for (std::size_t k = i; k < i + n; ++k) {
        end = std::max(end, slices_[k].end);
        moved += ops_[slices_[k].op].bytes;
        onPath = onPath || onPath_.contains(slices_[k].op);
      }
      track.push_back(slices_[i].track);
      start.push_back(ns3(slices_[i].start));
      dur.push_back(ns3(end - slices_[i].start));
      op.push_back(n == 1 ? opRow(slices_[i].op) : -1);
      count.push_back(n);
      bytes.push_back(moved);
      critical.push_back(onPath ? 1 : 0);
      ++summary_.slices;
      summary_.aggregated += n > 1 ? 1 : 0;
    }
    return Json{{"track", track}, {"start", start}, {"dur", dur},
                {"op", op},       {"count", count}, {"bytes", bytes},
                {"critical", critical}, {"total_records", slices_.size()}};
  }

  /// The busiest links' and the busiest HBM's load per stretch of the run: bytes spread evenly
  /// over each operation's streaming time, against the resource's bandwidth.
  Json utilisationJson() const {
    std::vector<ResourceId> shown;
    std::int64_t hbm = -1;
    for (const ResourceId r : byLoad_) {
      if (topology_.isLink(r) && shown.size() < options_.busiestLinks) {
        shown.push_back(r);
      } else if (!topology_.isLink(r) && hbm < 0) {
        hbm = r;
      }
    }
    if (hbm >= 0) {
      shown.push_back(static_cast<ResourceId>(hbm));
    }
    const std::size_t bins = std::max<std::size_t>(1, options_.bins);
    const double width =
        std::max(1.0, static_cast<double>(makespan_) / static_cast<double>(bins));
    std::unordered_map<ResourceId, std::vector<double>> bytes;
    for (const ResourceId r : shown) {
      bytes[r].assign(bins, 0.0);
    }
    for (OpId id = 0; id < ops_.size(); ++id) {
      if (!streams(id)) {
        continue;
      }
      const auto s = static_cast<double>(timing_.opStart[id]);
      const double e = std::max(s + 1, static_cast<double>(dataEnd(id)));
      const double rate = ops_[id].bytes / (e - s);
      for (const ResourceId r : plan_.resourcesOf(ops_[id])) {
        const auto found = bytes.find(r);
        if (found == bytes.end()) {
          continue;
        }
        for (auto b = static_cast<std::size_t>(s / width);
             b < bins && static_cast<double>(b) * width < e; ++b) {
          const double lo = std::max(s, static_cast<double>(b) * width);
          const double hi = std::min(e, static_cast<double>(b + 1) * width);
          found->second[b] += rate * std::max(0.0, hi - lo);
        }
      }
    }
    Json series = Json::array();
    for (const ResourceId r : shown) {
      Json load = Json::array();
      for (const double b : bytes.at(r)) {
        load.push_back(rounded(b / (width * topology_.bandwidth(r))));
      }
      series.push_back(Json{{"name", topology_.resourceName(r)},
                            {"class", resourceClass(topology_, r)},
                            {"load", std::move(load)}});
    }
    return Json{{"bin_ns", width / 1e3}, {"series", std::move(series)}};
  }

  /// The busiest resources one by one and every class in summary.
  Json resourcesJson() const {
    Json rows = Json::array();
    for (std::size_t i = 0; i < byLoad_.size() && i < options_.tableRows; ++i) {
      const ResourceId r = byLoad_[i];
      rows.push_back(Json{{"name", topology_.resourceName(r)},
                          {"class", resourceClass(topology_, r)},
                          {"bytes", timing_.resourceBytes[r]},
                          {"load", rounded(load_[r])},
                          {"busy", rounded(guardedRatio(static_cast<double>(busy_[r]),
                                                        static_cast<double>(makespan_)))},
                          {"gbps", topology_.bandwidth(r) * 1e3}});
    }
    struct Sum {
      std::int64_t count = 0;
      double load = 0, maxLoad = 0, busy = 0, maxBusy = 0, gbps = 0;
    };
    std::map<std::string, Sum> sums;
    for (const ResourceId r : used_) {
      Sum& s = sums[resourceClass(topology_, r)];
      const double busy =
          guardedRatio(static_cast<double>(busy_[r]), static_cast<double>(makespan_));
      ++s.count;
      s.load += load_[r];
      s.maxLoad = std::max(s.maxLoad, load_[r]);
      s.busy += busy;
      s.maxBusy = std::max(s.maxBusy, busy);
      s.gbps = topology_.bandwidth(r) * 1e3;
    }
    Json classes = Json::array();
    for (const auto& [name, s] : sums) {
      const auto n = static_cast<double>(s.count);
      classes.push_back(Json{{"name", name},
                             {"resources", s.count},
                             {"gbps", s.gbps},
                             {"mean_load", rounded(s.load / n)},
                             {"max_load", rounded(s.maxLoad)},
                             {"mean_busy", rounded(s.busy / n)},
                             {"max_busy", rounded(s.maxBusy)}});
    }
    return Json{{"rows", std::move(rows)},
                {"used", used_.size()},
                {"classes", std::move(classes)}};
  }

  const CollectiveRun& run_;
  const CollectivePageOptions& options_;
  const fabric::Plan& plan_;
  const fabric::PlanTiming& timing_;
  const fabric::Topology& topology_;
  const std::vector<PlanOp>& ops_;
  CollectiveFigures figures_;
  std::int64_t makespan_ = 0;
  std::set<OpId> onPath_;
  std::vector<double> load_;
  std::vector<std::int64_t> busy_;
  std::vector<OpId> order_;
  std::vector<ResourceId> used_;
  std::vector<ResourceId> byLoad_;
  std::set<std::int64_t> chips_;
  Json tracks_ = Json::array();
  std::vector<OpSlice> slices_;
  Json opRows_ = Json::array();
  std::unordered_map<OpId, std::int64_t> opRowOf_;
  PageSummary summary_;
};

}  // namespace

Result<nlohmann::ordered_json> makeCollectivePageData(const CollectiveRun& run,
                                                      const CollectivePageOptions& options,
                                                      PageSummary* summary) {
  if (run.request == nullptr || run.result == nullptr || run.plan == nullptr ||
      run.timing == nullptr) {
    return invalidArgument("a collective report needs the request, result, plan and timing");
  }
  if (run.timing->opStart.size() != run.plan->ops().size() ||
      run.timing->resourceBytes.size() != run.plan->topology().resourceCount()) {
    return invalidArgument(fmt::format(
        "the timing ({} operations, {} resources) does not belong to the plan ({}, {})",
        run.timing->opStart.size(), run.timing->resourceBytes.size(), run.plan->ops().size(),
        run.plan->topology().resourceCount()));
  }
  return CollectiveBuilder(run, options).build(summary);
}

}  // namespace trn::profile
