#include "trn/profile/collective_verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

namespace trn::profile {
namespace {

std::string percent(double fraction) { return fmt::format("{:.1f} %", fraction * 100.0); }

std::string duration(std::int64_t ps) { return formatDuration(Picoseconds(ps)); }

double shareOf(std::int64_t part, std::int64_t whole) {
  return guardedRatio(static_cast<double>(part), static_cast<double>(whole));
}

/// "neuronlink links" or "HBM".
std::string classLabel(const ResourceClassLoad& c) {
  return c.link ? c.name + " links" : c.name;
}

void bandwidth(Verdict& v, const CollectiveFigures& f, const ResourceClassLoad& c, bool onPath) {
  v.bound = Bound::kBandwidth;
  v.subject = classLabel(c);
  v.headline = fmt::format("bandwidth-bound on {}: the busiest, {}, carried {} of what it can",
                           v.subject, c.busiestName, percent(c.busiestLoad));
  if (onPath) {
    v.headline += fmt::format(
        " over the run, and {} of the critical path streams at their rate while the rest of the "
        "fabric waits",
        percent(shareOf(c.pathData, f.makespan)));
  }
  if (c.link) {
    v.remedies = {
        "use more links at once: an algorithm that drives every dimension and both directions "
        "(torus, bidirectional ring) instead of one ring",
        "move fewer bytes over the slow class: reduce within the node first (hierarchical), "
        "send bf16 or fp8 rather than fp32",
        "overlap the collective with compute (bucketed gradients), so its time hides"};
  } else {
    v.remedies = {
        "touch HBM fewer times: fuse the reduction with the receive instead of staging copies",
        "spread the traffic over more chips' HBM (more ranks, or a layout that does not "
        "funnel through one chip)",
        "narrower data types halve the bytes read and written"};
  }
}

void latency(Verdict& v, const CollectiveFigures& f) {
  const CollectivePath& p = f.path;
  v.bound = Bound::kLatency;
  const bool hops = p.latency >= p.overhead;
  v.subject = hops ? "per-hop latency" : "per-message overheads";
  v.headline = fmt::format(
      "latency-bound by {}: {} of the critical path is hop latency ({} hops, {} each on "
      "average) and {} message overheads ({} messages, {} each), against {} streaming",
      v.subject, percent(shareOf(p.latency, f.makespan)), p.hops, duration(f.hopLatency),
      percent(shareOf(p.overhead, f.makespan)), p.messages, duration(f.messageOverhead),
      percent(shareOf(p.data, f.makespan)));
  v.remedies = {
      "fewer steps on the path: recursive halving and doubling (log2 p steps) or a mesh (one "
      "step) instead of a ring's 2(p - 1) for small messages",
      "batch small collectives into one larger message (bucket gradients)",
      "keep traffic on the fast, short links: within the node first, then across nodes"};
}

}  // namespace

std::string resourceClass(const fabric::Topology& topology, fabric::ResourceId r) {
  const std::int64_t chip = topology.chipOf(r);
  if (!topology.isLink(r) && r == topology.hbm(chip)) {
    return "HBM";
  }
  std::string name = topology.resourceName(r);
  const std::string prefix = fmt::format("chip {} ", chip);
  if (name.starts_with(prefix)) {
    name = name.substr(prefix.size());
  }
  if (topology.isLink(r)) {
    for (const spec::Dimension& d : topology.dimensions()) {
      for (const char* side : {"+", "-", " up", " down"}) {
        if (name == d.name + side) {
          return d.link;
        }
      }
    }
  }
  return name;
}

Result<CollectiveFigures> collectiveFigures(const fabric::Plan& plan,
                                            const fabric::PlanTiming& timing) {
  CollectiveFigures f;
  TRN_ASSIGN_OR_RETURN(f.path, findCollectivePath(plan, timing));
  f.makespan = f.path.length;
  const fabric::Topology& topology = plan.topology();
  if (timing.resourceBytes.size() != topology.resourceCount()) {
    return invalidArgument(fmt::format("the timing has bytes for {} resources but the fabric {}",
                                       timing.resourceBytes.size(), topology.resourceCount()));
  }
  std::map<std::string, std::size_t> index;
  for (fabric::ResourceId r = 0; r < topology.resourceCount(); ++r) {
    if (!(timing.resourceBytes[r] > 0)) {
      continue;
    }
    const std::string name = resourceClass(topology, r);
    auto [it, added] = index.try_emplace(name, f.classes.size());
    if (added) {
      ResourceClassLoad c;
      c.name = name;
      c.link = topology.isLink(r);
      c.bandwidth = topology.bandwidth(r) * 1e12;
      f.classes.push_back(std::move(c));
    }
    ResourceClassLoad& c = f.classes[it->second];
    const double load = guardedRatio(timing.resourceBytes[r],
                                     topology.bandwidth(r) * static_cast<double>(f.makespan));
    ++c.resources;
    c.averageLoad += load;
    if (load > c.busiestLoad) {
      c.busiestLoad = load;
      c.busiest = r;
      c.busiestName = topology.resourceName(r);
    }
  }
  for (ResourceClassLoad& c : f.classes) {
    c.averageLoad /= static_cast<double>(std::max<std::int64_t>(1, c.resources));
  }
  for (const CollectiveSegment& s : f.path.segments) {
    if (s.cause == CollectiveCause::kData) {
      const auto found = index.find(resourceClass(topology, s.bottleneck));
      if (found != index.end()) {
        f.classes[found->second].pathData += s.end - s.start;
      }
    }
  }
  f.hopLatency = f.path.hops > 0 ? f.path.latency / f.path.hops : 0;
  f.messageOverhead = f.path.messages > 0 ? f.path.overhead / f.path.messages : 0;
  return f;
}

Verdict decideCollectiveVerdict(const CollectiveFigures& f) {
  Verdict v;
  if (f.makespan <= 0 || f.classes.empty()) {
    v.headline = "no verdict: the collective moved no bytes";
    return v;
  }
  const auto busiest = std::max_element(
      f.classes.begin(), f.classes.end(),
      [](const ResourceClassLoad& a, const ResourceClassLoad& b) {
        return a.busiestLoad < b.busiestLoad;
      });
  const auto pathClass = std::max_element(
      f.classes.begin(), f.classes.end(),
      [](const ResourceClassLoad& a, const ResourceClassLoad& b) { return a.pathData < b.pathData; });
  const CollectivePath& p = f.path;
  if (busiest->busiestLoad >= kSaturated) {
    bandwidth(v, f, *busiest, false);
  } else if (p.latency + p.overhead > p.data) {
    latency(v, f);
  } else {
    bandwidth(v, f, *pathClass, true);
  }
  for (const ResourceClassLoad& c : f.classes) {
    v.evidence.push_back(fmt::format(
        "{} ({} of them carried bytes, {:.1f} GB/s each): the busiest, {}, loaded {} (bytes over "
        "makespan x bandwidth), {} on average; the critical path streamed at their rate {} of "
        "the time",
        classLabel(c), c.resources, c.bandwidth / 1e9, c.busiestName,
        percent(c.busiestLoad), percent(c.averageLoad), percent(shareOf(c.pathData, f.makespan))));
  }
  v.evidence.push_back(fmt::format(
      "critical path ({}): streaming {}, hop latency {} ({} hops, {} each on average), message "
      "overheads {} ({} messages, {} each), waiting {}; {} operations, {} on one chip's HBM",
      duration(f.makespan), percent(shareOf(p.data, f.makespan)),
      percent(shareOf(p.latency, f.makespan)), p.hops, duration(f.hopLatency),
      percent(shareOf(p.overhead, f.makespan)), p.messages, duration(f.messageOverhead),
      percent(shareOf(p.waiting, f.makespan)), p.ops.size(), p.reductions));
  return v;
}

}  // namespace trn::profile
